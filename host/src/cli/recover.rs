//! `git agent-apply recover`: finish a run that was killed while updating
//! the working tree, or drop one that had not moved the branch yet.

use schemars::JsonSchema;
use serde::Serialize;

use super::{CommandError, Exit, GlobalArgs};
use crate::transaction::{GitRepo, Recovery};

/// `recover --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecoverReport {
    schema: u32,
    #[schemars(schema_with = "recovered")]
    status: &'static str,
    /// What was finished or dropped; none when nothing was interrupted.
    recovery: Option<Recovery>,
}

fn recovered(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "const": "recovered" })
}

pub fn run(global: &GlobalArgs) -> Result<Exit, CommandError> {
    let repo = GitRepo::discover(global.repo.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let recovery = repo.recover()?;
    if global.json {
        super::output::json(&RecoverReport {
            schema: crate::report::SCHEMA,
            status: "recovered",
            recovery: recovery.clone(),
        });
    } else {
        match recovery {
            None => println!("Nothing to recover."),
            Some(r) if r.discarded => println!("An interrupted run had not changed anything; its journal was removed."),
            Some(r) => {
                println!("Finished an interrupted run: {}.", r.completed.join(", "));
                if !r.left.is_empty() {
                    println!("Left as they are (changed since): {}.", r.left.join(", "));
                }
            }
        }
    }
    Ok(Exit::Ok)
}
