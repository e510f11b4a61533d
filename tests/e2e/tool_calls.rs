//! The `tool-calls` format through the real binary in real repositories: a
//! harness passes Claude Code and OpenAI tool calls straight through, the
//! host tells the plugin the repository root (`repo-root`) so absolute
//! paths inside it apply, and the path policy refuses those outside.

use serde_json::{Value, json};

use crate::repo::TestRepo;

const APP: &str = "def greet():\n    print(\"Hello!\")\n";

fn json_of(output: &[u8]) -> Value {
    crate::common::report_json(output)
}

#[test]
fn an_anthropic_message_with_claude_code_calls_and_absolute_paths_is_detected_and_committed() {
    let repo = TestRepo::with(&[("src/app.py", APP)]);
    let absolute = repo.path().join("src/app.py").display().to_string();
    // The Messages API response as it is, `tool_use` blocks and all.
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "I'll make greet take a name."},
        {"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {
            "file_path": absolute, "old_string": "def greet():", "new_string": "def greet(name):"}},
        {"type": "tool_use", "id": "toolu_2", "name": "MultiEdit", "input": {"file_path": "src/app.py", "edits": [
            {"old_string": "\"Hello!\"", "new_string": "f\"Hello, {name}!\""}]}}
    ]});
    let out = repo.apply().args(["--json", "-"]).write_stdin(message.to_string()).assert().success();
    let report = json_of(&out.get_output().stdout);
    assert_eq!(report["format"]["name"], "tool-calls", "{report}");
    assert_eq!(report["format"]["by"], "auto");
    assert_eq!(report["status"], "applied");
    assert_eq!(report["edits"][0]["path"], "src/app.py", "the absolute path became repo-relative");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("(exact match)"), "{report}");
    assert_eq!(repo.committed("src/app.py").unwrap(), "def greet(name):\n    print(f\"Hello, {name}!\")\n");
    assert!(repo.status().is_empty(), "{}", repo.status());
}

/// Auto-detection reads every call to judge the reply, and the format
/// keeps that reading for its `parse` (#27): the run it makes is the run
/// `--format` makes, paths under the root, summaries and outcomes alike.
#[test]
fn a_detected_reply_is_read_as_the_named_format_reads_it() {
    let files = [("src/app.py", APP), ("src/util.py", "def twice(x):\n    return 2 * x\n")];
    let (detected, named) = (TestRepo::with(&files), TestRepo::with(&files));
    let calls = |repo: &TestRepo| {
        let absolute = |path: &str| repo.path().join(path).display().to_string();
        json!([
            {"name": "Edit", "input": {"file_path": absolute("src/app.py"), "old_string": "def greet():", "new_string": "def greet(name):"}},
            {"command": "view", "path": absolute("src/app.py")},
            {"name": "MultiEdit", "input": {"file_path": absolute("src/util.py"), "edits": [
                {"old_string": "twice", "new_string": "double"}, {"old_string": "2 * x", "new_string": "x + x"}]}},
            {"name": "Write", "input": {"file_path": absolute("src/new.py"), "content": "NEW = 1\n"}},
            {"name": "Edit", "input": {"file_path": "src/app.py", "old_string": "not there", "new_string": "x"}}
        ])
        .to_string()
    };
    let report = |repo: &TestRepo, format: &[&str]| {
        let out =
            repo.apply().args(format).args(["--partial", "--json", "-"]).write_stdin(calls(repo)).output().unwrap();
        let mut report = json_of(&out.stdout);
        assert_eq!(report["format"]["name"], "tool-calls", "{report}");
        report
            .as_object_mut()
            .unwrap()
            .retain(|key, _| ["edits", "status", "diagnostics", "files"].contains(&key.as_str()));
        serde_json::to_string_pretty(&report).unwrap().replace(&repo.path().display().to_string(), "<repo>")
    };
    let (auto, by_name) = (report(&detected, &[]), report(&named, &["--format", "tool-calls"]));
    assert_eq!(auto, by_name);
    // `parse` shows each edit's summary, which a plain run leaves unmade.
    let parsed = |format: &[&str]| {
        let out = detected
            .apply()
            .arg("parse")
            .args(format)
            .args(["--json", "-"])
            .write_stdin(calls(&detected))
            .output()
            .unwrap();
        let report = json_of(&out.stdout);
        assert_eq!(report["format"]["name"], "tool-calls", "{report}");
        serde_json::to_string_pretty(&[&report["edits"], &report["diagnostics"], &report["commands"]]).unwrap()
    };
    let auto_parse = parsed(&[]);
    assert_eq!(auto_parse, parsed(&["--format", "tool-calls"]));
    assert!(auto_parse.contains("MultiEdit: "), "{auto_parse}");
    assert!(auto.contains("\"src/util.py\""), "the absolute paths became repo-relative: {auto}");
    for path in ["src/app.py", "src/util.py", "src/new.py"] {
        assert_eq!(detected.read(path), named.read(path), "{path}");
    }
    assert_eq!(detected.read("src/util.py").unwrap(), b"def double(x):\n    return x + x\n");
}

#[test]
fn an_openai_chat_completion_passes_straight_through() {
    let repo = TestRepo::with(&[("src/app.py", APP)]);
    let edit = json!({"file_path": "src/app.py", "old_string": "print(\"Hello!\")", "new_string": "print(\"Hi!\")"});
    let write = json!({"file_path": "src/__init__.py", "content": "from .app import greet\n"});
    let call = |id: &str, name: &str, args: &Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    // The Chat Completions response as it is; `arguments` are JSON strings.
    let completion = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [call("call_1", "Edit", &edit), call("call_2", "Write", &write)]},
        "finish_reason": "tool_calls"}]});
    let out = repo
        .apply()
        .args(["--format", "str-replace", "--json", "-"])
        .write_stdin(completion.to_string())
        .assert()
        .success();
    let report = json_of(&out.get_output().stdout);
    assert_eq!(report["format"]["name"], "tool-calls");
    assert_eq!(report["edits"].as_array().unwrap().len(), 2);
    assert_eq!(repo.committed("src/app.py").unwrap(), "def greet():\n    print(\"Hi!\")\n");
    assert_eq!(repo.committed("src/__init__.py").unwrap(), "from .app import greet\n");
}

#[test]
fn an_absolute_path_outside_the_repository_is_refused_by_the_path_policy() {
    let repo = TestRepo::with(&[("src/app.py", APP)]);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("evil.sh");
    let calls = json!([
        {"name": "Edit", "input": {"file_path": "src/app.py", "old_string": "Hello", "new_string": "Bye"}},
        {"name": "Write", "input": {"file_path": target.display().to_string(), "content": "rm -rf ~\n"}}
    ]);
    let before = repo.state();
    let out = repo.apply().args(["--json", "-"]).write_stdin(calls.to_string()).assert().code(1);
    let report = json_of(&out.get_output().stdout);
    let refused = &report["edits"][1];
    assert_eq!(refused["kind"], "forbidden", "{report}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("is an absolute path; edits must name files relative to the repository root"),
        "{message}"
    );
    assert!(!target.exists());
    assert_eq!(repo.state(), before, "nothing of the reply was applied");
}
