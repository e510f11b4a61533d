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
