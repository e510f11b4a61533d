//! Pieces of the JSON Schema of what `--json` prints (the whole schema is
//! put together in `cli::schema`): the error object, and the schema of the
//! contract's `match-info` record.

use agent_apply_sdk::types::{FailureKind, LineRange, MatchInfo, Severity, Span};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

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
    /// What it came from, outermost first (a libgit2 or I/O error), each
    /// not already said in `message`.
    pub causes: Vec<String>,
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

/// The contract's `line-range` (1-based, inclusive), as the report prints it.
pub fn line_range(_: &mut SchemaGenerator) -> Schema {
    let LineRange { start: _, end: _ } = LineRange::new(1, 1);
    json_schema!({
        "type": "object",
        "required": ["start", "end"],
        "properties": { "start": { "type": "integer", "minimum": 0 }, "end": { "type": "integer", "minimum": 0 } }
    })
}

/// A `line-range` or `null`.
pub fn optional_line_range(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "anyOf": [line_range(generator), { "type": "null" }] })
}

/// The contract's `span`: byte offsets and the 1-based lines of an edit in the reply.
pub fn span(_: &mut SchemaGenerator) -> Schema {
    let Span { start: _, end: _, first_line: _, last_line: _ } = Span { start: 0, end: 0, first_line: 0, last_line: 0 };
    let number = json_schema!({ "type": "integer", "minimum": 0 });
    json_schema!({
        "type": "object",
        "required": ["start", "end", "first_line", "last_line"],
        "properties": { "start": number, "end": number, "first_line": number, "last_line": number }
    })
}

/// A diagnostic's severity, by its contract name.
pub fn severity(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Severity::ALL.iter().map(|s| s.as_str()).collect();
    json_schema!({ "type": "string", "enum": names })
}

/// Why an edit failed, by its contract name, or `null`.
pub fn failure_kind(_: &mut SchemaGenerator) -> Schema {
    let mut names: Vec<serde_json::Value> = FailureKind::ALL.iter().map(|k| k.as_str().into()).collect();
    names.push(serde_json::Value::Null);
    json_schema!({ "type": ["string", "null"], "enum": names })
}

/// Serialize a severity by its contract name (`error`).
pub fn serialize_severity<S: Serializer>(severity: &Severity, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(severity.as_str())
}

/// Serialize a failure kind by its contract name (`not-found`), or `null`.
pub fn serialize_failure_kind<S: Serializer>(kind: &Option<FailureKind>, serializer: S) -> Result<S::Ok, S::Error> {
    match kind {
        Some(kind) => serializer.serialize_str(kind.as_str()),
        None => serializer.serialize_none(),
    }
}
