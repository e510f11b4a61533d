//! `git agent-apply recover`: finish a run that was killed while updating
//! the working tree, or drop one that had not moved the branch yet.

use clap::Args;

use super::{CommandError, Exit, GlobalArgs};
use crate::transaction::GitRepo;

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(global: &GlobalArgs, args: &RecoverArgs) -> Result<Exit, CommandError> {
    let repo = GitRepo::discover(global.repo.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let recovery = repo.recover()?;
    if args.json {
        let object =
            serde_json::json!({ "schema": crate::report::SCHEMA, "status": "recovered", "recovery": recovery });
        super::output::json(&object);
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
