//! `git agent-apply formats`: every format this run knows.

use schemars::JsonSchema;
use serde::Serialize;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::registry::{Kind, Source};

/// `formats --json`.
#[derive(Serialize, JsonSchema)]
pub struct FormatsReport {
    schema: u32,
    formats: Vec<FormatRow>,
    models: Vec<ModelRow>,
}

#[derive(Serialize, JsonSchema)]
pub struct FormatRow {
    name: String,
    aliases: Vec<String>,
    version: String,
    #[serde(flatten)]
    source: Source,
    kind: Kind,
    summary: String,
}

#[derive(Serialize, JsonSchema)]
pub struct ModelRow {
    pattern: String,
    formats: Vec<String>,
    source: &'static str,
}

pub fn run(global: &GlobalArgs) -> Result<Exit, CommandError> {
    let workspace = open_workspace(global)?;
    let mut rows = Vec::new();
    for entry in workspace.registry.entries() {
        let info = workspace.registry.summary(entry)?;
        rows.push(FormatRow {
            name: entry.name.clone(),
            aliases: entry.aliases.clone(),
            version: info.version,
            source: entry.source.clone(),
            kind: entry.kind,
            summary: info.summary,
        });
    }
    if global.json {
        let models: Vec<ModelRow> = workspace
            .registry
            .model_table()
            .into_iter()
            .map(|(pattern, formats, source)| ModelRow { pattern, formats, source })
            .collect();
        super::output::json(&FormatsReport { schema: crate::report::SCHEMA, formats: rows, models });
    } else {
        for row in rows {
            let source = match &row.source {
                Source::Builtin => "builtin".to_string(),
                Source::Config(path) => format!("config: {}", path.display()),
            };
            let aliases =
                if row.aliases.is_empty() { String::new() } else { format!(" (or {})", row.aliases.join(", ")) };
            println!(
                "{}{aliases}  v{}  [{source}, {}]\n    {}",
                row.name,
                row.version,
                match row.kind {
                    Kind::Wasm => "wasm",
                    Kind::Native => "native",
                },
                row.summary
            );
        }
    }
    Ok(Exit::Ok)
}
