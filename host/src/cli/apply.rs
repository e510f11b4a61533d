//! `git agent-apply [apply]`: parse a reply, apply every edit in memory, and
//! (for now) show the result without writing it.

use std::collections::HashMap;

use agent_apply_sdk::types::{EditStatus, Severity};

use super::{ApplyArgs, CommandError, Context, Exit, GlobalArgs, format_options, read_reply};
use crate::report::{ApplyReport, FormatChoice, colorize_diff};
use crate::transaction::{planned_paths, read_snapshots};

pub fn run(global: &GlobalArgs, args: &ApplyArgs) -> Result<Exit, CommandError> {
    if !args.dry_run {
        return Err(CommandError::usage("writing edits to the repository is not available in this build yet")
            .hint("pass --dry-run to see what the reply would change"));
    }
    let reply = read_reply(args.reply.as_deref())?;
    let context = Context::new(global)?;
    let mut chosen = context.registry.choose(args.format.as_deref(), &context.config, args.model.as_deref(), &reply)?;
    let options = format_options(&context.config, &chosen.entry.name, args.file.as_deref());
    let parsed = chosen.instance.parse(&reply, &options)?;

    let paths = planned_paths(&parsed.edits, &args.files);
    let snapshots = read_snapshots(&context.root, &paths)?;
    let before: HashMap<String, String> = snapshots.iter().map(|f| (f.path.clone(), f.content.clone())).collect();
    let malformed = parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
    let output = if malformed && !args.partial {
        agent_apply_sdk::types::ApplyOutput { changes: Vec::new(), outcomes: Vec::new() }
    } else {
        chosen.instance.apply(&snapshots, &parsed.edits, &options)?.map_err(|message| {
            CommandError::usage(format!("format '{}' refused the request: {message}", chosen.entry.name))
        })?
    };
    let any_failed = output.outcomes.iter().any(|o| o.status == EditStatus::Failed);
    let changes = if any_failed && !args.partial { Vec::new() } else { output.changes };
    let format = FormatChoice { name: chosen.entry.name.clone(), chosen_by: chosen.by.clone() };
    let report = ApplyReport::new(format, &parsed, &output.outcomes, &changes, &|p| before.get(p).cloned(), true);

    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serializes"));
    } else {
        let mut out = anstream::stdout();
        use std::io::Write as _;
        let _ = write!(out, "{}", report.human());
        if args.diff || args.dry_run {
            let _ = write!(out, "{}", colorize_diff(&report.diff));
        }
    }
    if context.verbose {
        eprint!("{}", chosen.instance.stderr());
    }
    Ok(if report.status == "failed" { Exit::EditsFailed } else { Exit::Ok })
}
