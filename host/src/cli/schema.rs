//! The JSON Schema of every object `--json` prints, errors included:
//! generated from the report types, checked in as `schema/report.v1.json`
//! (a test fails when the two disagree).

use schemars::JsonSchema;

use super::formats::FormatsReport;
use super::lint::LintReport;
use super::prompt::PromptJson;
use super::recover::RecoverReport;
use super::undo::UndoReport;
use crate::report::{ApplyReport, ParseReport};
use crate::schema::ErrorReport;

/// Every object a `--json` command prints.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)] // Only its schema is used.
enum Report {
    Apply(ApplyReport),
    Parse(ParseReport),
    Error(ErrorReport),
    Formats(FormatsReport),
    Undo(UndoReport),
    Recover(RecoverReport),
    Lint(LintReport),
    Prompt(PromptJson),
}

/// The schema of [`Report`], as checked in.
pub fn json_schema() -> serde_json::Value {
    // The schema of what is written (a field skipped when empty is optional).
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    let mut schema = generator.into_root_schema_for::<Report>();
    schema.insert("$id".into(), "https://agent-apply.dev/schema/report.v1.json".into());
    schema.insert("title".into(), "agent-apply JSON output, schema 1".into());
    serde_json::to_value(schema).expect("a schema is JSON")
}
