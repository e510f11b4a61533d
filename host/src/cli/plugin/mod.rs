//! `git agent-apply plugin new NAME | plugin check PATH`: third-party plugin tooling.

mod check;
mod new;

use clap::{Args, Subcommand};

use super::{CommandError, Exit, GlobalArgs};

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Create a format plugin crate that builds and passes its own tests.
    New(new::NewArgs),
    /// Load a plugin, validate its exports and `info`, and apply its example.
    Check(check::CheckArgs),
}

pub fn run(global: &GlobalArgs, args: &PluginArgs) -> Result<Exit, CommandError> {
    match &args.command {
        PluginCommand::New(args) => new::run(args),
        PluginCommand::Check(args) => check::run(global, args),
    }
}
