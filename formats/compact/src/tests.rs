use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

use super::{Compact, headers_outside_bodies, numbered_view, version_tag};

fn opts(pairs: &[(&str, &str)]) -> Vec<OptionValue> {
    pairs.iter().map(|(k, v)| OptionValue { key: k.to_string(), value: v.to_string() }).collect()
}

fn parse(reply: &str) -> ParseOutput {
    Plugin::parse(&Compact, reply, &[])
}

fn run(files: &[(&str, &str)], reply: &str, options: &[(&str, &str)]) -> (ParseOutput, ApplyOutput) {
    let options = opts(options);
    let parsed = Plugin::parse(&Compact, reply, &options);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&Compact, files, parsed.edits.clone(), &options).unwrap();
    (parsed, out)
}

fn written(out: &ApplyOutput, path: &str) -> String {
    out.changes
        .iter()
        .find_map(|c| match c {
            Change::Write(f) if f.path == path => Some(f.content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not written: {:?} {:?}", out.changes, out.outcomes))
}

fn errors(parsed: &ParseOutput) -> Vec<&Diagnostic> {
    parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect()
}

const TEN: &str = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n";

#[test]
fn fenced_form_with_blank_lines_and_nested_fences() {
    let reply = "Here:\n\ndoc.md:2-3\n````markdown\nA\n\n```sh\nmake\n```\n````\n";
    let (parsed, out) = run(&[("doc.md", "t\nx\ny\nz\n")], reply, &[]);
    assert!(errors(&parsed).is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.edits[0].summary, "replace lines 2-3 with 5 lines");
    assert_eq!(written(&out, "doc.md"), "t\nA\n\n```sh\nmake\n```\nz\n");
    assert_eq!(out.outcomes[0].message, "File 'doc.md' has been updated. It now has 7 lines.");
}

#[test]
fn legacy_form_ends_at_a_blank_line() {
    let reply = "a.txt:2-3\nTWO\nTHREE\nthree and a half\n\nThat's all.\n";
    let (parsed, out) = run(&[("a.txt", TEN)], reply, &[]);
    assert_eq!(parsed.edits.len(), 1);
    assert_eq!(written(&out, "a.txt"), "l1\nTWO\nTHREE\nthree and a half\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n");
}

#[test]
fn legacy_headers_follow_each_other() {
    let reply = "a.txt:1-1\nONE\na.txt:10-10\nTEN\n";
    let (_, out) = run(&[("a.txt", TEN)], reply, &[]);
    assert_eq!(written(&out, "a.txt"), "ONE\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nTEN\n");
}

#[test]
fn legacy_header_without_lines_deletes_with_a_note() {
    let (parsed, out) = run(&[("a.txt", TEN)], "a.txt:2-9\n\nDone.\n", &[]);
    assert!(parsed.diagnostics.iter().any(|d| d.severity == Severity::Note && d.message.contains("deletes")));
    assert_eq!(written(&out, "a.txt"), "l1\nl10\n");
}

#[test]
fn edit_mode_blocks_use_the_file_option_or_a_path_line() {
    let (_, out) = run(&[("a.txt", TEN)], "```text:2:3\nX\n```\n", &[("file", "a.txt")]);
    assert_eq!(written(&out, "a.txt"), "l1\nX\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n");
    let (_, out) = run(&[("b.txt", TEN)], "b.txt\n```4:3\nnew\n```\n", &[("file", "a.txt")]);
    assert!(written(&out, "b.txt").starts_with("l1\nl2\nl3\nnew\nl4\n"));
    let parsed = parse("```python:2:3\nX\n```\n");
    assert!(errors(&parsed)[0].message.contains("no file"), "{:?}", parsed.diagnostics);
}

#[test]
fn insertion_at_start_middle_and_end() {
    let reply = "a.txt:1-0\n```\nTOP\n```\na.txt:6-5\n```\nMID\n```\na.txt:11-10\n```\nEND\n```\n";
    let (_, out) = run(&[("a.txt", TEN)], reply, &[]);
    assert_eq!(written(&out, "a.txt"), "TOP\nl1\nl2\nl3\nl4\nl5\nMID\nl6\nl7\nl8\nl9\nl10\nEND\n");
    assert_eq!(out.outcomes[0].message, "inserted 1 line before line 1 of a.txt, now line 1");
    assert_eq!(out.outcomes[1].message, "inserted 1 line before line 6 of a.txt, now line 7");
    assert_eq!(out.outcomes[2].message, "File 'a.txt' has been updated. It now has 13 lines.");
    assert_eq!(out.outcomes[0].lines, Some(LineRange::new(1, 0)));
}

#[test]
fn deletion_by_an_empty_block() {
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:3-9\n```\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "l1\nl2\nl10\n");
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:1-10\n```\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "");
}

#[test]
fn several_edits_in_original_numbering_any_order() {
    let reply = "a.txt:8-9\n```\nEIGHT\n```\na.txt:2-2\n```\nTWO\nTWO.5\n```\na.txt:5-4\n```\nFOUR.5\n```\n";
    let (_, out) = run(&[("a.txt", TEN)], reply, &[]);
    assert_eq!(written(&out, "a.txt"), "l1\nTWO\nTWO.5\nl3\nl4\nFOUR.5\nl5\nl6\nl7\nEIGHT\nl10\n");
    assert_eq!(out.outcomes[0].message, "replaced lines 8-9 of a.txt (2 lines) with 1 line, now line 10");
    assert_eq!(out.outcomes[2].message, "File 'a.txt' has been updated. It now has 11 lines.");
}

#[test]
fn out_of_range_fails() {
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:9-11\n```\nx\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::OutOfRange));
    assert!(out.outcomes[0].message.contains("has only 10 lines"), "{}", out.outcomes[0].message);
    assert!(out.changes.is_empty());
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:13-12\n```\nx\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::OutOfRange));
}

#[test]
fn overlap_fails_naming_both() {
    let reply = "a.txt:2-5\n```\nx\n```\na.txt:5-6\n```\ny\n```\na.txt:9-9\n```\nz\n```\n";
    let (_, out) = run(&[("a.txt", TEN)], reply, &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Overlap));
    assert_eq!(out.outcomes[1].kind, Some(FailureKind::Overlap));
    assert!(out.outcomes[0].message.contains("edit 1") && out.outcomes[0].message.contains("edit 2"));
    assert!(out.outcomes[1].message.contains("lines 2-5"), "{}", out.outcomes[1].message);
    assert_eq!(out.outcomes[2].status, EditStatus::Applied);
    // An insertion strictly inside a replaced range overlaps; at its edge it does not.
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:3-2\n```\ni\n```\na.txt:2-4\n```\nr\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Overlap));
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:2-1\n```\ni\n```\na.txt:2-4\n```\nr\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "l1\ni\nr\nl5\nl6\nl7\nl8\nl9\nl10\n");
}

#[test]
fn keeps_crlf_bom_and_missing_final_newline() {
    let (_, out) = run(&[("a.txt", "\u{feff}a\r\nb\r\nc")], "a.txt:3-3\n```\nC\nD\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "\u{feff}a\r\nb\r\nC\r\nD");
    let (_, out) = run(&[("a.txt", "a\r\nb\n")], "a.txt:3-2\n```\nc\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "a\r\nb\nc\n", "untouched lines keep their own endings");
    let (_, out) = run(&[("a.txt", "a\nb")], "a.txt:3-2\n```\nc\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "a\nb\nc");
    let (_, out) = run(&[("a.txt", "")], "a.txt:1-0\n```\nx\n```\n", &[]);
    assert_eq!(written(&out, "a.txt"), "x\n");
}

#[test]
fn a_crlf_reply_gives_the_file_its_own_endings() {
    let (_, out) = run(&[("a.txt", "a\nb\n")], "a.txt:1-1\r\n```\r\nA\r\n```\r\n", &[]);
    assert_eq!(written(&out, "a.txt"), "A\nb\n");
}

const CODE: &str = "\
import os

def load(path):
    with open(path) as f:
        return f.read()

def save(path, data):
    with open(path, 'w') as f:
        f.write(data)

def main():
    save('x', load('y'))
";

#[test]
fn shifted_context_is_stale_with_the_fresh_numbers() {
    // The model read the file before two lines were added on top: it means
    // lines 7-9 (def save...) but says 5-7.
    let reply = "app.py:5-7\n```python\ndef save(path, data):\n    # write it\n        f.write(data)\n```\n";
    let (_, out) = run(&[("app.py", CODE)], reply, &[]);
    let o = &out.outcomes[0];
    assert_eq!(o.kind, Some(FailureKind::Stale), "{o:?}");
    assert!(o.message.contains("lines 7 and 9"), "{}", o.message);
    assert!(o.hint.as_deref().unwrap().contains("app.py:7-9"), "{:?}", o.hint);
    assert!(out.changes.is_empty());
    // Stated correctly, it applies.
    let (_, out) = run(&[("app.py", CODE)], &reply.replace("5-7", "7-9"), &[]);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{:?}", out.outcomes[0]);
    // With the guard off, the numbers are taken as written.
    let (_, out) = run(&[("app.py", CODE)], reply, &[("stale-guard", "off")]);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
}

#[test]
fn repeating_the_line_above_or_below_is_stale() {
    let reply = "app.py:4-5\n```python\ndef load(path):\n    return open(path).read()\n```\n";
    let (_, out) = run(&[("app.py", CODE)], reply, &[]);
    let o = &out.outcomes[0];
    assert_eq!(o.kind, Some(FailureKind::Stale), "{o:?}");
    assert!(o.message.contains("begins with line 3"), "{}", o.message);
    assert!(o.hint.as_deref().unwrap().contains("app.py:3-5"));
    let reply = "app.py:11-11\n```python\ndef main(argv):\n    save('x', load('y'))\n```\n";
    let (_, out) = run(&[("app.py", CODE)], reply, &[]);
    assert!(out.outcomes[0].message.contains("ends with line 12"), "{}", out.outcomes[0].message);
    // An insertion that repeats its neighbour.
    let reply = "app.py:4-3\n```python\ndef load(path):\n    # read it all\n```\n";
    let (_, out) = run(&[("app.py", CODE)], reply, &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Stale), "{:?}", out.outcomes[0]);
}

#[test]
fn ordinary_edits_pass_the_guard() {
    for reply in [
        "app.py:3-5\n```python\ndef load(path):\n    return open(path).read()\n```\n",
        "app.py:6-6\n```python\n\ndef nothing():\n    pass\n\n```\n",
        "app.py:12-12\n```python\n    save('x', load('z'))\n```\n",
        "app.py:13-12\n```python\n\nmain()\n```\n",
        "app.py:4-5\n```python\n    with open(path, 'rb') as f:\n        return f.read()\n```\n",
        // Beginning with the blank line above repeats nothing that means anything.
        "app.py:3-3\n```python\n\ndef load(path, mode='r'):\n```\n",
    ] {
        let (_, out) = run(&[("app.py", CODE)], reply, &[]);
        assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{reply}: {:?}", out.outcomes[0]);
    }
}

#[test]
fn one_stale_edit_stops_the_whole_file() {
    let reply = "app.py:1-1\n```python\nimport sys\n```\napp.py:5-7\n```python\ndef save(path, data):\n    x\n        f.write(data)\n```\n";
    let (_, out) = run(&[("app.py", CODE)], reply, &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Stale));
    assert!(out.outcomes[0].message.contains("edit 2"), "{}", out.outcomes[0].message);
    assert!(out.changes.is_empty());
}

#[test]
fn version_tags() {
    let tag = version_tag(CODE);
    assert_eq!(tag.len(), 6);
    let reply = format!("app.py:1-1 @{tag}\n```python\nimport sys\n```\n");
    let (_, out) = run(&[("app.py", CODE)], &reply, &[]);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
    let changed = CODE.replace("import os", "import os, re");
    let (_, out) = run(&[("app.py", &changed)], &reply, &[]);
    let o = &out.outcomes[0];
    assert_eq!(o.kind, Some(FailureKind::Stale));
    assert!(o.message.contains("stale") && o.message.contains(&tag), "{}", o.message);
    assert!(o.hint.as_deref().unwrap().contains("1: import os, re"), "{:?}", o.hint);
    // Through the base-hash option, and in an info string.
    let (_, out) = run(&[("app.py", &changed)], "app.py:1-1\n```\nx\n```\n", &[("base-hash", &tag)]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Stale));
    let (_, out) = run(&[("app.py", &changed)], &format!("```py:1:1 @{tag}\nx\n```\n"), &[("file", "app.py")]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Stale));
    // A tagged edit skips the context guard: the tag proves the numbers.
    let reply = format!("app.py:4-5 @{tag}\n```python\ndef load(path):\n    return 1\n```\n");
    let (_, out) = run(&[("app.py", CODE)], &reply, &[]);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
}

#[test]
fn copied_view_numbers_are_refused() {
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:2-3\n```\n2: X\n3: Y\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Malformed));
    // Blank lines between, and a bare `N:` line, are copied numbers too.
    let (_, out) = run(&[("a.txt", TEN)], "a.txt:2-4\n```\n2: X\n\n  4:\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Malformed));
    // Numbers out of order, one line without, or a single line: text.
    for body in ["3: X\n2: Y\n", "2: X\nY\n3: Z\n", "Y\n2: X\n3: Z\n", "2: X\n"] {
        let (_, out) = run(&[("a.txt", TEN)], &format!("a.txt:2-3\n```\n{body}```\n"), &[]);
        assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{body:?}: {}", out.outcomes[0].message);
    }
}

#[test]
fn missing_file_is_not_found() {
    let (_, out) = run(&[], "nope.txt:1-1\n```\nx\n```\n", &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::NotFound));
}

#[test]
fn multi_file_reply() {
    let reply = "a.txt:1-1\n```\nA\n```\nb.txt:2-2\n```\nB\n```\n";
    let (_, out) = run(&[("a.txt", "a\nx\n"), ("b.txt", "y\nb\n")], reply, &[]);
    assert_eq!(written(&out, "a.txt"), "A\nx\n");
    assert_eq!(written(&out, "b.txt"), "y\nB\n");
    assert_eq!(out.outcomes[1].message, "File 'b.txt' has been updated. It now has 2 lines.");
}

#[test]
fn parse_errors_say_where_and_what_to_do() {
    let parsed = parse("intro\na.txt:5-2\n```\nx\n```\n");
    let e = errors(&parsed);
    assert!(e[0].message.contains("reply line 2") && e[0].message.contains("ends before it starts"));
    assert!(e[0].hint.is_some());
    let parsed = parse("a.txt:1-2\n```\nunclosed\n");
    assert!(errors(&parsed)[0].message.contains("the reply is cut off inside the code block"));
    let parsed = parse("a.txt:1-2\n```py:3:4\nx\n```\n");
    assert!(errors(&parsed)[0].message.contains("info string"));
    let parsed = parse("Run:\n```bash\ncargo test\n```\n```python\nx = 1\n```\n");
    assert_eq!(parsed.commands.len(), 1);
    assert!(parsed.diagnostics.iter().any(|d| d.severity == Severity::Warning && d.message.contains("no line range")));
}

#[test]
fn detect() {
    assert!(Plugin::detect(&Compact, "src/a.rs:3-4\n```\nx\n```\n") >= 0.8);
    assert!(Plugin::detect(&Compact, "```rust:3:4\nx\n```\n") >= 0.8);
    assert_eq!(Plugin::detect(&Compact, "src/a.rs\n```\nx\n```\n"), 0.0);
    assert_eq!(Plugin::detect(&Compact, "<<<<<<< SEARCH\n"), 0.0);
}

#[test]
fn render_numbers_lines_with_a_version_tag() {
    let file = File::new("a.txt", "\u{feff}one\r\ntwo\nthree\nfour\n");
    let view = Plugin::render(&Compact, &file, &[], &[]).unwrap();
    let tag = version_tag(&file.content);
    assert_eq!(view, format!("a.txt @{tag} (4 lines)\n1: one\n2: two\n3: three\n4: four\n"));
    let view = Plugin::render(&Compact, &file, &[LineRange::new(2, 2)], &[]).unwrap();
    assert_eq!(view, format!("a.txt @{tag} (4 lines)\n...\n2: two\n...\n"));
    assert_eq!(numbered_view("e", "", &[]), format!("e @{} (0 lines)\n", version_tag("")));
}

#[test]
fn lint_finds_leftover_headers() {
    let file = File::new("x.py", "def f():\n    pass\nsrc/x.py:1-2\nprint('a.py:1-2 is fine in prose')\n");
    let found = Plugin::lint(&Compact, &file);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].lines, Some(LineRange::new(3, 3)));
}

#[test]
fn example_reply_applies_to_example_files() {
    let info = Plugin::info(&Compact);
    let parsed = parse(&info.example_reply);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let out = Plugin::apply(&Compact, info.example_files.clone(), parsed.edits.clone(), &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied), "{:?}", out.outcomes);
    assert_eq!(
        written(&out, "src/greet.py"),
        "def greet(name):\n    print(f\"Hello, {name}!\")\n\n\ngreet(\"world\")\n"
    );
    assert!(info.instructions.contains("END = START-1"));
}

#[test]
fn hostile_payloads_do_not_panic() {
    for payload in [
        r#"{"number":1,"reply_line":1,"start":4294967295,"end":4294967295,"body":"x\n"}"#,
        r#"{"number":1,"reply_line":1,"start":0,"end":4294967295,"body":""}"#,
        r#"{"number":1,"reply_line":1,"start":5,"end":1,"body":""}"#,
    ] {
        let edit = Edit {
            path: "a.txt".into(),
            related_paths: vec![],
            span: Span { start: 0, end: 0, first_line: 1, last_line: 1 },
            summary: String::new(),
            payload: payload.into(),
        };
        let out = Plugin::apply(&Compact, vec![File::new("a.txt", TEN)], vec![edit], &[]).unwrap();
        assert_eq!(out.outcomes[0].kind, Some(FailureKind::OutOfRange), "{payload}");
    }
    assert!(Plugin::apply(&Compact, vec![], vec![], &opts(&[("stale-guard", "maybe")])).unwrap().outcomes.is_empty());
}

#[test]
fn huge_reply_parses_quickly() {
    let mut reply = String::new();
    for i in 1..=5000 {
        reply.push_str(&format!("a.txt:{i}-{i}\n```\nline {i}\n```\n"));
    }
    reply.push_str(&"x".repeat(1 << 20));
    let start = std::time::Instant::now();
    let parsed = parse(&reply);
    assert_eq!(parsed.edits.len(), 5000);
    assert!(start.elapsed().as_secs() < 20);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn range_edit(start: u32, end: u32) -> crate::RangeEdit {
        crate::RangeEdit { number: 1, reply_line: 1, start, end, body: "".into(), tag: None }
    }

    proptest! {
        /// `distinctive` stops counting once its bounds are met; it decides
        /// as counting the whole trimmed line does.
        #[test]
        fn a_distinctive_line_is_one_with_six_characters_three_of_them_alphanumeric(line in "[ a1_{}é\u{a0}]{0,12}") {
            let t = line.trim();
            let whole = t.chars().count() >= 6 && t.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
            prop_assert_eq!(crate::apply::distinctive(&line), whole);
        }

        /// The overlap search skips edits whose span meets no neighbour's:
        /// it must never skip one that overlaps another.
        #[test]
        fn every_overlapping_edit_is_among_those_searched(spans in proptest::collection::vec((1u32..20, 0u32..4), 0..12)) {
            let edits: Vec<crate::RangeEdit> = spans.iter().map(|&(start, len)| range_edit(start, start + len - 1)).collect();
            let ops: Vec<(usize, &crate::RangeEdit)> = edits.iter().enumerate().collect();
            let near = crate::apply::touching_neighbours(&ops);
            for &(i, a) in &ops {
                if ops.iter().any(|&(j, b)| j != i && crate::apply::overlaps(a, b)) {
                    prop_assert!(near.contains(&i), "edit {i} ({}-{}) overlaps but was skipped", a.start, a.end);
                }
            }
        }
    }

    /// Apply edits one at a time from the bottom up, on a list of lines.
    fn one_by_one(lines: &[String], mut edits: Vec<(u32, u32, Vec<String>)>) -> Vec<String> {
        let mut lines = lines.to_vec();
        edits.sort_by_key(|(s, e, _)| (*s, *e));
        for (s, e, new) in edits.into_iter().rev() {
            lines.splice((s - 1) as usize..e as usize, new);
        }
        lines
    }

    type Edits = Vec<(u32, u32, Vec<String>)>;

    fn case() -> impl Strategy<Value = (Vec<String>, Edits)> {
        proptest::collection::vec("[a-z ]{0,8}", 0..30).prop_flat_map(|lines| {
            let n = lines.len() as u32;
            // Cut points 0..=n; each edit takes [a, b) of positions, replaced
            // lines a+1..=b (empty when a == b: an insertion before a+1).
            let cuts = proptest::collection::vec(0..=n, 0..8);
            let news = proptest::collection::vec(proptest::collection::vec("[A-Z]{0,5}", 0..4), 8);
            (Just(lines), cuts, news).prop_map(|(lines, mut cuts, news)| {
                cuts.sort();
                let mut edits = Vec::new();
                for (pair, new) in cuts.chunks(2).zip(news) {
                    if let [a, b] = pair {
                        edits.push((a + 1, *b, new));
                    }
                }
                // Drop insertions that share a point with another edit's edge
                // in a way whose order the two methods define differently.
                let mut kept: Vec<(u32, u32, Vec<String>)> = Vec::new();
                for edit in edits {
                    if !kept.iter().any(|k| k.0 == edit.0 || k.1 + 1 == edit.0) {
                        kept.push(edit);
                    }
                }
                (lines, kept)
            })
        })
    }

    proptest! {
        #[test]
        fn parser_never_panics(reply in "(\\PC|\n|`|~|#|:|-|[0-9]|@){0,400}") {
            let _ = parse(&reply);
            let _ = Plugin::detect(&Compact, &reply);
            let _ = Plugin::lint(&Compact, &File::new("x", reply.as_str()));
            let parsed = Plugin::parse(&Compact, &reply, &opts(&[("file", "x")]));
            let _ = Plugin::apply(&Compact, vec![File::new("x", "a\nb\nc\n")], parsed.edits.clone(), &[]);
        }

        #[test]
        fn parser_never_panics_on_near_miss_headers(
            reply in "(a\\.txt|`a.py`|###|\\*\\*)?:[0-9]{0,12}(-[0-9]{0,12})?( @[0-9a-f]{0,8})?\n(```[a-z:0-9]*\n)?([a-z\n]{0,20})(```\n)?"
        ) {
            let parsed = parse(&reply);
            let _ = Plugin::apply(&Compact, vec![File::new("a.txt", TEN)], parsed.edits.clone(), &[]);
        }

        #[test]
        fn same_as_one_by_one_from_the_bottom((lines, edits) in case(), shuffle in any::<u64>(), crlf: bool) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let content: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
            let mut order: Vec<usize> = (0..edits.len()).collect();
            order.sort_by_key(|&i| (i as u64).wrapping_mul(shuffle | 1).rotate_left(17));
            let mut reply = String::new();
            for &i in &order {
                let (s, e, new) = &edits[i];
                reply.push_str(&format!("f.txt:{s}-{e}\n```\n"));
                for line in new {
                    reply.push_str(line);
                    reply.push('\n');
                }
                reply.push_str("```\n");
            }
            let (parsed, out) = run(&[("f.txt", &content)], &reply, &[("stale-guard", "off")]);
            prop_assert!(errors(&parsed).is_empty(), "{:?}", parsed.diagnostics);
            prop_assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied), "{:?}", out.outcomes);
            // An empty file has no style of its own: new lines get LF.
            let want_eol = if lines.is_empty() { "\n" } else { eol };
            let want: String = one_by_one(&lines, edits).iter().map(|l| format!("{l}{want_eol}")).collect();
            let got = out.changes.iter().find_map(|c| match c {
                Change::Write(f) => Some(f.content.clone()),
                _ => None,
            }).unwrap_or(content);
            prop_assert_eq!(got, want);
        }
    }
}

proptest::proptest! {
    #[test]
    fn headers_are_counted_outside_fenced_bodies_and_on_their_first_lines(lines in proptest::collection::vec(
        proptest::sample::select(vec!["src/a.rs:1-2\n", "b.py:3\n", "```\n", "```rust\n", "~~~\n", "x\n", "\n", "c.rs:4-5"]),
        0..14,
    )) {
        let reply = lines.concat();
        let fences = agent_apply_sdk::fence::fenced_blocks(&reply);
        // By definition: every line, unless it starts past a body's first byte.
        let mut at = 0;
        let mut headers = 0;
        for line in agent_apply_sdk::text::lines_with_endings(&reply) {
            let inside = fences.iter().any(|b| at > b.body_start && at < b.body_end);
            if !inside && matches!(super::parse::header(line), Some(Ok(_))) {
                headers += 1;
            }
            at += line.len();
        }
        proptest::prop_assert_eq!(headers_outside_bodies(&reply, &fences), headers);
    }
}
