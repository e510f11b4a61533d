//! `git agent-apply [apply]`: parse a reply, apply every edit in memory,
//! then commit (or write the working tree, or only report) all or nothing.

use std::collections::HashMap;
use std::time::Instant;

use agent_apply_sdk::types::{Change, Diagnostic, Edit, EditStatus, FailureKind, File, Outcome, Severity};

use super::{ApplyArgs, CommandError, Context, Exit, GlobalArgs, read_reply, snapshot_hint};
use crate::report::{ApplyReport, FormatChoice, colorize_diff};
use crate::transaction::{CommitRequest, SnapshotError, binary_changes, check_path, planned_paths, read_text};
use crate::{parts, rebase, suffix};

pub fn run(global: &GlobalArgs, args: &ApplyArgs) -> Result<Exit, CommandError> {
    let started = Instant::now();
    let mut context = Context::new(global)?;
    let limits = context.config.input_limits();
    let reply = read_reply(args.reply.as_deref(), &limits)?;
    // The vocabulary loads on another core while the edits are applied.
    let tokens = args.tokens.then(|| {
        let reply = reply.clone();
        std::thread::spawn(move || bpe_openai::o200k_base().count(&reply))
    });
    let repo = if args.dry_run { context.take_git_repo().ok() } else { Some(context.take_git_repo()?) };
    if let Some(repo) = &repo {
        if !args.dry_run {
            repo.recover()?;
        }
    }
    let head = repo.as_ref().map(|r| r.head()).transpose()?;

    let chosen =
        context.registry.choose_reader(args.format.as_deref(), &context.config, args.model.as_deref(), &reply)?;
    let by = chosen.by.clone();
    let parse_started = Instant::now();
    let reading = parts::read(&context.registry, &context.config, args.file.as_deref(), chosen, &reply)?;
    let also = reading.also();
    let parts::Reading { parts: mut format_parts, mut parsed } = reading;
    let parse_ms = parse_started.elapsed().as_secs_f64() * 1000.0;
    // The edits hold what is needed of the reply from here on; a large
    // reply is not kept beside them.
    let reply_bytes = reply.len();
    drop(reply);
    limits.check_edit_count(parsed.edits.len())?;

    // Plan paths: an edit naming a refused path fails on its own, with the reason.
    let mut planned = planned_paths(&parsed.edits, &args.files);
    let mut refused: HashMap<String, SnapshotError> = HashMap::new();
    let mut snapshots: Vec<File> = Vec::new();
    let read = |path: &str| {
        let checked = match &repo {
            Some(repo) => repo.check_edit_path(path, args.allow_ignored),
            None => check_path(&context.root, path).map_err(SnapshotError::from),
        };
        // The checked path is read as it is: the policy walked it once already.
        let text = checked.and_then(|full| read_text(&full, path, &limits))?;
        Ok(text.map(|content| File { path: path.to_string(), content }))
    };
    let mut missing = Vec::new();
    for path in &planned {
        match read(path) {
            Ok(Some(file)) => snapshots.push(file),
            Ok(None) => missing.push(path.clone()),
            Err(error) => {
                refused.insert(path.clone(), error);
            }
        }
    }
    // Only paths that passed the policy may be written.
    planned.retain(|path| !refused.contains_key(path));
    // A missing path may be a tracked file named slightly wrong.
    let (mut aliases, notes) = match (&repo, missing.is_empty()) {
        (Some(repo), false) => suffix::resolve(&missing, suffix::tracked(repo.repository()).iter().map(String::as_str)),
        _ => (Vec::new(), Vec::new()),
    };
    parsed.diagnostics.extend(notes);
    aliases.retain(|alias| match read(&alias.real) {
        Ok(Some(file)) => {
            planned.push(alias.real.clone());
            snapshots.push(file);
            true
        }
        _ => false,
    });
    let edit_refusal =
        |edit: &Edit| std::iter::once(&edit.path).chain(&edit.related_paths).find_map(|p| refused.get(p));
    let allowed: Vec<usize> = (0..parsed.edits.len()).filter(|&i| edit_refusal(&parsed.edits[i]).is_none()).collect();

    let malformed = parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
    // A reply cut off mid-edit is refused whole, even under --partial: the
    // edits before the cut may depend on the ones that never came.
    let partial = args.partial && !parsed.diagnostics.iter().any(Diagnostic::is_cut_off);
    let apply_started = Instant::now();
    let bases = rebase::Bases::new(repo.as_ref().map(|r| r.repository()), &args.base)
        .map_err(|e| CommandError::usage(e.to_string()).hint(e.hint()))?;
    let mut rebased = rebase::Rebased::default();
    let (changes, mut verdicts) = if (malformed && !partial) || allowed.is_empty() {
        (Vec::new(), vec![None; parsed.edits.len()])
    } else {
        let files = suffix::plugin_files(&snapshots, &aliases);
        // Edits written against another version of a file are rebased (#25).
        let (changes, verdicts, notes) = rebase::apply(&mut format_parts, &files, &parsed.edits, &allowed, &bases)?;
        rebased = notes;
        (suffix::real_changes(changes, &aliases), verdicts)
    };
    let apply_ms = apply_started.elapsed().as_secs_f64() * 1000.0;
    // New content that is not text fails its edits, whatever the format said.
    let binary: HashMap<String, SnapshotError> =
        binary_changes(&changes).into_iter().map(|e| (e.path().to_string(), e)).collect();
    let mut changes = changes;
    changes.retain(|change| !change_paths(change).any(|path| binary.contains_key(path)));
    let edit_refusal = |edit: &Edit| {
        let paths = || std::iter::once(&edit.path).chain(&edit.related_paths);
        paths().find_map(|p| refused.get(p)).or_else(|| paths().find_map(|p| binary.get(p)))
    };

    // Outcomes in reply order: refused paths, the plugins' verdicts, and
    // edits never tried because the reply was malformed.
    let outcomes: Vec<Outcome> = parsed
        .edits
        .iter()
        .enumerate()
        .map(|(index, edit)| match (edit_refusal(edit), verdicts[index].take()) {
            (Some(reason), _) => {
                Outcome { hint: snapshot_hint(reason), ..failed(index, FailureKind::Forbidden, reason.to_string()) }
            }
            // Already there (a retried reply): done, not failed.
            (None, Some(outcome)) if outcome.kind == Some(FailureKind::AlreadyApplied) => {
                Outcome { status: EditStatus::Applied, ..outcome }
            }
            (None, Some(outcome)) => outcome,
            (None, None) => failed(index, FailureKind::Malformed, "not applied: the reply could not be read".into()),
        })
        .collect();

    let any_failed = malformed || outcomes.iter().any(|o| o.status == EditStatus::Failed);
    let changes = if any_failed && !partial { Vec::new() } else { changes };
    let before: HashMap<&str, &str> = snapshots.iter().map(|f| (f.path.as_str(), f.content.as_str())).collect();
    let format_name = format_parts[0].name.clone();
    let format = FormatChoice { name: format_name.clone(), chosen_by: by, also };
    let mut report = ApplyReport::new(
        format,
        &parsed,
        &outcomes,
        &changes,
        &|p| before.get(p).copied(),
        args.dry_run,
        partial,
        !args.json && (args.diff || args.dry_run),
        args.json,
    );
    report.note_bases(&rebased);
    report.timings.parse_ms = parse_ms;
    report.timings.apply_ms = apply_ms;

    // A partial apply changed something, so it is not "failed, nothing changed".
    let mut exit = if report.status == "failed" { Exit::EditsFailed } else { Exit::Ok };
    let checks = [context.config.checks.clone(), args.check.clone()].concat();
    // Without a commit, checks run on the new tree in the sandbox first:
    // before the working tree is written, or as a dry run's answer.
    if !changes.is_empty() && (args.dry_run || args.no_commit) && !checks.is_empty() {
        let repo = repo.as_ref().ok_or_else(|| {
            CommandError::usage("--check needs a git repository to run in").hint("run it inside the repository")
        })?;
        let head = head.as_ref().expect("a repository has a HEAD");
        let results = repo.trial_checks(head, &planned, &changes, &checks)?;
        report.timings.checks_ms = results.iter().fold(0.0, |sum, c| sum + c.millis as f64);
        if results.iter().all(|c| c.passed) {
            report.checks = results;
        } else {
            report.mark_checks_failed(results);
            exit = Exit::CheckFailed;
        }
    }
    if !changes.is_empty() && !args.dry_run && exit != Exit::CheckFailed {
        let repo = repo.as_ref().expect("opened unless dry-run");
        let git_started = Instant::now();
        if args.no_commit {
            repo.write_worktree(&snapshots, &planned, &changes)?;
            report.mark_written();
        } else {
            let message = args
                .message
                .clone()
                .unwrap_or_else(|| commit_message(context.config.commit_message.as_deref(), &format_name, &report));
            let request = CommitRequest {
                message,
                format: &format_name,
                dirty: args.dirty.unwrap_or(context.config.dirty.unwrap_or_default()),
                checks: &checks,
                verify: !args.no_verify,
            };
            let head = head.as_ref().expect("a repository has a HEAD");
            match repo.commit(head, &snapshots, &planned, &changes, &request)? {
                Ok(committed) => report.mark_committed(committed),
                Err(failed_checks) => {
                    report.mark_checks_failed(failed_checks.checks);
                    exit = Exit::CheckFailed;
                }
            }
        }
        // Checks run by the commit itself (the trial's were counted above).
        let in_commit =
            if args.no_commit { 0.0 } else { report.checks.iter().fold(0.0, |sum, c| sum + c.millis as f64) };
        report.timings.checks_ms += in_commit;
        report.timings.git_ms = git_started.elapsed().as_secs_f64() * 1000.0 - in_commit;
    }
    report.stats.reply_bytes = reply_bytes;
    report.stats.reply_tokens = tokens.and_then(|counting| counting.join().ok());
    report.timings.total_ms = started.elapsed().as_secs_f64() * 1000.0;

    use std::io::Write as _;
    if args.json {
        // A reader that stops early (`| head`) is not an error of ours.
        let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&report).expect("report serializes"));
    } else {
        let mut out = anstream::stdout();
        let _ = write!(out, "{}", report.human());
        if args.diff || args.dry_run {
            let _ = write!(out, "{}", colorize_diff(&report.diff));
        }
    }
    if context.verbose {
        for part in &format_parts {
            eprint!("{}", part.instance.stderr());
        }
    }
    Ok(exit)
}

/// The paths a change writes or removes.
fn change_paths(change: &Change) -> impl Iterator<Item = &String> {
    let (first, second) = match change {
        Change::Write(file) => (&file.path, None),
        Change::Delete(path) => (path, None),
        Change::Rename(rename) => (&rename.from, Some(&rename.to)),
    };
    std::iter::once(first).chain(second)
}

fn failed(index: usize, kind: FailureKind, message: String) -> Outcome {
    Outcome {
        edit: index as u32,
        status: EditStatus::Failed,
        kind: Some(kind),
        message,
        hint: None,
        applied_path: None,
        lines: None,
        matched: None,
    }
}

/// The commit message: the config template if there is one, else
/// "Edit src/app.py, src/util.py (whole)" and a body listing the files.
fn commit_message(template: Option<&str>, format: &str, report: &ApplyReport) -> String {
    let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
    let shown = if paths.len() > 3 {
        format!("{} and {} more files", paths[..3].join(", "), paths.len() - 3)
    } else {
        paths.join(", ")
    };
    let summary = format!("Edit {shown} ({format})");
    if let Some(template) = template {
        return template
            .replace("{format}", format)
            .replace("{files}", &paths.join(", "))
            .replace("{summary}", &summary);
    }
    let mut message = format!("{summary}\n\nApplied by git agent-apply from a model's reply in the {format} format.\n");
    for file in &report.files {
        message += &format!("\n{} {}", file.action, file.path);
    }
    message.push('\n');
    message
}
