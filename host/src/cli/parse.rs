//! `git agent-apply parse`: what the format understood, edit by edit.

use std::path::PathBuf;

use agent_apply_sdk::types::Severity;
use clap::Args;

use super::{CommandError, Exit, GlobalArgs, open_workspace_ending_at_timeout, read_reply};
use crate::report::{FormatChoice, ParseReport};
use crate::{parts, snippet};

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The reply: a file, or `-` (the default) for stdin.
    #[arg(value_name = "REPLY|-")]
    reply: Option<PathBuf>,
    /// Edit format by name or alias, or `auto`.
    #[arg(short, long, value_name = "NAME|auto", add = clap_complete::engine::ArgValueCandidates::new(super::completions::format_candidates))]
    format: Option<String>,
    /// The model that wrote the reply; picks its best-suited format.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The file edits apply to, for formats that edit one file.
    #[arg(long, value_name = "PATH")]
    file: Option<String>,
}

pub fn run(global: &GlobalArgs, args: &ParseArgs) -> Result<Exit, CommandError> {
    // Writes nothing: a plugin past its time may end the process.
    let workspace = open_workspace_ending_at_timeout(global)?;
    let reply = read_reply(args.reply.as_deref(), &workspace.config.input_limits())?;
    let chosen =
        workspace.registry.choose_reader(args.format.as_deref(), &workspace.config, args.model.as_deref(), &reply)?;
    let limits = workspace.config.input_limits();
    let existing = snippet::on_disk(&workspace.root, &limits);
    let started = std::time::Instant::now();
    let asked = parts::Asked { file: args.file.as_deref(), summaries: true };
    let reading = parts::read(&workspace.registry, &workspace.config, asked, chosen, &reply, &existing)?;
    let parse_ms = started.elapsed().as_secs_f64() * 1000.0;
    let output = &reading.parsed;
    let format =
        FormatChoice { name: reading.parts[0].name.clone(), chosen_by: reading.by.clone(), also: reading.also() };
    let report = ParseReport::new(format, output);
    if global.json {
        super::output::json(&report);
    } else {
        let styled = super::output::stdout_styled();
        super::output::TextOut::with(|out| report.write_human(out, styled));
    }
    if global.verbose {
        let plugin_output: Vec<_> = reading.parts.iter().map(|p| (p.name.clone(), p.instance.stderr())).collect();
        super::output::verbose(&plugin_output, &format!("parse {parse_ms:.1} ms"));
    }
    let malformed = output.diagnostics.iter().any(|d| d.severity == Severity::Error);
    // The process ends after this: nothing in the formats' instances, the
    // edits read or the engine needs to run (see `apply::run`).
    std::mem::forget(reading);
    drop(existing);
    std::mem::forget(workspace);
    Ok(if malformed { Exit::EditsFailed } else { Exit::Ok })
}
