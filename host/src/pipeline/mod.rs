//! The library's entry point for applying a reply: read it with its
//! format(s), snapshot the files it names through the path policy, apply
//! every edit in memory, then commit (or write the working tree, or only
//! report) all or nothing. The CLI, the MCP server and Rust callers all go
//! through [`apply`].
//!
//! ```no_run
//! use agent_apply::{ApplyOptions, Workspace, pipeline};
//!
//! let mut workspace = Workspace::open(std::path::Path::new("."))?;
//! let reply = std::fs::read_to_string("reply.md")?;
//! let applied = pipeline::apply(&mut workspace, reply, &ApplyOptions::default())?;
//! println!("{:?}: {}", applied.report.status, applied.report.reflection);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::thread::JoinHandle;
use std::time::Instant;

use agent_apply_sdk::types::{Change, Diagnostic, Edit, EditStatus, FailureKind, File, Outcome, ParseOutput, Severity};

use crate::Error;
use crate::limits::Reply;
use crate::parts::{self, Part};
use crate::rebase;
use crate::registry::ChosenBy;
use crate::report::{ApplyReport, FormatChoice, REJECTED, ReportStatus, Shown};
use crate::snippet;
use crate::suffix::{self, Alias};
use crate::transaction::{
    CommitRequest, DirtyPolicy, GitRepo, Head, SnapshotError, binary_changes, check_path, planned_paths, read_text,
};
use crate::workspace::Workspace;

mod review;
pub use review::EditPreview;

/// How to apply a reply; the default is what `git agent-apply` does with
/// no flags: choose the format, apply every edit or none, commit.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Format name or alias; `None` or `auto` detects it.
    pub format: Option<String>,
    /// The model that wrote the reply, for its configured format.
    pub model: Option<String>,
    /// The file edits apply to, for formats that edit one file.
    pub file: Option<String>,
    /// Candidate files an edit may be retried on.
    pub files: Vec<String>,
    /// Compute and report; write nothing (not even objects).
    pub dry_run: bool,
    /// Write the working tree only; no commit.
    pub no_commit: bool,
    /// Apply the edits that succeed and report the rest.
    pub partial: bool,
    /// Commands run on the result before it is committed (after the
    /// config's own checks).
    pub checks: Vec<String>,
    /// Run the pre-commit hook in the sandbox.
    pub verify: bool,
    /// The commit message; `None` uses the config template or the default.
    pub message: Option<String>,
    /// Edit files git ignores.
    pub allow_ignored: bool,
    /// What to do with uncommitted changes in edited files; `None` takes
    /// the config's, else commit-first.
    pub dirty: Option<DirtyPolicy>,
    /// Keep a unified diff of the change in [`ApplyReport::diff`].
    pub diff: bool,
    /// List each file's changed line ranges in the report.
    pub ranges: bool,
    /// Count the reply's tokens into the report's stats.
    pub tokens: bool,
    /// The versions the reply was written against (`--base`): `REV` for
    /// every file, `PATH=REV` for one; its edits are rebased from there.
    pub base: Vec<String>,
    /// Keep each edit's one-line summary, for a preview that shows them
    /// (`--interactive`). A report tells outcomes, not summaries, so by
    /// default the formats are asked for none.
    pub summaries: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            format: None,
            model: None,
            file: None,
            files: Vec::new(),
            dry_run: false,
            no_commit: false,
            partial: false,
            checks: Vec::new(),
            verify: true,
            message: None,
            allow_ignored: false,
            dirty: None,
            diff: false,
            ranges: true,
            tokens: false,
            base: Vec::new(),
            summaries: false,
        }
    }
}

/// What an apply did.
pub struct Applied {
    pub report: ApplyReport,
    /// What each format plugin wrote to stderr (for `--verbose`).
    pub plugin_output: Vec<(String, String)>,
}

/// The files a reply reads, through the path policy: the snapshots, the
/// paths that may be written, the refusals by path, and the tracked files a
/// missing path was taken to mean.
struct Plan {
    planned: Vec<String>,
    snapshots: Vec<File>,
    refused: HashMap<String, SnapshotError>,
    aliases: Vec<Alias>,
}

impl Plan {
    /// Why `edit` may not be applied, if a path it names was refused.
    fn refusal(&self, edit: &Edit) -> Option<&SnapshotError> {
        std::iter::once(&edit.path).chain(&edit.related_paths).find_map(|p| self.refused.get(p))
    }
}

/// Some edits tried in memory: the new contents, every edit's outcome in
/// reply order, which were rebased, and notes on the paths the edits were
/// taken to mean.
#[derive(Default)]
struct Tried {
    changes: Vec<Change>,
    outcomes: Vec<Outcome>,
    rebased: rebase::Rebased,
    notes: Vec<Diagnostic>,
}

/// Apply `reply` (text, checked against the input limits here, or a reply
/// read and checked already) in `workspace` as `options` say. Edit failures are in the
/// report (status `failed`), not errors; an `Err` means the reply or the
/// repository could not be worked on at all, and nothing was changed.
pub fn apply(workspace: &mut Workspace, reply: impl Into<Reply>, options: &ApplyOptions) -> Result<Applied, Error> {
    prepare(workspace, reply, options)?.apply(&[])
}

/// A reply read, the files it names snapshotted and every edit tried in
/// memory: all that [`apply`] does before it writes. Nothing is written
/// and no lock is held until [`Prepared::apply`], so a caller may take its
/// time choosing edits (`--interactive`, with [`Prepared::preview`]); the
/// transaction refuses, as a conflict, a branch or file that moved meanwhile.
pub struct Prepared<'w> {
    workspace: &'w Workspace,
    options: ApplyOptions,
    repo: Option<GitRepo>,
    head: Option<Head>,
    by: ChosenBy,
    also: Vec<String>,
    parts: Vec<Part>,
    parsed: ParseOutput,
    plan: Plan,
    /// The reply could not be read whole (an error diagnostic).
    malformed: bool,
    /// `--partial`, unless the reply was cut off: the edits before the cut
    /// may depend on the ones that never came.
    partial: bool,
    /// Every edit, tried together.
    tried: Tried,
    tokens: Option<JoinHandle<usize>>,
    reply_bytes: usize,
    parse_ms: f64,
    apply_ms: f64,
    /// Time spent working, not waiting for a person between the steps.
    work_ms: f64,
}

/// Read `reply`, snapshot the files it names and try every edit in memory;
/// write nothing. Errors are [`apply`]'s.
pub fn prepare<'w>(
    workspace: &'w mut Workspace,
    reply: impl Into<Reply>,
    options: &ApplyOptions,
) -> Result<Prepared<'w>, Error> {
    let started = Instant::now();
    let limits = workspace.config.input_limits();
    let reply = limits.checked(reply.into())?;
    // The vocabulary loads on another core while the edits are applied.
    let tokens = options.tokens.then(|| crate::tokens::count_in_background(&reply)).transpose()?;
    let repo = if options.dry_run { workspace.git_repo().ok() } else { Some(workspace.git_repo()?) };
    if let (Some(repo), false) = (&repo, options.dry_run) {
        repo.recover()?;
    }
    let head = repo.as_ref().map(|r| r.head()).transpose()?;
    let workspace: &'w Workspace = workspace;

    let config = &workspace.config;
    let chosen =
        workspace.registry.choose_reader(options.format.as_deref(), config, options.model.as_deref(), &reply)?;
    let parse_started = Instant::now();
    let existing = snippet::on_disk(&workspace.root, &limits);
    let asked = parts::Asked { file: options.file.as_deref(), summaries: options.summaries };
    let reading = parts::read(&workspace.registry, config, asked, chosen, &reply, &existing)?;
    let also = reading.also();
    let parts::Reading { parts: format_parts, mut parsed, by } = reading;
    let parse_ms = millis(parse_started);
    // The edits hold what is needed of the reply from here on; a large
    // reply is not kept beside them.
    let reply_bytes = reply.len();
    drop(reply);
    limits.check_edit_count(parsed.edits.len())?;

    let (plan, notes) = plan(workspace, repo.as_ref(), &parsed.edits, options)?;
    parsed.diagnostics.extend(notes);
    let malformed = parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
    let partial = options.partial && !parsed.diagnostics.iter().any(Diagnostic::is_cut_off);
    let mut prepared = Prepared {
        workspace,
        options: options.clone(),
        repo,
        head,
        by,
        also,
        parts: format_parts,
        parsed,
        plan,
        malformed,
        partial,
        tried: Tried::default(),
        tokens,
        reply_bytes,
        parse_ms,
        apply_ms: 0.0,
        work_ms: 0.0,
    };
    let apply_started = Instant::now();
    prepared.tried = prepared.try_edits(&(0..prepared.parsed.edits.len()).collect::<Vec<_>>())?;
    prepared.apply_ms = millis(apply_started);
    prepared.work_ms = millis(started);
    Ok(prepared)
}

impl Prepared<'_> {
    /// Write the edits all or nothing (or, under `--partial`, those that
    /// apply), leaving out the edits at the indexes in `rejected`: they are
    /// reported as rejected by the user. With none rejected this is [`apply`].
    pub fn apply(mut self, rejected: &[usize]) -> Result<Applied, Error> {
        let started = Instant::now();
        if !rejected.is_empty() {
            let kept: Vec<usize> = (0..self.parsed.edits.len()).filter(|i| !rejected.contains(i)).collect();
            let apply_started = Instant::now();
            self.tried = self.try_edits(&kept)?;
            self.apply_ms += millis(apply_started);
        }
        let Tried { changes, outcomes, rebased, notes } = std::mem::take(&mut self.tried);
        // The formats are done: their instances' memory (the kept reply and
        // payloads of a large reply) is freed before the report and the write.
        let plugin_output: Vec<(String, String)> =
            self.parts.drain(..).map(|part| (part.name, part.instance.stderr())).collect();
        // Where a plugin past its time ends the process, no call may run
        // once writing can begin.
        self.workspace.registry.runtime().end_calls();
        self.parsed.diagnostics.extend(notes);
        let any_failed = self.malformed
            || outcomes.iter().any(|o| o.status == EditStatus::Failed && !rejected.contains(&(o.edit as usize)));
        let changes = if any_failed && !self.partial { Vec::new() } else { changes };
        let (workspace, options, plan) = (self.workspace, &self.options, &self.plan);
        let before: HashMap<&str, &str> =
            plan.snapshots.iter().map(|f| (f.path.as_str(), f.content.as_str())).collect();
        let format =
            FormatChoice { name: plugin_output[0].0.clone(), chosen_by: self.by.clone(), also: self.also.clone() };
        let shown =
            Shown { dry_run: options.dry_run, partial: self.partial, diff: options.diff, ranges: options.ranges };
        let mut report =
            ApplyReport::new(format, &self.parsed, outcomes, rejected, &changes, &|p| before.get(p).copied(), shown);
        report.note_bases(&rebased);
        report.timings.parse_ms = self.parse_ms;
        report.timings.apply_ms = self.apply_ms;
        if let (Some(repo), Some(head)) = (&self.repo, &self.head) {
            write(workspace, repo, head, plan, &changes, options, &mut report)?;
        } else if !changes.is_empty() && options.dry_run && !checks(workspace, options).is_empty() {
            return Err(Error::ChecksNeedRepository);
        }
        report.stats.reply_bytes = self.reply_bytes;
        report.stats.reply_tokens = self.tokens.take().and_then(|counting| counting.join().ok());
        report.timings.total_ms = self.work_ms + millis(started);
        Ok(Applied { report, plugin_output })
    }

    /// Try the `selected` edits in memory, on the snapshots (none when the
    /// reply could not be read and the run is not partial).
    fn try_edits(&mut self, selected: &[usize]) -> Result<Tried, Error> {
        let bases = rebase::Bases::new(self.repo.as_ref(), &self.options.base)?;
        let skip_all = self.malformed && !self.partial;
        apply_edits(&mut self.parts, &self.plan, &self.parsed.edits, selected, skip_all, &bases)
    }
}

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The config's checks, then the caller's.
fn checks(workspace: &Workspace, options: &ApplyOptions) -> Vec<String> {
    [workspace.config.checks.clone(), options.checks.clone()].concat()
}

/// Read the files the edits name, each through the path policy: an edit
/// naming a refused path fails on its own, with the reason. A missing path
/// may be a tracked file named slightly wrong (the notes say which).
fn plan(
    workspace: &Workspace,
    repo: Option<&GitRepo>,
    edits: &[Edit],
    options: &ApplyOptions,
) -> Result<(Plan, Vec<Diagnostic>), Error> {
    let limits = workspace.config.input_limits();
    let read = |path: &str| {
        let checked = match repo {
            Some(repo) => repo.check_edit_path(path, options.allow_ignored),
            None => check_path(&workspace.root, path).map_err(SnapshotError::from),
        };
        // The checked path is read as it is: the policy walked it once already.
        let text = checked.and_then(|full| read_text(&full, path, &limits))?;
        Ok::<_, SnapshotError>(text.map(|content| File { path: path.to_string(), content }))
    };
    let mut plan = Plan {
        planned: planned_paths(edits, &options.files),
        snapshots: Vec::new(),
        refused: HashMap::new(),
        aliases: Vec::new(),
    };
    let mut missing = Vec::new();
    for path in &plan.planned {
        match read(path) {
            Ok(Some(file)) => plan.snapshots.push(file),
            Ok(None) => missing.push(path.clone()),
            Err(error) => {
                plan.refused.insert(path.clone(), error);
            }
        }
    }
    // Only paths that passed the policy may be written.
    plan.planned.retain(|path| !plan.refused.contains_key(path));
    let (mut aliases, notes) = match (repo, missing.is_empty()) {
        (Some(repo), false) => suffix::resolve(&missing, suffix::tracked(repo.repository()).iter().map(String::as_str)),
        _ => (Vec::new(), Vec::new()),
    };
    aliases.retain(|alias| match read(&alias.real) {
        Ok(Some(file)) => {
            plan.planned.push(alias.real.clone());
            plan.snapshots.push(file);
            true
        }
        _ => false,
    });
    plan.aliases = aliases;
    Ok((plan, notes))
}

/// Apply the `selected` edits whose paths passed the policy, each part with
/// its own format (none when `skip_all`: the reply was malformed and the run
/// is not partial). Returns the changes, and every edit's outcome in reply
/// order: refused paths, the formats' verdicts, edits never tried, and
/// edits not selected (reported as the user's rejections).
fn apply_edits(
    format_parts: &mut [Part],
    plan: &Plan,
    edits: &[Edit],
    selected: &[usize],
    skip_all: bool,
    bases: &rebase::Bases<'_>,
) -> Result<Tried, Error> {
    let allowed: Vec<usize> = selected.iter().copied().filter(|&i| plan.refusal(&edits[i]).is_none()).collect();
    let (mut changes, verdicts, rebased, notes) = if skip_all || allowed.is_empty() {
        (Vec::new(), vec![None; edits.len()], rebase::Rebased::default(), Vec::new())
    } else {
        // Edits written against another version of a file are rebased (#25);
        // a missing path that may mean a tracked file is settled by how the
        // edits apply either way.
        let run = |aliases: &[Alias]| {
            rebase::apply(format_parts, &suffix::plugin_files(&plan.snapshots, aliases), edits, &allowed, bases)
        };
        let suffix::Settled { aliases, run: (changes, verdicts, rebased), notes } =
            suffix::settle(&plan.aliases, &plan.snapshots, edits, run)?;
        (suffix::real_changes(changes, &aliases), verdicts, rebased, notes)
    };
    // New content that is not text fails its edits, whatever the format said.
    let binary: HashMap<String, SnapshotError> =
        binary_changes(&changes).into_iter().map(|e| (e.path().to_string(), e)).collect();
    changes.retain(|change| !change_paths(change).any(|path| binary.contains_key(path)));
    let refusal = |edit: &Edit| {
        plan.refusal(edit)
            .or_else(|| std::iter::once(&edit.path).chain(&edit.related_paths).find_map(|p| binary.get(p)))
    };
    // Collected in place: the verdicts' buffer becomes the outcomes'.
    let outcomes = verdicts
        .into_iter()
        .enumerate()
        .map(|(index, verdict)| match (refusal(&edits[index]), verdict) {
            (Some(reason), _) => {
                Outcome { hint: reason.hint(), ..failed(index, FailureKind::Forbidden, reason.to_string()) }
            }
            // Already there (a retried reply): done, not failed.
            (None, Some(outcome)) if outcome.kind == Some(FailureKind::AlreadyApplied) => {
                Outcome { status: EditStatus::Applied, ..outcome }
            }
            (None, Some(outcome)) => outcome,
            (None, None) if !selected.contains(&index) => rejected(index),
            (None, None) => failed(index, FailureKind::Malformed, "not applied: the reply could not be read".into()),
        })
        .collect();
    Ok(Tried { changes, outcomes, rebased, notes })
}

/// Write what the report says was applied: checks first in a sandbox when
/// there is no commit to run them in, then the working tree or the commit.
fn write(
    workspace: &Workspace,
    repo: &GitRepo,
    head: &Head,
    plan: &Plan,
    changes: &[Change],
    options: &ApplyOptions,
    report: &mut ApplyReport,
) -> Result<(), Error> {
    if changes.is_empty() {
        return Ok(());
    }
    let checks = checks(workspace, options);
    // Without a commit, checks run on the new tree in the sandbox first:
    // before the working tree is written, or as a dry run's answer.
    if (options.dry_run || options.no_commit) && !checks.is_empty() {
        let results = repo.trial_checks(head, &plan.planned, changes, &checks)?;
        report.timings.checks_ms = results.iter().fold(0.0, |sum, c| sum + c.millis as f64);
        if !results.iter().all(|c| c.passed) {
            report.mark_checks_failed(results);
            return Ok(());
        }
        report.checks = results;
    }
    if options.dry_run {
        return Ok(());
    }
    let git_started = Instant::now();
    if options.no_commit {
        repo.write_worktree(&plan.snapshots, &plan.planned, changes)?;
        report.mark_written();
        report.timings.git_ms = millis(git_started);
        return Ok(());
    }
    let format = report.format.name.clone();
    let message = options
        .message
        .clone()
        .unwrap_or_else(|| commit_message(workspace.config.commit_message.as_deref(), &format, report));
    let request = CommitRequest {
        message,
        format: &format,
        dirty: options.dirty.unwrap_or(workspace.config.dirty.unwrap_or_default()),
        checks: &checks,
        verify: options.verify,
    };
    match repo.commit(head, &plan.snapshots, &plan.planned, changes, &request)? {
        Ok(committed) => report.mark_committed(committed),
        Err(failed_checks) => report.mark_checks_failed(failed_checks.checks),
    }
    debug_assert!(report.status != ReportStatus::Unchanged);
    // Checks run by the commit itself are counted apart from git's time.
    let in_commit = report.checks.iter().fold(0.0, |sum, c| sum + c.millis as f64);
    report.timings.checks_ms += in_commit;
    report.timings.git_ms = millis(git_started) - in_commit;
    Ok(())
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

/// An edit the caller left out: not applied, and reported as rejected by
/// the user (the report reads the rejected indexes, not this status).
fn rejected(index: usize) -> Outcome {
    Outcome { kind: None, ..failed(index, FailureKind::Malformed, REJECTED.into()) }
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
