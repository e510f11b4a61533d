//! Ready tool definitions for the model APIs: the Claude Code shapes
//! (`Edit`, `MultiEdit`, `Write`), whose calls this format reads back, as
//! JSON Schema in the Anthropic, OpenAI Chat Completions and OpenAI
//! Responses layouts. `prompt tool-calls --json` prints them.

use serde_json::{Value, json};

const PATH: &str = "The file to edit: a path relative to the repository root (an absolute path inside the \
                    repository works too).";

fn replacement_properties() -> Value {
    json!({
        "old_string": {
            "type": "string",
            "description": "The text to replace, copied exactly from the file (indentation included). It must occur \
                            exactly once unless replace_all is true; add surrounding lines to make it unique. \
                            Empty creates the file."
        },
        "new_string": {"type": "string", "description": "The text that replaces old_string (empty deletes it)."},
        "replace_all": {
            "type": "boolean",
            "default": false,
            "description": "Replace every occurrence of old_string instead of exactly one."
        }
    })
}

/// (name, description, JSON Schema of the arguments).
fn tools() -> Vec<(&'static str, &'static str, Value)> {
    let mut edit = replacement_properties();
    edit["file_path"] = json!({"type": "string", "description": PATH});
    vec![
        (
            "Edit",
            "Replace text in a file: old_string must match the file exactly and occur once (or set replace_all).",
            json!({"type": "object", "properties": edit, "required": ["file_path", "old_string", "new_string"]}),
        ),
        (
            "MultiEdit",
            "Several replacements in one file, applied in order, each to the result of the previous; if one \
             fails, none is applied.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": PATH},
                    "edits": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": replacement_properties(),
                            "required": ["old_string", "new_string"]
                        }
                    }
                },
                "required": ["file_path", "edits"]
            }),
        ),
        (
            "Write",
            "Write a whole file: create it, or replace all of its content (send every line; no placeholders).",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": PATH},
                    "content": {"type": "string", "description": "The complete new content of the file."}
                },
                "required": ["file_path", "content"]
            }),
        ),
    ]
}

/// `{anthropic: [...], openai: [...], openai_responses: [...]}`, each a
/// `tools` list ready to send.
pub fn definitions() -> Value {
    let tools = tools();
    let layout = |make: fn(&str, &str, &Value) -> Value| -> Vec<Value> {
        tools.iter().map(|(name, description, schema)| make(name, description, schema)).collect()
    };
    json!({
        "anthropic": layout(|n, d, s| json!({"name": n, "description": d, "input_schema": s})),
        "openai": layout(|n, d, s| json!({"type": "function", "function": {"name": n, "description": d, "parameters": s}})),
        "openai_responses": layout(|n, d, s| json!({"type": "function", "name": n, "description": d, "parameters": s})),
    })
}
