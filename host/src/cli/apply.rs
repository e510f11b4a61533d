//! `git agent-apply [apply]`: read the reply, hand it to the library's
//! [`pipeline::apply`] (or, under `--interactive`, prepare it, ask about
//! each edit, and apply the accepted ones), print the report, and exit by
//! its status.

use super::{
    ApplyArgs, CommandError, Exit, GlobalArgs, interactive, open_workspace, open_workspace_ending_at_timeout, output,
    read_reply,
};
use crate::pipeline::{self, ApplyOptions};
use crate::report::{ReportStatus, Timings, colorize_diff};

pub fn run(global: &GlobalArgs, args: &ApplyArgs) -> Result<Exit, CommandError> {
    // Before the reply is read: a run that cannot ask refuses at once
    // rather than after a paste.
    let mut terminal = if args.interactive { Some(interactive::Terminal::open()?) } else { None };
    // A run that asks about edits keeps plugin calls that trap: ending the
    // process at a plugin's time limit could leave the terminal raw.
    let mut workspace = match terminal {
        Some(_) => open_workspace(global)?,
        None => open_workspace_ending_at_timeout(global)?,
    };
    let reply = read_reply(args.reply.as_deref(), &workspace.config.input_limits())?;
    let applied = match &mut terminal {
        Some(terminal) => interactive::review(terminal, &mut workspace, reply, &options(global, args))?,
        None => pipeline::apply(&mut workspace, reply, &options(global, args))?,
    };
    let report = &applied.report;

    if global.json {
        output::json(report);
    } else {
        let styled = output::stdout_styled();
        output::TextOut::with(|out| report.write_human(out, styled));
        if styled {
            output::text(&colorize_diff(&report.diff));
        } else {
            output::text(&report.diff);
        }
    }
    if global.verbose {
        output::verbose(&applied.plugin_output, &timings(&report.timings));
    }
    let exit = exit(report.status);
    // The process ends after this: the workspace's wasmtime engine, loaded
    // formats and linker go with it, and the report. Dropping them first
    // was a twentieth of a one-edit run's instructions, and the report of
    // 20,000 edits another 16 million (a free for each of its strings);
    // nothing in them needs to run.
    std::mem::forget(applied);
    std::mem::forget(workspace);
    Ok(exit)
}

/// The exit code for a report's status: a partial apply changed
/// something, so it is not "failed, nothing changed"; edits the user
/// rejected are not failures either.
pub fn exit(status: ReportStatus) -> Exit {
    match status {
        ReportStatus::Failed => Exit::EditsFailed,
        ReportStatus::ChecksFailed => Exit::CheckFailed,
        ReportStatus::Applied | ReportStatus::Partial | ReportStatus::Unchanged | ReportStatus::Rejected => Exit::Ok,
    }
}

fn timings(t: &Timings) -> String {
    format!(
        "parse {:.1} ms, apply {:.1} ms, git {:.1} ms, checks {:.1} ms, total {:.1} ms",
        t.parse_ms, t.apply_ms, t.git_ms, t.checks_ms, t.total_ms
    )
}

fn options(global: &GlobalArgs, args: &ApplyArgs) -> ApplyOptions {
    ApplyOptions {
        format: args.format.clone(),
        model: args.model.clone(),
        file: args.file.clone(),
        files: args.files.clone(),
        dry_run: args.dry_run,
        no_commit: args.no_commit,
        partial: args.partial,
        checks: args.check.clone(),
        verify: !args.no_verify,
        message: args.message.clone(),
        allow_ignored: args.allow_ignored,
        dirty: args.dirty,
        // Text shows the diff when asked (and always for a dry run); JSON
        // lists changed ranges instead.
        diff: !global.json && (args.diff || args.dry_run),
        ranges: global.json,
        tokens: args.tokens,
        base: args.base.clone(),
        // Only the questions show each edit's summary.
        summaries: args.interactive,
    }
}
