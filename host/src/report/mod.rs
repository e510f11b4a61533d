//! What a run tells its caller: human text, or one JSON object with a
//! `schema` version, and the `reflection` an agent hands back to its model.

use agent_apply_sdk::text::line_count;
use agent_apply_sdk::types::{
    Change, Edit, EditStatus, FailureKind, LineRange, MatchInfo, Outcome, ParseOutput, Severity,
};
use schemars::JsonSchema;
use serde::Serialize;

use crate::registry::ChosenBy;
use crate::transaction::{CheckResult, Committed};

mod diff;
mod parse;
mod reflection;
mod text;

pub use diff::{RangeChange, line_hunks, range_changes};
pub use parse::{CommandJson, DiagnosticJson, ParseReport, ParsedEditJson};
use parse::{command_json, reply_lines};
pub use text::{colorize_diff, unified_diff};

/// Version of the JSON objects this module prints.
pub const SCHEMA: u32 = 1;

/// What a run did, as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReportStatus {
    /// Every edit applied (and was committed or written, unless a dry run).
    Applied,
    /// Under `--partial`: some edits applied, the others are reported.
    Partial,
    /// An edit failed or the reply could not be read: nothing changed.
    Failed,
    /// The edits applied but a check failed: everything was rolled back.
    ChecksFailed,
    /// Every edit was already in the files: nothing to change.
    Unchanged,
    /// Under `--interactive`: the user rejected every edit that would change
    /// something, so nothing changed.
    Rejected,
}

/// What happened to one edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EditState {
    Applied,
    Failed,
    /// The file already held what the edit writes (a retried reply).
    AlreadyApplied,
    /// Applied to the older version of the file it was written against,
    /// and merged cleanly into the file as it is now.
    Rebased,
    /// Not applied: the user rejected it under `--interactive`.
    Rejected,
}

impl EditState {
    /// Whether the edit took effect (now or earlier).
    pub fn applied(self) -> bool {
        !matches!(self, EditState::Failed | EditState::Rejected)
    }
}

/// The message of an edit the user rejected.
pub const REJECTED: &str = "rejected by the user: not applied";

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileAction {
    Created,
    Modified,
    Deleted,
    Renamed,
}

impl std::fmt::Display for FileAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileAction::Created => "created",
            FileAction::Modified => "modified",
            FileAction::Deleted => "deleted",
            FileAction::Renamed => "renamed",
        })
    }
}

/// What a report shows besides outcomes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    pub dry_run: bool,
    /// `--partial` was given (and the reply was not cut off).
    pub partial: bool,
    /// Keep a unified diff of the change.
    pub diff: bool,
    /// List each file's changed line ranges.
    pub ranges: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FormatChoice {
    pub name: String,
    #[serde(flatten)]
    pub chosen_by: ChosenBy,
    /// Other formats the reply mixed in, whose edits were read too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

/// What happened to one file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileJson {
    pub path: String,
    pub action: FileAction,
    pub from: Option<String>,
    pub lines_before: usize,
    pub lines_after: usize,
    /// Each changed range, top to bottom (JSON reports only), so a UI can
    /// preview the change range by range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<RangeChange>>,
    /// The version of the file the edits were applied to: the working tree's,
    /// or an earlier one they were rebased from (`--base`, `read`, HEAD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<crate::rebase::FileBase>,
}

/// What happened to one edit.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EditJson {
    pub index: usize,
    pub path: String,
    pub status: EditState,
    #[serde(serialize_with = "crate::schema::serialize_failure_kind")]
    #[schemars(schema_with = "crate::schema::failure_kind")]
    pub kind: Option<FailureKind>,
    pub message: String,
    pub hint: Option<String>,
    pub applied_path: Option<String>,
    #[schemars(schema_with = "crate::schema::optional_line_range")]
    pub lines: Option<LineRange>,
    #[schemars(schema_with = "crate::schema::line_range")]
    pub reply_lines: LineRange,
    /// How the edit was placed (ladder level, relocation, retry, candidates
    /// per level), when its format says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::match_info")]
    pub matched: Option<MatchInfo>,
}

impl EditJson {
    fn new(outcome: Outcome, edit: &Edit) -> Self {
        EditJson {
            index: outcome.edit as usize + 1,
            path: edit.path.clone(),
            status: edit_status(&outcome),
            kind: outcome.kind,
            message: outcome.message,
            hint: outcome.hint,
            applied_path: outcome.applied_path,
            lines: outcome.lines,
            reply_lines: reply_lines(&edit.span),
            matched: outcome.matched,
        }
    }
}

impl FileJson {
    /// What `change` did to its file (`before` gives the files as they
    /// were); its diff is added to `diff` when shown.
    fn new<'a>(change: &Change, before: &dyn Fn(&str) -> Option<&'a str>, shown: Shown, diff: &mut String) -> Self {
        let (path, from, action, new) = match change {
            Change::Write(file) => {
                let action = if before(&file.path).is_some() { FileAction::Modified } else { FileAction::Created };
                (file.path.clone(), None, action, Some(file.content.as_str()))
            }
            Change::Delete(path) => (path.clone(), None, FileAction::Deleted, None),
            Change::Rename(r) => (r.to.clone(), Some(r.from.clone()), FileAction::Renamed, Some(r.content.as_str())),
        };
        let old: Option<&str> = before(from.as_deref().unwrap_or(&path));
        // Diffing big files costs more than applying to them: only when shown.
        if shown.diff {
            *diff += &unified_diff(from.as_deref().unwrap_or(&path), &path, old, new);
        }
        FileJson {
            changes: shown.ranges.then(|| range_changes(old.unwrap_or(""), new.unwrap_or(""))),
            lines_before: old.map_or(0, line_count),
            lines_after: new.map_or(0, line_count),
            path,
            from,
            action,
            base: None,
        }
    }
}

/// Milliseconds spent in each phase.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Timings {
    pub parse_ms: f64,
    pub apply_ms: f64,
    /// Objects, commit, working tree and index (checks not included).
    pub git_ms: f64,
    /// Checks and the pre-commit hook in the sandbox.
    pub checks_ms: f64,
    pub total_ms: f64,
}

/// What the reply cost.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Stats {
    pub reply_bytes: usize,
    /// Tokens of the reply in OpenAI's `o200k_base` encoding; counted only
    /// with `--tokens` (loading the vocabulary costs more than a run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_tokens: Option<usize>,
}

/// `git agent-apply [apply] --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ApplyReport {
    pub schema: u32,
    pub status: ReportStatus,
    pub dry_run: bool,
    /// Whether the changes reached the repository (false for dry runs and failures).
    pub written: bool,
    pub commit: Option<String>,
    /// The commit that saved the user's own uncommitted changes first.
    pub user_commit: Option<String>,
    /// Edited files that had uncommitted changes.
    pub dirty_paths: Vec<String>,
    pub checks: Vec<CheckResult>,
    /// What the run could not finish after it committed, each with the
    /// command that finishes it (the commit stands; the status is applied).
    pub warnings: Vec<String>,
    pub format: FormatChoice,
    pub files: Vec<FileJson>,
    pub edits: Vec<EditJson>,
    pub diagnostics: Vec<DiagnosticJson>,
    pub commands: Vec<CommandJson>,
    pub reflection: String,
    pub timings: Timings,
    pub stats: Stats,
    #[serde(skip)]
    pub diff: String,
}

impl ApplyReport {
    /// The report of applying `edits` (with `outcomes`) as `changes` to files
    /// that held `before` (by path). The edits at the indexes in `rejected`
    /// were left out by the user, whatever their outcomes say.
    pub fn new<'a>(
        format: FormatChoice,
        parsed: &ParseOutput,
        outcomes: Vec<Outcome>,
        rejected: &[usize],
        changes: &[Change],
        before: &dyn Fn(&str) -> Option<&'a str>,
        shown: Shown,
    ) -> Self {
        // Taken by value: a reply of thousands of edits has their messages
        // once, not twice.
        let edits: Vec<EditJson> = outcomes
            .into_iter()
            .map(|o| {
                let edit = o.edit as usize;
                let json = EditJson::new(o, &parsed.edits[edit]);
                match rejected.contains(&edit) {
                    true => EditJson { status: EditState::Rejected, kind: None, message: REJECTED.into(), ..json },
                    false => json,
                }
            })
            .collect();
        let failed = edits.iter().any(|e| e.status == EditState::Failed)
            || parsed.diagnostics.iter().any(|d| d.severity == Severity::Error);
        let any_applied = edits.iter().any(|e| e.status == EditState::Applied);
        let mut diff = String::new();
        let files: Vec<FileJson> =
            changes.iter().map(|change| FileJson::new(change, before, shown, &mut diff)).collect();
        let status = match (failed, shown.partial && any_applied && !files.is_empty()) {
            (true, true) => ReportStatus::Partial,
            (true, false) => ReportStatus::Failed,
            (false, _) if files.is_empty() && edits.iter().any(|e| e.status == EditState::Rejected) => {
                ReportStatus::Rejected
            }
            (false, _) if files.is_empty() => ReportStatus::Unchanged,
            _ => ReportStatus::Applied,
        };
        let mut report = ApplyReport {
            schema: SCHEMA,
            status,
            dry_run: shown.dry_run,
            written: false,
            commit: None,
            user_commit: None,
            dirty_paths: Vec::new(),
            checks: Vec::new(),
            warnings: Vec::new(),
            format,
            files,
            edits,
            diagnostics: parsed.diagnostics.iter().map(DiagnosticJson::from).collect(),
            commands: parsed.commands.iter().map(command_json).collect(),
            reflection: String::new(),
            timings: Timings::default(),
            stats: Stats::default(),
            diff,
        };
        report.reflection = report.reflection_text();
        report
    }

    /// Which version each file's edits were applied to, and which edits
    /// were rebased onto the current file (`rebased` instead of `applied`).
    pub fn note_bases(&mut self, rebased: &crate::rebase::Rebased) {
        for file in &mut self.files {
            let base = rebased.files.get(&file.path).cloned();
            file.base = Some(base.unwrap_or_else(crate::rebase::FileBase::working_tree));
        }
        for edit in &mut self.edits {
            if edit.status == EditState::Applied && rebased.edits.contains(&(edit.index - 1)) {
                edit.status = EditState::Rebased;
            }
        }
        self.reflection = self.reflection_text();
    }

    /// The changes were written to the working tree.
    pub fn mark_written(&mut self) {
        self.written = true;
    }

    /// The changes were committed.
    pub fn mark_committed(&mut self, committed: Committed) {
        self.written = true;
        self.commit = Some(committed.commit);
        self.user_commit = committed.user_commit;
        self.dirty_paths = committed.dirty_paths;
        self.checks = committed.checks;
        self.warnings = committed.warnings;
    }

    /// A check failed: everything was rolled back.
    pub fn mark_checks_failed(&mut self, checks: Vec<CheckResult>) {
        self.status = ReportStatus::ChecksFailed;
        self.checks = checks;
        self.reflection = self.reflection_text();
    }
}

/// An edit's status for reports: `applied`, `failed`, or `already-applied`
/// (the file already held what the edit writes: a retried reply).
fn edit_status(outcome: &Outcome) -> EditState {
    match (outcome.status, outcome.kind) {
        (EditStatus::Applied, Some(FailureKind::AlreadyApplied)) => EditState::AlreadyApplied,
        (EditStatus::Applied, _) => EditState::Applied,
        (EditStatus::Failed, _) => EditState::Failed,
    }
}
