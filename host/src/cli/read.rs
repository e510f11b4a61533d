//! `git agent-apply read`: a file as a model should read it for a format.

use std::path::PathBuf;

use agent_apply_sdk::types::{File, LineRange};
use clap::Args;

use super::{CommandError, Context, Exit, GlobalArgs, format_options, snapshot_hint};
use crate::transaction::read_text;

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file to show.
    path: PathBuf,
    /// Edit format whose view to render.
    #[arg(short, long, value_name = "NAME")]
    format: String,
    /// Line ranges to show, e.g. `10-20,45-55` or `7` (default: the whole file).
    #[arg(long, value_name = "RANGES", value_parser = parse_ranges)]
    lines: Option<LineRanges>,
}

/// The value of `--lines` (a newtype, so clap takes it as one value).
#[derive(Debug, Clone, PartialEq)]
pub struct LineRanges(pub Vec<LineRange>);

/// `10-20,45-55` → ranges; `7` is line 7 alone.
pub fn parse_ranges(text: &str) -> Result<LineRanges, String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let (start, end) = part.split_once('-').unwrap_or((part, part));
            let number = |s: &str| {
                s.trim().parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("`{part}` is not a line range; write START-END with 1-based line numbers, e.g. 10-20")
                })
            };
            let (start, end) = (number(start)?, number(end)?);
            if end < start {
                return Err(format!("`{part}` ends before it starts"));
            }
            Ok(LineRange::new(start, end))
        })
        .collect::<Result<_, _>>()
        .map(LineRanges)
}

pub fn run(global: &GlobalArgs, args: &ReadArgs) -> Result<Exit, CommandError> {
    let context = Context::new(global)?;
    let entry = context.registry.find(&args.format)?.clone();
    let path = args.path.to_string_lossy().replace('\\', "/");
    // A file too large or too odd to edit is refused here too: a model that
    // reads it could not edit it.
    let content = match read_text(&args.path, &path, &context.config.input_limits()) {
        Ok(Some(content)) => content,
        Ok(None) => return Err(CommandError::usage(format!("cannot read {path}: no such file"))),
        Err(error) => {
            let hint = snapshot_hint(&error);
            return Err(CommandError { hints: hint.into_iter().collect(), ..CommandError::usage(error.to_string()) });
        }
    };
    let file = File { path, content };
    let mut instance = context.registry.instantiate(&entry)?;
    let options = format_options(&context.config, &entry.name, None);
    let view = instance.render(&file, args.lines.as_ref().map_or(&[][..], |r| &r.0), &options)?.map_err(|message| {
        CommandError::usage(format!("format '{}' cannot render {}: {message}", entry.name, file.path))
    })?;
    print!("{view}");
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_ranges("10-20,45-55").unwrap().0, vec![LineRange::new(10, 20), LineRange::new(45, 55)]);
        assert_eq!(parse_ranges("7").unwrap().0, vec![LineRange::new(7, 7)]);
        assert!(parse_ranges("0-3").is_err());
        assert!(parse_ranges("9-3").unwrap_err().contains("ends before"));
        assert!(parse_ranges("a-b").unwrap_err().contains("START-END"));
    }
}
