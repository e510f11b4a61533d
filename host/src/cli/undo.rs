//! `git agent-apply undo`: revert the last agent commit.

use clap::Args;
use schemars::JsonSchema;
use serde::Serialize;

use super::{CommandError, Exit, GlobalArgs};
use crate::transaction::{GitRepo, Undone, short_id};

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Say what would be undone (or redone), change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Redo the last undo: move the branch forward to the commit it undid.
    #[arg(long)]
    pub redo: bool,
}

/// `undo --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UndoReport {
    schema: u32,
    #[schemars(schema_with = "undo_status")]
    status: &'static str,
    undone: Undone,
}

fn undo_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "enum": ["undone", "redone", "would-undo", "would-redo"] })
}

pub fn run(global: &GlobalArgs, args: &UndoArgs) -> Result<Exit, CommandError> {
    let repo = GitRepo::discover(global.repo.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let undone = if args.redo { repo.redo(args.dry_run)? } else { repo.undo(args.dry_run)? };
    let status = match (args.redo, args.dry_run) {
        (false, false) => "undone",
        (true, false) => "redone",
        (false, true) => "would-undo",
        (true, true) => "would-redo",
    };
    if global.json {
        super::output::json(&UndoReport { schema: crate::report::SCHEMA, status, undone: undone.clone() });
    } else {
        let (verb, restore) = match (args.redo, args.dry_run) {
            (false, false) => ("Undid", "restored"),
            (true, false) => ("Redid", "restored"),
            (false, true) => ("Would undo", "would restore"),
            (true, true) => ("Would redo", "would restore"),
        };
        println!(
            "{verb} agent commit {} ({}); {restore} {}. The branch {} at {}.",
            short_id(&undone.commit),
            undone.format,
            undone.restored.join(", "),
            if args.dry_run { "would be" } else { "is" },
            short_id(&undone.now)
        );
        if !undone.left.is_empty() {
            println!(
                "warning: {} changed meanwhile and {} left as it is.",
                undone.left.join(", "),
                if undone.left.len() == 1 { "was" } else { "were" }
            );
        }
    }
    Ok(Exit::Ok)
}
