use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

use super::Whole;

fn parse(reply: &str) -> ParseOutput {
    Plugin::parse(&Whole, reply, &[])
}

fn apply(files: &[(&str, &str)], reply: &str) -> (ParseOutput, ApplyOutput) {
    let parsed = parse(reply);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&Whole, files, parsed.edits.clone(), &[]).unwrap();
    (parsed, out)
}

fn written(out: &ApplyOutput, path: &str) -> String {
    out.changes
        .iter()
        .find_map(|c| match c {
            Change::Write(f) if f.path == path => Some(f.content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not written: {:?}", out.changes))
}

#[test]
fn path_decorations_before_the_fence() {
    for before in ["src/a.py", "**src/a.py**", "### `src/a.py`", "`src/a.py`:", "Here is `src/a.py`:"] {
        let reply = format!("{before}\n```python\nx = 1\n```\n");
        let parsed = parse(&reply);
        assert_eq!(parsed.edits.len(), 1, "{before}");
        assert_eq!(parsed.edits[0].path, "src/a.py", "{before}");
    }
}

#[test]
fn path_in_the_info_string_and_tilde_fences() {
    let parsed = parse("~~~~rust src/lib.rs\nfn f() {}\n~~~~\n");
    assert_eq!(parsed.edits[0].path, "src/lib.rs");
}

#[test]
fn nested_fences_stay_in_the_file() {
    let reply = "README.md\n````markdown\n# Title\n```sh\nmake\n```\n````\n";
    let (_, out) = apply(&[], reply);
    assert_eq!(written(&out, "README.md"), "# Title\n```sh\nmake\n```\n");
}

#[test]
fn keeps_crlf_bom_and_missing_final_newline() {
    let (_, out) = apply(&[("a.txt", "\u{feff}one\r\ntwo")], "a.txt\n```\nuno\ndos\ntres\n```\n");
    assert_eq!(written(&out, "a.txt"), "\u{feff}uno\r\ndos\r\ntres");
}

#[test]
fn creates_new_files_with_a_final_newline() {
    let (_, out) = apply(&[], "new/file.txt\n```\nhello\n```\n");
    assert_eq!(written(&out, "new/file.txt"), "hello\n");
    assert_eq!(out.outcomes[0].message, "created new/file.txt (1 line)");
}

#[test]
fn refuses_elided_contents() {
    let reply = "app.js\n```js\nfunction a() {}\n// ... existing code ...\n```\n";
    let (parsed, out) = apply(&[("app.js", "function a() {}\nfunction b() {}\n")], reply);
    assert!(parsed.diagnostics.iter().any(|d| d.severity == Severity::Warning && d.span.unwrap().first_line == 4));
    assert_eq!(out.outcomes[0].status, EditStatus::Failed);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Forbidden));
    assert!(out.outcomes[0].message.contains("line 2"));
    assert!(out.changes.is_empty());
}

#[test]
fn refuses_erasing_a_file_with_an_empty_block() {
    let (_, out) = apply(&[("a.txt", "keep\n")], "a.txt\n```\n```\n");
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Forbidden));
    assert!(out.changes.is_empty());
}

#[test]
fn unnamed_blocks_and_unclosed_fences_are_errors_shell_blocks_are_commands() {
    let parsed = parse("Run:\n```bash\ncargo test\n```\nThen:\n```python\nx\n```\nb.py\n```\nunclosed\n");
    assert_eq!(parsed.commands.len(), 1);
    assert_eq!(parsed.commands[0].command, "cargo test");
    let errors: Vec<_> = parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].message.contains("names no file"));
    assert!(errors[1].message.contains("the reply is cut off inside the code block"));
    assert!(parsed.edits.is_empty());
}

#[test]
fn identical_contents_change_nothing() {
    let (_, out) = apply(&[("a.txt", "same\n")], "a.txt\n```\nsame\n```\n");
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
    assert!(out.changes.is_empty());
}

#[test]
fn lint_finds_placeholders() {
    let findings = Plugin::lint(&Whole, &File::new("x.py", "def f():\n    # ... rest of the code ...\n    pass\n"));
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].lines, Some(LineRange::new(2, 2)));
}

#[test]
fn example_reply_applies_to_example_files() {
    let info = Plugin::info(&Whole);
    let parsed = parse(&info.example_reply);
    let out = Plugin::apply(&Whole, info.example_files.clone(), parsed.edits.clone(), &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied));
    assert_eq!(out.changes.len(), 1);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn parser_never_panics(reply in "(\\PC|\n|`|~|#|\\*){0,400}") {
            let _ = parse(&reply);
        }

        #[test]
        fn written_content_round_trips(lines in proptest::collection::vec("[a-z =(){};]{0,20}", 1..20), crlf: bool) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let original = lines.iter().map(|l| format!("{l}{eol}")).collect::<String>();
            let body = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
            let reply = format!("f.txt\n```\n{body}```\n");
            let old = if crlf { "old\r\n" } else { "old\n" };
            let (_, out) = apply(&[("f.txt", old)], &reply);
            if lines.iter().any(|l| !l.trim().is_empty()) && agent_apply_sdk::elision::find_elisions(&body).is_empty() {
                prop_assert_eq!(written(&out, "f.txt"), original);
            }
        }
    }
}

fn apply_with(files: &[(&str, &str)], reply: &str, options: &[(&str, &str)]) -> ApplyOutput {
    let parsed = parse(reply);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let options: Vec<OptionValue> =
        options.iter().map(|(k, v)| OptionValue { key: k.to_string(), value: v.to_string() }).collect();
    Plugin::apply(&Whole, files, parsed.edits, &options).unwrap()
}

const APP: &str = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, text):\n    with open(path, \"w\") as f:\n        f.write(text)\n\n\ndef main():\n    print(load(\"x\"))\n";

#[test]
fn a_fragment_of_the_file_is_refused_unless_the_format_was_chosen_explicitly() {
    let reply = "src/app.py\n```python\ndef main():\n    print(load(\"x\"))\n```\n";
    let out = apply_with(&[("src/app.py", APP)], reply, &[]);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Forbidden), "{:?}", out.outcomes[0]);
    assert!(out.outcomes[0].message.contains("fragment"), "{}", out.outcomes[0].message);
    for option in [("allow-fragment", "true"), ("chosen-by", "flag")] {
        let out = apply_with(&[("src/app.py", APP)], reply, &[option]);
        assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{option:?}");
    }
    // A rewrite with new lines is no fragment, however short.
    let out = apply_with(&[("src/app.py", APP)], "src/app.py\n```python\nprint('hi')\n```\n", &[]);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
}

#[test]
fn another_formats_markers_are_refused_and_not_detected() {
    let reply = "src/app.py\n```python\n<<<<<<< SEARCH\nimport os\n=======\nimport sys\n>>>>>>> REPLACE\n```\n";
    let out = apply_with(&[("src/app.py", APP)], reply, &[("chosen-by", "flag")]);
    assert!(out.outcomes[0].message.contains("editblock edit marker at line 1"), "{}", out.outcomes[0].message);
    assert_eq!(Plugin::detect(&Whole, reply), 0.0);
    assert_eq!(Plugin::detect(&Whole, "src/app.py\n```python\n    return 2\n```\n"), 0.0);
}

#[test]
fn a_payload_that_does_not_say_whether_it_has_placeholders_is_looked_at() {
    let reply = "a.py\n```\ndef f():\n    # ... existing code ...\n    return 2\n```\n";
    let mut edits = parse(reply).edits;
    assert!(edits[0].payload.contains("\"placeholders\":true"), "{}", edits[0].payload);
    let file = || vec![File::new("a.py", "def f():\n    x = 1\n    return 1\n")];
    for payload in [edits[0].payload.clone(), r#"{"content": "def f():\n    # ... existing code ...\n"}"#.to_string()] {
        edits[0].payload = payload;
        let out = Plugin::apply(&Whole, file(), edits.clone(), &[]).unwrap();
        assert_eq!(out.outcomes[0].status, EditStatus::Failed, "{:?}", out.outcomes[0]);
        assert!(out.outcomes[0].message.contains("leave code out"), "{}", out.outcomes[0].message);
    }
}
