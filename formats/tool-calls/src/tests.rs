use agent_apply_sdk::testing::{Ran, Tree, run};

use super::*;

fn tree(files: &[(&str, &str)]) -> Tree {
    files.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
}

fn ok(files: &[(&str, &str)], reply: &str) -> Tree {
    match run(&ToolCalls, &tree(files), reply, &[], &[]).unwrap() {
        Ran::Applied(after) => after,
        Ran::Failed(failures) => panic!("failed: {failures:?}"),
    }
}

fn failed(files: &[(&str, &str)], reply: &str) -> String {
    match run(&ToolCalls, &tree(files), reply, &[], &[]).unwrap() {
        Ran::Applied(after) => panic!("applied: {after:?}"),
        Ran::Failed(failures) => failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n"),
    }
}

fn parsed(reply: &str) -> ParseOutput {
    Plugin::parse(&ToolCalls, reply, &[])
}

#[test]
fn every_shape_and_envelope_is_read() {
    let edit = r#"{"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}"#;
    let args = serde_json::to_string(edit).unwrap();
    for reply in [
        edit.to_string(),
        r#"{"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "x = 2"}"#.to_string(),
        r#"{"filePath": "a.py", "oldString": "x = 1", "newString": "x = 2"}"#.to_string(),
        r#"{"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}"#.to_string(),
        format!(r#"{{"type": "tool_use", "id": "t1", "name": "Edit", "input": {edit}}}"#),
        format!(r#"{{"name": "Edit", "arguments": {args}}}"#),
        format!(r#"{{"type": "function_call", "call_id": "c1", "name": "edit", "arguments": {args}}}"#),
        format!(r#"{{"id": "c1", "type": "function", "function": {{"name": "Edit", "arguments": {args}}}}}"#),
        format!(
            r#"{{"role": "assistant", "tool_calls": [{{"type": "function", "function": {{"name": "Edit", "arguments": {args}}}}}]}}"#
        ),
        format!(
            r#"{{"role": "assistant", "content": [{{"type": "text", "text": "Fixing."}}, {{"type": "tool_use", "name": "Edit", "input": {edit}}}]}}"#
        ),
        format!(
            r#"{{"id": "chatcmpl-1", "choices": [{{"index": 0, "message": {{"role": "assistant", "tool_calls": [{{"type": "function", "function": {{"name": "Edit", "arguments": {args}}}}}]}}}}]}}"#
        ),
        format!("[{edit}]"),
        format!("Sure.\n\n```json\n{edit}\n```\n"),
    ] {
        let out = parsed(&reply);
        assert_eq!(out.edits.len(), 1, "{reply}: {:?}", out.diagnostics);
        assert_eq!(out.edits[0].path, "a.py");
        assert_eq!(ok(&[("a.py", "x = 1\n")], &reply)["a.py"], "x = 2\n", "{reply}");
        assert!(Plugin::detect(&ToolCalls, &reply) > 0.9, "{reply}");
    }
}

#[test]
fn json_lines_compose_in_order_on_one_file() {
    let reply = concat!(
        r#"{"name": "Write", "input": {"file_path": "n.txt", "content": "a\nb\n"}}"#,
        "\n",
        r#"{"name": "Edit", "input": {"file_path": "n.txt", "old_string": "b", "new_string": "c"}}"#,
        "\n",
        r#"{"command": "insert", "path": "n.txt", "insert_line": 0, "insert_text": "top\n"}"#,
        "\n",
    );
    assert_eq!(ok(&[], reply)["n.txt"], "top\na\nc\n");
    let out = parsed(reply);
    assert_eq!(out.edits[1].summary, "Edit: replace 1 line with 1");
}

#[test]
fn absolute_paths_under_the_root_become_relative() {
    assert_eq!(repo_relative("/home/u/repo/src/a.py", Some("/home/u/repo/")), "src/a.py");
    assert_eq!(repo_relative("/home/u/repo/src/a.py", Some("/home/u/repo")), "src/a.py");
    assert_eq!(repo_relative("/home/u/repository/a.py", Some("/home/u/repo")), "/home/u/repository/a.py");
    assert_eq!(repo_relative("/etc/hosts", Some("/home/u/repo")), "/etc/hosts");
    assert_eq!(repo_relative("./src/a.py", Some("/home/u/repo")), "src/a.py");
    assert_eq!(repo_relative("/home/u/repo/a.py", None), "/home/u/repo/a.py");
    let options = [OptionValue { key: REPO_ROOT.into(), value: "/home/u/repo".into() }];
    let reply = r#"[{"file_path": "/home/u/repo/a.py", "content": "x"}, {"file_path": "/etc/hosts", "content": "x"}]"#;
    let out = Plugin::parse(&ToolCalls, reply, &options);
    let paths: Vec<&str> = out.edits.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["a.py", "/etc/hosts"]);
    // Never written by the plugin either, whatever host runs it.
    let refused = failed(&[], r#"{"file_path": "/etc/hosts", "content": "x"}"#);
    assert!(refused.contains("\"/etc/hosts\" is an absolute path; edits must name files relative"), "{refused}");
}

#[test]
fn old_string_must_be_unique_unless_replace_all() {
    let file = "a = 1\nb = 1\na = 1\n";
    let why = failed(&[("f", file)], r#"{"file_path": "f", "old_string": "a = 1", "new_string": "a = 2"}"#);
    assert!(why.contains("ambiguous") && why.contains("at lines 1, 3"), "{why}");
    assert!(why.contains("replace_all"), "{why}");
    let after =
        ok(&[("f", file)], r#"{"file_path": "f", "old_string": "a = 1", "new_string": "a = 2", "replace_all": true}"#);
    assert_eq!(after["f"], "a = 2\nb = 1\na = 2\n");
}

#[test]
fn the_ladder_is_used_only_when_the_exact_text_is_nowhere_and_says_so() {
    let file = "class A:\n    def f(self):\n        return 1\n";
    let reply = r#"{"file_path": "f.py", "old_string": "def f(self):\n    return 1\n", "new_string": "def f(self):\n    return 2\n"}"#;
    let out = Plugin::apply(&ToolCalls, vec![File::new("f.py", file)], parsed(reply).edits, &[]).unwrap();
    let want = "class A:\n    def f(self):\n        return 2\n";
    assert_eq!(out.changes, vec![Change::Write(File::new("f.py", want))]);
    let message = &out.outcomes[0].message;
    assert!(message.contains("NOT an exact match") && message.contains("ignoring indentation"), "{message}");
    let reply = r#"{"file_path": "f.py", "old_string": "return 1", "new_string": "return 3"}"#;
    let out = Plugin::apply(&ToolCalls, vec![File::new("f.py", file)], parsed(reply).edits, &[]).unwrap();
    assert!(out.outcomes[0].message.contains("(exact match)"), "{}", out.outcomes[0].message);
}

#[test]
fn crlf_files_keep_their_endings() {
    let file = "one\r\ntwo\r\nthree\r\n";
    let reply = r#"{"file_path": "c.txt", "old_string": "one\ntwo", "new_string": "one\n1.5\ntwo"}"#;
    assert_eq!(ok(&[("c.txt", file)], reply)["c.txt"], "one\r\n1.5\r\ntwo\r\nthree\r\n");
    let reply = r#"{"file_path": "c.txt", "old_string": "two", "new_string": "two\n2.5"}"#;
    assert_eq!(ok(&[("c.txt", file)], reply)["c.txt"], "one\r\ntwo\r\n2.5\r\nthree\r\n");
    let reply = r#"{"command": "insert", "path": "c.txt", "insert_line": 3, "insert_text": "four\n"}"#;
    assert_eq!(ok(&[("c.txt", file)], reply)["c.txt"], "one\r\ntwo\r\nthree\r\nfour\r\n");
    let reply = r#"{"file_path": "c.txt", "content": "uno\ndos\n"}"#;
    assert_eq!(ok(&[("c.txt", file)], reply)["c.txt"], "uno\r\ndos\r\n");
}

#[test]
fn multi_edit_is_all_or_nothing() {
    let reply = r#"{"file_path": "m", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "b", "new_string": "c"}, {"old_string": "zzz", "new_string": "y"}]}"#;
    let why = failed(&[("m", "a\n")], reply);
    assert!(why.contains("edit 3 of 3 failed, so none of this MultiEdit's edits was applied"), "{why}");
    let reply = r#"{"file_path": "m", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "b", "new_string": "c"}]}"#;
    assert_eq!(ok(&[("m", "a\n")], reply)["m"], "c\n");
}

#[test]
fn creating_and_inserting() {
    let after = ok(&[], r#"{"file_path": "new.py", "old_string": "", "new_string": "x = 1\n"}"#);
    assert_eq!(after["new.py"], "x = 1\n");
    let why = failed(&[("e.py", "y\n")], r#"{"file_path": "e.py", "old_string": "", "new_string": "x\n"}"#);
    assert!(why.contains("already exists and is not empty"), "{why}");
    let why = failed(&[("e.py", "y\n")], r#"{"command": "create", "path": "e.py", "file_text": "x\n"}"#);
    assert!(why.contains("forbidden: ") && why.contains("would overwrite"), "{why}");
    let insert = |line: u64| format!(r#"{{"command": "insert", "path": "i", "insert_line": {line}, "new_str": "N"}}"#);
    assert_eq!(ok(&[("i", "a\nb")], &insert(0))["i"], "N\na\nb");
    assert_eq!(ok(&[("i", "a\nb")], &insert(2))["i"], "a\nb\nN");
    let why = failed(&[("i", "a\nb")], &insert(3));
    assert!(why.contains("out-of-range") && why.contains("has 2 lines"), "{why}");
}

#[test]
fn views_are_no_edits_undo_is_refused_and_shell_calls_are_commands() {
    let out = parsed(
        r#"[{"command": "view", "path": "a.py"}, {"name": "Read", "input": {"file_path": "a.py"}}, {"name": "TodoWrite", "input": {"todos": []}}, {"name": "Bash", "input": {"command": "cargo test"}}]"#,
    );
    assert!(out.edits.is_empty());
    let warnings: Vec<&str> = out.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains("`view` of a.py reads a file; it is not an edit"), "{warnings:?}");
    assert!(out.diagnostics.iter().all(|d| d.severity == Severity::Warning));
    assert_eq!(out.commands[0].command, "cargo test");
    let out = parsed(r#"{"name": "NotebookEdit", "input": {"notebook_path": "a.ipynb", "new_source": "x"}}"#);
    assert_eq!(out.diagnostics[0].severity, Severity::Error, "an edit this format cannot apply is not skipped");
    assert!(out.diagnostics[0].message.contains("looks like an edit"), "{}", out.diagnostics[0].message);
    let out = parsed(r#"{"command": "undo_edit", "path": "a.py"}"#);
    assert_eq!(out.diagnostics[0].severity, Severity::Error);
    assert!(out.diagnostics[0].message.contains("cannot be replayed"));
}

#[test]
fn malformed_calls_say_what_is_wrong() {
    let why = failed(&[], r#"{"name": "Edit", "arguments": "{\"file_path\": \"a\""}"#);
    assert!(why.contains("the arguments of the `Edit` call are not a JSON object"), "{why}");
    let why = failed(&[], r#"{"file_path": "a", "old_string": "x"}"#);
    assert!(why.contains("`new_string` is missing"), "{why}");
    let why = failed(&[], "```json\n{\"file_path\": \"a\", \"old_string\": 1}\n```\n");
    assert!(why.contains("`old_string` must be a string"), "{why}");
    let why = failed(&[], "Here:\n```json\n{\"file_path\": \"a\",\n \"content\" 1}\n```\n");
    assert!(why.contains("reply line 4: the JSON does not parse"), "{why}");
    let why = failed(&[("a", "x\n")], r#"{"file_path": "a", "content": "x\n// ... rest of the file unchanged ...\n"}"#);
    assert!(why.contains("forbidden"), "{why}");
    // Nested deeper than the reader recurses: refused, and said so.
    let deep = format!(
        r#"{{"file_path": "a", "old_string": "x", "new_string": "y", "z": {}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let why = failed(&[("a", "x\n")], &deep);
    assert!(why.contains("reply line 1: the JSON does not parse: recursion limit exceeded"), "{why}");
    // A key that unescapes to no string: the call is refused, and said so.
    let why = failed(&[("a", "x\n")], r#"{"file_path": "a", "old_string": "x", "new_string": "y", "\ud800": 1}"#);
    assert!(why.contains("reply line 1: the JSON cannot be read: invalid escape in a key"), "{why}");
    // Of a key written twice, the last counts.
    let twice = r#"{"file_path": "a", "old_string": "q", "old_string": "x", "new_string": "y"}"#;
    assert_eq!(ok(&[("a", "x\n")], twice)["a"], "y\n");
}

#[test]
fn other_formats_are_not_taken_for_tool_calls() {
    let hashline = "```json\n{\"path\": \"a.py\", \"edits\": [{\"set_line\": {\"anchor\": \"1:ab\", \"new_text\": \"x\"}}]}\n```\n";
    let ops = "```json\n[{\"targetFile\": \"a\", \"operation\": {\"type\": \"append\", \"content\": \"x\"}}]\n```\n";
    let package = "package.json\n```json\n{\"name\": \"x\", \"version\": \"1.0.0\"}\n```\n";
    let broken = "Run this command after:\n```json\n[{\"targetFile\": \"a\",}]\n```\n";
    for reply in [hashline, ops, package, broken, "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"] {
        assert_eq!(Plugin::detect(&ToolCalls, reply), 0.0, "{reply}");
    }
    let view_only = r#"{"command": "view", "path": "a.py"}"#;
    let broken_call = "```json\n{\"file_path\": \"a\", \"old_string\": \"x\",}\n```\n";
    for reply in [view_only, broken_call] {
        assert_eq!(Plugin::detect(&ToolCalls, reply), 0.6, "{reply}");
    }
}

#[test]
fn render_gives_tool_definitions_on_request() {
    let options = [OptionValue { key: RENDER.into(), value: "tool-definitions".into() }];
    let text = Plugin::render(&ToolCalls, &File::new("", ""), &[], &options).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["anthropic"][0]["name"], "Edit");
    assert_eq!(value["anthropic"][1]["input_schema"]["properties"]["edits"]["type"], "array");
    assert_eq!(value["openai"][2]["function"]["name"], "Write");
    assert_eq!(value["openai_responses"][0]["type"], "function");
    let view = Plugin::render(&ToolCalls, &File::new("a", "x\ny\n"), &[], &[]).unwrap();
    assert_eq!(view, "x\ny\n");
}

#[test]
fn the_example_reply_applies_to_the_example_files() {
    let info = Plugin::info(&ToolCalls);
    let files: Vec<(&str, &str)> = info.example_files.iter().map(|f| (f.path.as_str(), f.content.as_str())).collect();
    let after = ok(&files, &info.example_reply);
    assert!(after["src/greet.py"].contains("def greet(name):"));
}

proptest::proptest! {
    #[test]
    fn parse_and_apply_never_panic(reply in "[\\[\\]{}\":, a-z_0-9\\\\\n]{0,120}", content in "[a-z \n]{0,40}") {
        let out = parsed(&reply);
        let files = out.edits.iter().map(|e| File::new(e.path.clone(), content.clone())).collect();
        let _ = Plugin::apply(&ToolCalls, files, out.edits, &[]);
    }
}

/// How the call was placed: the level and what each level of the ladder found.
fn placed(files: &[(&str, &str)], reply: &str) -> (String, Vec<(String, u32)>) {
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&ToolCalls, files, parsed(reply).edits, &[]).unwrap();
    let matched = out.outcomes[0].matched.clone().expect("matched");
    (matched.level, matched.candidates.into_iter().map(|c| (c.level, c.count)).collect())
}

#[test]
fn outcomes_say_which_level_placed_the_call_and_what_each_level_found() {
    let file = [("a.py", "def g():\n    x = 1\n    y = 1\n")];
    let exact = r#"{"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}"#;
    assert_eq!(placed(&file, exact), ("exact".into(), vec![("exact".into(), 1)]));
    let all = r#"{"file_path": "a.py", "old_string": " = 1", "new_string": " = 2", "replace_all": true}"#;
    assert_eq!(placed(&file, all), ("exact".into(), vec![("exact".into(), 2)]));
    // Indented deeper than the file: found only ignoring indentation.
    let deeper = r#"{"file_path": "a.py", "old_string": "        x = 1\n", "new_string": "        x = 2\n"}"#;
    let counts = vec![("exact".into(), 0), ("trailing-whitespace".into(), 0), ("leading-whitespace".into(), 1)];
    assert_eq!(placed(&file, deeper), ("leading-whitespace".into(), counts));
    // MultiEdit: the edit that bent is the one reported.
    let multi = r#"{"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"},
        {"old_string": "    y = 1   \n", "new_string": "    y = 2\n"}]}"#;
    assert_eq!(placed(&file, multi).0, "trailing-whitespace");
    let write = r#"{"file_path": "a.py", "content": "z = 1\n"}"#;
    assert_eq!(placed(&file, write).0, "whole-file");
}

/// The same format applying every call one by one (the default `apply`):
/// what a run placed in one pass must equal.
struct OneByOne;

impl Format for OneByOne {
    type Op = Call;
    fn info(&self) -> FormatInfo {
        Format::info(&ToolCalls)
    }
    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<Call> {
        Format::parse(&ToolCalls, reply, options)
    }
    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<Call>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure> {
        ToolCalls.apply_edit(workspace, edit, options)
    }
}

/// `Edit` calls on `a.py`, one JSON object per line.
fn edit_calls(calls: &[(String, String)]) -> String {
    let call = |(old, new): &(String, String)| serde_json::json!({"name": "Edit", "input": {"file_path": "a.py", "old_string": old, "new_string": new}});
    calls.iter().map(|c| call(c).to_string() + "\n").collect()
}

fn both_ways(content: &str, reply: &str) -> (ApplyOutput, ApplyOutput) {
    let edits = parsed(reply).edits;
    let files = || vec![File::new("a.py", content)];
    let batched = Plugin::apply(&ToolCalls, files(), edits.clone(), &[]).unwrap();
    (batched, Plugin::apply(&OneByOne, files(), edits, &[]).unwrap())
}

#[test]
fn a_run_of_edits_is_placed_in_one_pass_only_when_that_is_the_one_by_one_result() {
    let content: String = (0..40).map(|k| format!("def f{k}(x):\n    return x + {k}\n\n")).collect();
    let calls = |pairs: &[(&str, &str)]| pairs.iter().map(|(o, n)| (o.to_string(), n.to_string())).collect::<Vec<_>>();
    let replacements = |pairs: &[(String, String)]| -> Vec<Replacement> {
        pairs.iter().map(|(old, new)| Replacement { old: old.clone(), new: new.clone(), all: false }).collect()
    };
    let placed = |pairs: &[(String, String)]| {
        let owned = replacements(pairs);
        batch::replace_at_once(&content, &owned.iter().collect::<Vec<_>>()).map(|(_, lines)| lines)
    };
    // Apart and unique: one pass, lines as each call saw the file (the
    // first call grew the file by a line above the second).
    let apart = calls(&[("return x + 3\n", "y = x\n    return y + 3\n"), ("return x + 30\n", "return 0\n")]);
    assert_eq!(placed(&apart), Some(vec![LineRange::new(11, 11), LineRange::new(93, 93)]));
    let (batched, one_by_one) = both_ways(&content, &edit_calls(&apart));
    assert_eq!(batched, one_by_one);
    // The first call writes text the second then finds twice: one by one
    // it is ambiguous, so the run is not taken in one pass.
    let crossing = calls(&[("return x + 3\n", "return x + 39\n"), ("return x + 39\n", "return 1\n")]);
    assert_eq!(placed(&crossing), None);
    // A deletion joins text into a second occurrence.
    let joined = calls(&[("    return x + 4\n", ""), ("x):\n\ndef f5", "x):\ndef f5")]);
    assert_eq!(placed(&joined), None);
    // Too close to tell apart by windows; occurring twice; a short text.
    assert_eq!(placed(&calls(&[("return x + 3\n", "a\n"), ("\n\ndef f4(x)", "\ndef f4(y)")])), None);
    assert_eq!(placed(&calls(&[("return x + 3\n", "a\n"), ("    return", "return")])), None);
    assert_eq!(placed(&calls(&[("return x + 3\n", "a\n"), ("+ 9", "- 9")])), None);
}

proptest::proptest! {
    #[test]
    fn a_run_placed_in_one_pass_equals_the_calls_one_by_one(
        lines in proptest::collection::vec("[ab]{0,3}[ (:]?[a-c]{0,2}", 8..60),
        picks in proptest::collection::vec((0usize..400, 4usize..14, "[abc\n]{0,6}"), 2..8),
    ) {
        let content: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let calls: Vec<(String, String)> = picks
            .iter()
            .map(|(at, len, new)| {
                let at = at % content.len();
                let end = (at + len).min(content.len());
                (content[at..end].to_string(), new.clone())
            })
            .collect();
        let (batched, one_by_one) = both_ways(&content, &edit_calls(&calls));
        proptest::prop_assert_eq!(batched, one_by_one);
    }
}

#[test]
fn texts_kept_as_the_reply_wrote_them_are_the_ones_read() {
    let file = "a\tb \"q\" \u{e9}\nx = 1\n";
    // Escapes, keys that read alike (the last in key order wins, as when
    // read), envelopes, and arguments as a JSON string (kept unescaped).
    let edit =
        r#"{"file_path": "a.py", "oldString": "nope", "old_string": "a\tb \"q\" \u00e9\n", "new_string": "A\\n\n"}"#;
    let args = serde_json::to_string(edit).unwrap();
    for reply in [
        edit.to_string(),
        format!(r#"{{"type": "tool_use", "name": "Edit", "input": {edit}}}"#),
        format!(r#"{{"function": {{"name": "Edit", "arguments": {edit}}}}}"#),
        format!(r#"{{"name": "Edit", "arguments": {args}}}"#),
        r#"{"file_path": "a.py", "edits": [{"old_string": "a\tb \"q\" \u00e9\n", "new_string": "A\\n\n"}]}"#.into(),
        r#"{"command": "str_replace", "path": "a.py", "old_str": "a\tb \"q\" \u00e9\n", "new_str": "A\\n\n"}"#.into(),
    ] {
        assert_eq!(ok(&[("a.py", file)], &reply)["a.py"], "A\\n\nx = 1\n", "{reply}");
    }
    let write = r#"{"file_path": "b.py", "content": "line\u0021\n"}"#;
    assert_eq!(ok(&[], write)["b.py"], "line!\n");
    // A payload whose kept text was altered fails its call, saying why.
    let mut edits = parsed(edit).edits;
    edits[0].payload = edits[0].payload.replace("\\\"A", "\\\"\\\\z");
    let out = Plugin::apply(&ToolCalls, vec![File::new("a.py", file)], edits, &[]).unwrap();
    assert!(out.outcomes[0].message.contains("cannot be read"), "{:?}", out.outcomes[0]);
}

#[test]
fn a_text_that_does_not_unescape_fails_its_call_and_is_not_skipped() {
    // A lone surrogate: valid JSON to scan, no string once unescaped.
    let reply = r#"{"file_path": "a.py", "old_string": "x = 1", "new_string": "\ud800"}"#;
    let out = parsed(reply);
    assert_eq!(out.edits.len(), 1, "read as a call, not skipped: {out:?}");
    let message = failed(&[("a.py", "x = 1\n")], reply);
    assert!(message.contains("cannot be read"), "{message}");
}
