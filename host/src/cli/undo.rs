//! `git agent-apply undo`: revert the last agent commit.

use clap::Args;

use super::{CommandError, Exit, GlobalArgs};
use crate::transaction::GitRepo;

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(global: &GlobalArgs, args: &UndoArgs) -> Result<Exit, CommandError> {
    let repo = GitRepo::discover(global.repo.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let undone = repo.undo()?;
    if args.json {
        let object = serde_json::json!({ "schema": crate::report::SCHEMA, "status": "undone", "undone": undone });
        println!("{}", serde_json::to_string_pretty(&object).expect("JSON"));
    } else {
        println!(
            "Undid agent commit {} ({}); restored {}. The branch is at {} again.",
            &undone.commit[..12],
            undone.format,
            undone.restored.join(", "),
            &undone.now[..12]
        );
    }
    Ok(Exit::Ok)
}
