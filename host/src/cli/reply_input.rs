//! Reading the reply, with what a person at a terminal needs to hear: how to
//! paste one, that what they gave was empty, or that the word they typed
//! was a misspelt command rather than a reply file.

use std::io::IsTerminal;
use std::path::Path;

use super::CommandError;
use crate::limits::{CheckedReply, InputLimits};

/// The reply text, from a file or stdin for `-` or no argument, read no
/// further than the reply limit and checked to be text with lines in limits.
pub fn read_reply(source: Option<&Path>, limits: &InputLimits) -> Result<CheckedReply, CommandError> {
    let (read, from) = match source {
        Some(path) if path != Path::new("-") => {
            let file = std::fs::File::open(path).map_err(|e| {
                let error = CommandError::usage(format!("cannot read the reply {}: {e}", path.display()));
                match misspelt_command(path) {
                    Some(command) => error.hint(format!("did you mean the command `git agent-apply {command}`?")),
                    None => error,
                }
            })?;
            let len = file.metadata().map_or(0, |m| m.len());
            (limits.read_reply_sized(file, len), format!("{}", path.display()))
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!(
                    "Paste the reply, then press Ctrl-D on a line of its own (or pass a file: git agent-apply reply.md)."
                );
            }
            (limits.read_reply(stdin.lock()), "stdin".to_string())
        }
    };
    let reply = read.map_err(|e| CommandError::usage(format!("cannot read the reply from {from}: {e}")))??;
    if reply.trim().is_empty() {
        return Err(CommandError::usage(format!("the reply is empty (read from {from})"))
            .hint("pass the model's reply as a file, or pipe it in: `model | git agent-apply -`"));
    }
    Ok(reply)
}

/// The command `path` looks like a misspelling of, if it is a bare word
/// close to one (`formts` for `formats`).
fn misspelt_command(path: &Path) -> Option<String> {
    let word = path.to_str().filter(|w| !w.contains(['/', '.']))?;
    let command = <super::Cli as clap::CommandFactory>::command();
    command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| (strsim::jaro(word, c.get_name()), c.get_name().to_string()))
        .filter(|(similarity, _)| *similarity > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}
