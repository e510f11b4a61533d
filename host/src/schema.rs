//! Pieces of the JSON Schema of what `--json` prints (the whole schema is
//! put together in `cli::schema`): the error object, and the schema of the
//! contract's `match-info` record.

use agent_apply_sdk::types::MatchInfo;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;

use crate::report::SCHEMA;

/// What a failed command prints under `--json`: usage, config, plugin and
/// repository errors (exit 2 or 4, or 1 for a refused file), as one object.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorReport {
    pub schema: u32,
    /// Always `error`.
    #[schemars(schema_with = "error_status")]
    pub status: &'static str,
    /// The process exit code.
    pub exit: u8,
    pub error: ErrorBody,
    /// Text for the model when its reply caused the error; else empty.
    pub reflection: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hints: Vec<String>,
    /// Longer output, such as a plugin's stderr.
    pub details: Option<String>,
}

impl ErrorReport {
    pub fn new(exit: u8, error: ErrorBody, reflection: String) -> Self {
        ErrorReport { schema: SCHEMA, status: "error", exit, error, reflection }
    }
}

fn error_status(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "const": "error" })
}

/// The schema of the contract's `match-info` record (a WIT type, which
/// the bindings generate without a schema): how an edit was placed.
pub fn match_info(_: &mut SchemaGenerator) -> Schema {
    // Keeps the compiler's eye on the record's fields: adding one breaks this.
    let MatchInfo { level: _, relocated: _, stated_line: _, retried: _, candidates: _ } = MatchInfo::at("");
    json_schema!({
        "type": ["object", "null"],
        "required": ["level", "relocated", "stated_line", "retried", "candidates"],
        "additionalProperties": false,
        "properties": {
            "level": { "type": "string", "description": "What placed it: a ladder level or the format's own way." },
            "relocated": { "type": "boolean", "description": "Placed away from where the edit said." },
            "stated_line": { "type": ["integer", "null"], "minimum": 0, "description": "The line the edit named, when relocated." },
            "retried": { "type": "boolean", "description": "Applied to another candidate file than the one it named." },
            "candidates": {
                "type": "array",
                "description": "Each level tried, in order, with the places it found.",
                "items": {
                    "type": "object",
                    "required": ["level", "count"],
                    "additionalProperties": false,
                    "properties": { "level": { "type": "string" }, "count": { "type": "integer", "minimum": 0 } }
                }
            }
        }
    })
}
