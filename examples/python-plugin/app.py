"""ops-json-py: the ops-json format (a JSON list of {targetFile, operation})
written in Python and built into a wasm component with componentize-py, to
show the plugin contract is language-neutral.

It implements the same operations as examples/ops-json (replace,
insert_after, insert_before, delete, append, prepend, baseVersion), but
matches text exactly (by whole lines) instead of with the Rust SDK's
matching ladder: a Python author gets the contract, not the SDK.
"""

import hashlib
import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types as t

MARKER = '"targetFile"'

INSTRUCTIONS = """Send your edits as a JSON list in a ```json fenced block. Each element edits one file:
  {"targetFile": "path", "operation": {...}, "explanation": "why"}
The operation's "type" is replace {search, replace}, insert_after {anchor, content},
insert_before {anchor, content}, delete {search}, append {content} or prepend {content}.
`search` and `anchor` are whole lines copied exactly from the file and must occur exactly once.
Optionally add "baseVersion": the lowercase hex sha256 of the file as you read it."""

EXAMPLE_REPLY = """```json
[{"targetFile": "src/greet.py",
  "operation": {"type": "replace", "search": "    print(\\"Hello!\\")\\n", "replace": "    print(\\"Hello, world!\\")\\n"},
  "explanation": "greet the world"}]
```
"""


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def span(text, start, end):
    return t.Span(start=len(text[:start].encode()), end=len(text[:end].encode()),
                  first_line=line_of(text, start), last_line=line_of(text, max(start, end - 1)))


def json_blocks(reply):
    """(text, offset) of each ```json-ish fence that mentions targetFile, else the bare JSON."""
    blocks, lines, offset, opened = [], reply.splitlines(keepends=True), 0, None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            if opened is None:
                opened = offset + len(line)
            else:
                body = reply[opened:offset]
                if MARKER in body:
                    blocks.append((body, opened))
                opened = None
        offset += len(line)
    if not blocks and MARKER in reply:
        start = min(i for i in (reply.find("["), reply.find("{")) if i >= 0)
        blocks.append((reply[start:], start))
    return blocks


def split_lines(text):
    return [line.rstrip("\r\n") for line in text.splitlines(keepends=True)]


def find_unique(content, needle):
    """Line index of the one place `needle` (whole lines) sits, or an error outcome's (kind, message)."""
    hay, want = split_lines(content), split_lines(needle)
    if not want:
        return None, (t.FailureKind.MALFORMED, "the text to find is empty")
    # Compare the first line before slicing, so a long block costs one pass over the file.
    starts = [i for i in range(len(hay) - len(want) + 1) if hay[i] == want[0] and hay[i:i + len(want)] == want]
    if not starts:
        return None, (t.FailureKind.NOT_FOUND, "the text to find is not in the file")
    if len(starts) > 1:
        where = ", ".join(str(s + 1) for s in starts)
        return None, (t.FailureKind.AMBIGUOUS, f"the text to find occurs in {len(starts)} places, at lines {where}")
    return (starts[0], starts[0] + len(want)), None


def eol_of(content):
    return "\r\n" if "\r\n" in content else "\n"


def as_lines(text, eol):
    return [line + eol for line in split_lines(text)]


class Plugin(exports.Plugin):
    def info(self):
        return t.FormatInfo(
            name="ops-json-py", aliases=[], version="0.1.0",
            summary="Structured JSON operations, implemented in Python (componentize-py)",
            instructions=INSTRUCTIONS, example_reply=EXAMPLE_REPLY,
            example_files=[t.File(path="src/greet.py", content='def greet():\n    print("Hello!")\n')],
            options=[], detect_hints=[MARKER])

    def detect(self, reply):
        if MARKER not in reply:
            return 0.0
        for text, _ in json_blocks(reply):
            try:
                ops = json.loads(text)
            except ValueError:
                continue
            if isinstance(ops, list) and ops and all(isinstance(o, dict) and "operation" in o for o in ops):
                return 0.95
        return 0.6

    def parse(self, reply, options):
        edits, diagnostics = [], []
        for text, offset in json_blocks(reply):
            try:
                ops = json.loads(text)
            except json.JSONDecodeError as error:
                line = line_of(reply, offset) + error.lineno - 1
                at = offset + error.pos
                diagnostics.append(t.Diagnostic(
                    severity=t.Severity.ERROR,
                    message=f"malformed JSON at reply line {line}, column {error.colno}: {error.msg}",
                    hint="send valid JSON", span=span(reply, at, at + 1), path=None, lines=None))
                continue
            ops = ops if isinstance(ops, list) else ops.get("operations", [ops])
            for index, op in enumerate(ops):
                operation = op.get("operation") if isinstance(op, dict) else None
                if not isinstance(operation, dict) or not isinstance(op.get("targetFile"), str):
                    diagnostics.append(t.Diagnostic(
                        severity=t.Severity.ERROR,
                        message=f"operation {index + 1} needs a targetFile and an operation",
                        hint=None, span=span(reply, offset, offset + len(text)), path=None, lines=None))
                    continue
                payload = {"operation": operation, "baseVersion": op.get("baseVersion")}
                edits.append(t.Edit(path=op["targetFile"], related_paths=[],
                                    span=span(reply, offset, offset + len(text)),
                                    summary=f"{operation.get('type')}: {op.get('explanation', '')}".strip(": "),
                                    payload=json.dumps(payload)))
        return t.ParseOutput(edits=edits, diagnostics=diagnostics, commands=[])

    def apply(self, files, edits, options):
        originals = {f.path: f.content for f in files}
        current = dict(originals)
        outcomes = []
        for index, edit in enumerate(edits):
            try:
                payload = json.loads(edit.payload)
            except ValueError as error:
                raise Err(f"edit {index} has a payload this plugin cannot read: {error}")
            kind, message, lines = self.apply_one(current, originals, edit.path, payload)
            outcomes.append(t.Outcome(
                edit=index, status=t.EditStatus.FAILED if kind else t.EditStatus.APPLIED, kind=kind,
                message=message, hint=None, applied_path=None, lines=lines, matched=None))
        changes = [t.Change_Write(t.File(path=p, content=c)) for p, c in current.items() if originals.get(p) != c]
        return t.ApplyOutput(changes=changes, outcomes=outcomes)

    def apply_one(self, current, originals, path, payload):
        op, base = payload["operation"], payload.get("baseVersion")
        content = current.get(path)
        if base:
            want = base.lower().removeprefix("sha256:")
            have = hashlib.sha256(originals[path].encode()).hexdigest() if path in originals else None
            if have is None or not have.startswith(want):
                return t.FailureKind.STALE, f"conflict: {path} has changed since the operation was written", None
        kind = op.get("type")
        if kind in ("append", "prepend") and content is None:
            current[path] = "".join(as_lines(op.get("content", ""), "\n"))
            return None, f"created {path}", None
        if content is None:
            return t.FailureKind.NOT_FOUND, f"{path} does not exist", None
        eol = eol_of(content)
        lines = content.splitlines(keepends=True)
        if kind == "append":
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += eol
            current[path] = "".join(lines + as_lines(op.get("content", ""), eol))
            return None, f"appended to {path}", None
        if kind == "prepend":
            current[path] = "".join(as_lines(op.get("content", ""), eol) + lines)
            return None, f"prepended to {path}", None
        needle = op.get("search") if kind in ("replace", "delete") else op.get("anchor")
        if kind not in ("replace", "delete", "insert_after", "insert_before") or not isinstance(needle, str):
            return t.FailureKind.MALFORMED, f"unknown operation type {kind!r} or missing text to find", None
        found, failure = find_unique(content, needle)
        if failure:
            return failure[0], failure[1], None
        start, end = found
        if kind == "replace":
            new = as_lines(op.get("replace", ""), eol)
        elif kind == "delete":
            new = []
        elif kind == "insert_after":
            new = lines[start:end] + as_lines(op.get("content", ""), eol)
        else:
            new = as_lines(op.get("content", ""), eol) + lines[start:end]
        if kind in ("replace", "insert_before", "delete") and end == len(lines) and not content.endswith("\n") and new:
            new[-1] = new[-1].rstrip("\r\n")
        current[path] = "".join(lines[:start] + new + lines[end:])
        return None, f"{kind} at lines {start + 1}-{end} of {path}", t.LineRange(start=start + 1, end=end)

    def render(self, file, ranges, options):
        return file.content

    def lint(self, file):
        return []
