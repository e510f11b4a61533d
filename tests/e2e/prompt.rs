//! `git agent-apply prompt FORMAT [--model NAME] [--json]`.

use serde_json::Value;

use crate::common::bin;
use crate::common::report_json as json;

#[test]
fn prompt_json_gives_system_text_and_example_messages_for_every_format() {
    for format in ["whole", "editblock", "udiff", "compact", "hashline", "tool-calls", "apply-patch"] {
        let out = bin().args(["prompt", format, "--json"]).assert().success();
        let value = json(&out.get_output().stdout);
        assert_eq!(value["schema"], 1);
        assert_eq!(value["format"]["name"], format);
        assert_eq!(value["format"]["by"], "flag");
        let system = value["system"].as_str().unwrap();
        assert!(system.len() > 100, "{format}: short system text");
        let examples = value["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 2, "{format}");
        assert_eq!(examples[0]["role"], "user");
        assert_eq!(examples[1]["role"], "assistant");
        assert!(examples[0]["content"].as_str().unwrap().contains("src/"), "{format}: user message names the files");
        // The text prompt carries the same instructions and example reply.
        let text = bin().args(["prompt", format]).assert().success().get_output().stdout.clone();
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with(system.trim_end()), "{format}");
        let example = examples[1]["content"].as_str().unwrap();
        assert!(text.contains(example.trim_end()), "{format}");
        // The example reply is detected as its own format.
        let out = bin().args(["parse", "--format", "auto", "--json", "-"]).write_stdin(example).output().unwrap();
        assert_eq!(json(&out.stdout)["format"]["name"], format, "{format}: example detected as another format");
    }
}

#[test]
fn prompt_json_gives_tool_definitions_for_tool_calls_only() {
    let out = bin().args(["prompt", "tool-calls", "--json"]).assert().success();
    let tools = json(&out.get_output().stdout)["tools"].clone();
    let names = |list: &Value, pointer: &str| -> Vec<String> {
        list.as_array().unwrap().iter().map(|t| t.pointer(pointer).unwrap().as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(&tools["anthropic"], "/name"), ["Edit", "MultiEdit", "Write"]);
    assert_eq!(names(&tools["openai"], "/function/name"), ["Edit", "MultiEdit", "Write"]);
    assert_eq!(names(&tools["openai_responses"], "/name"), ["Edit", "MultiEdit", "Write"]);
    let edit = &tools["anthropic"][0]["input_schema"];
    assert_eq!(edit["type"], "object");
    assert_eq!(edit["required"], serde_json::json!(["file_path", "old_string", "new_string"]));
    assert_eq!(tools["openai"][1]["function"]["parameters"]["properties"]["edits"]["type"], "array");
    let out = bin().args(["prompt", "editblock", "--json"]).assert().success();
    assert!(json(&out.get_output().stdout).get("tools").is_none(), "other formats have no tool definitions");
}

#[test]
fn prompt_json_shows_files_in_the_view_the_format_reads() {
    let out = bin().args(["prompt", "hashline", "--json"]).assert().success();
    let value = json(&out.get_output().stdout);
    let user = value["examples"][0]["content"].as_str().unwrap();
    assert!(user.contains("1:48|def greet():"), "{user}");
    let out = bin().args(["prompt", "compact", "--json"]).assert().success();
    let user = json(&out.get_output().stdout)["examples"][0]["content"].as_str().unwrap().to_string();
    assert!(user.contains("1: def greet():"), "{user}");
}

#[test]
fn prompt_model_picks_the_format_from_the_model_table() {
    let out = bin().args(["prompt", "--model", "claude-3-5-sonnet", "--json"]).assert().success();
    let value = json(&out.get_output().stdout);
    assert_eq!(value["format"]["name"], "editblock");
    assert_eq!(value["format"]["by"], "model");
    assert_eq!(value["format"]["pattern"], "claude-*");
    // An explicit FORMAT wins over --model.
    let out = bin().args(["prompt", "udiff", "--model", "claude-3-5-sonnet", "--json"]).assert().success();
    assert_eq!(json(&out.get_output().stdout)["format"]["name"], "udiff");
    // Neither: a usage error, as JSON when asked.
    let out = bin().args(["prompt", "--json"]).assert().code(2);
    assert_eq!(json(&out.get_output().stdout)["status"], "error");
    let out = bin().args(["prompt", "--model", "unknown-model-x", "--json"]).assert().code(2);
    assert!(json(&out.get_output().stdout)["error"]["message"].as_str().unwrap().contains("unknown-model-x"));
}
