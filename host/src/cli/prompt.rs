//! `git agent-apply prompt FORMAT`: the format's instructions for a model.

use clap::Args;

use super::{CommandError, Context, Exit, GlobalArgs};

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The format whose instructions to print.
    format: String,
}

pub fn run(global: &GlobalArgs, args: &PromptArgs) -> Result<Exit, CommandError> {
    let context = Context::new(global)?;
    let entry = context.registry.find(&args.format)?.clone();
    let info = context.registry.instantiate(&entry)?.info()?;
    println!("{}", info.instructions.trim_end());
    if !info.example_reply.is_empty() {
        println!("\nFor example:\n\n{}", info.example_reply.trim_end());
    }
    Ok(Exit::Ok)
}
