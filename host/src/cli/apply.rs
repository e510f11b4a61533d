//! `git agent-apply [apply]`: read the reply, hand it to the library's
//! [`pipeline::apply`], print the report, and exit by its status.

use super::{ApplyArgs, CommandError, Exit, GlobalArgs, open_workspace, output, read_reply};
use crate::pipeline::{self, ApplyOptions};
use crate::report::{ReportStatus, colorize_diff};

pub fn run(global: &GlobalArgs, args: &ApplyArgs) -> Result<Exit, CommandError> {
    let mut workspace = open_workspace(global)?;
    let reply = read_reply(args.reply.as_deref(), &workspace.config.input_limits())?;
    let applied = pipeline::apply(&mut workspace, reply, &options(global, args))?;
    let report = &applied.report;

    if global.json {
        output::json(report);
    } else {
        output::text(&report.human());
        output::text(&colorize_diff(&report.diff));
    }
    if global.verbose {
        for (_, output) in &applied.plugin_output {
            eprint!("{output}");
        }
    }
    Ok(exit(report.status))
}

/// The exit code for a report's status: a partial apply changed
/// something, so it is not "failed, nothing changed".
pub fn exit(status: ReportStatus) -> Exit {
    match status {
        ReportStatus::Failed => Exit::EditsFailed,
        ReportStatus::ChecksFailed => Exit::CheckFailed,
        ReportStatus::Applied | ReportStatus::Partial | ReportStatus::Unchanged => Exit::Ok,
    }
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
    }
}
