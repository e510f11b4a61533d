//! `git agent-apply completions SHELL` and `git agent-apply man`.

use clap::Args;
use clap_complete::Shell;

use super::{CommandError, Exit};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    shell: Shell,
}

pub fn run(args: &CompletionsArgs, mut command: clap::Command) -> Result<Exit, CommandError> {
    clap_complete::generate(args.shell, &mut command, "git-agent-apply", &mut std::io::stdout());
    Ok(Exit::Ok)
}

pub fn man(command: clap::Command) -> Result<Exit, CommandError> {
    clap_mangen::Man::new(command)
        .render(&mut std::io::stdout())
        .map_err(|e| CommandError::usage(format!("cannot write the man page: {e}")))?;
    Ok(Exit::Ok)
}
