//! Reports as a person reads them: lines of text, with what went wrong
//! (`FAILED`, `error:`) and diffs in colour when asked for styled text (the
//! CLI writes it through anstream, which drops the colour where it is not
//! wanted), and plain for every other caller.

use agent_apply_sdk::types::{FailureKind, Severity};
use similar::TextDiff;

use super::{ApplyReport, CommandJson, DiagnosticJson, EditJson, EditState, ParseReport, ReportStatus};
use crate::style::{self, paint};
use crate::transaction::short_id;

impl ParseReport {
    /// The report as text, with styles when `styled` (see [`crate::style`]).
    pub fn human(&self, styled: bool) -> String {
        let mut out = format!("format: {}\n", self.format.name);
        if !self.format.also.is_empty() {
            out += &format!("also read as: {}\n", self.format.also.join(", "));
        }
        for edit in &self.edits {
            out += &format!(
                "edit {} {} (reply lines {}-{}): {}\n",
                edit.index, edit.path, edit.span.first_line, edit.span.last_line, edit.summary
            );
        }
        if self.edits.is_empty() {
            out += "no edits found\n";
        }
        for d in &self.diagnostics {
            out += &diagnostic_line(d, styled);
        }
        out += &command_lines(&self.commands);
        out
    }
}

impl ApplyReport {
    /// The report as text, with styles when `styled` (see [`crate::style`]).
    pub fn human(&self, styled: bool) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            out += &diagnostic_line(d, styled);
        }
        for e in &self.edits {
            edit_line(&mut out, e, styled);
        }
        let verb = if self.written { "was" } else { "would be" };
        for check in &self.checks {
            let verdict = if check.passed { "passed".to_string() } else { paint(style::ERROR, "FAILED", styled) };
            out += &format!("check `{}` {verdict} ({} ms)\n", check.name, check.millis);
            if !check.passed {
                out += &format!("{}\n", check.output.trim_end());
            }
        }
        out += &command_lines(&self.commands);
        match self.status {
            ReportStatus::Failed => out += "nothing was changed\n",
            ReportStatus::ChecksFailed => out += "a check failed: nothing was changed\n",
            ReportStatus::Unchanged => out += "nothing to change\n",
            ReportStatus::Rejected => out += "every edit that changes something was rejected: nothing was changed\n",
            ReportStatus::Applied | ReportStatus::Partial => {
                for f in &self.files {
                    let plural = if f.lines_after == 1 { "" } else { "s" };
                    out += &format!("{} {verb} {} ({} line{plural})\n", f.path, f.action, f.lines_after);
                }
                if let Some(user) = &self.user_commit {
                    out += &format!(
                        "your own uncommitted changes to {} were committed first as {}\n",
                        self.dirty_paths.join(", "),
                        short_id(user)
                    );
                }
                if let Some(commit) = &self.commit {
                    out += &format!("committed {}\n", short_id(commit));
                }
                for warning in &self.warnings {
                    out += &format!("{} {warning}\n", paint(style::WARNING, "warning:", styled));
                }
            }
        }
        out
    }
}

/// One edit's line (and its hint), written straight into `out`: a reply of
/// 20,000 edits made and copied 20,000 formatted strings.
fn edit_line(out: &mut String, e: &EditJson, styled: bool) {
    use std::fmt::Write as _;
    let _ = write!(out, "edit {} ", e.index);
    out.push_str(&e.path);
    match e.status {
        EditState::Rebased => out.push_str(" rebased"),
        EditState::Applied | EditState::AlreadyApplied => {}
        EditState::Rejected => {
            out.push(' ');
            out.push_str(&paint(style::WARNING, "rejected", styled));
        }
        EditState::Failed => {
            out.push(' ');
            out.push_str(&paint(style::ERROR, "FAILED", styled));
            out.push_str(" (");
            out.push_str(e.kind.map_or("error", FailureKind::as_str));
            out.push(')');
        }
    }
    out.push_str(": ");
    out.push_str(&e.message);
    out.push('\n');
    if let (EditState::Failed, Some(hint)) = (e.status, &e.hint) {
        out.push_str("  hint: ");
        out.push_str(hint);
        out.push('\n');
    }
}

/// The shell commands a reply suggests: listed, never run.
fn command_lines(commands: &[CommandJson]) -> String {
    commands
        .iter()
        .map(|c| format!("suggested command (reply line {}, not run): {}\n", c.reply_lines.start, c.command))
        .collect()
}

fn diagnostic_line(d: &DiagnosticJson, styled: bool) -> String {
    let at = match (&d.path, &d.lines, &d.reply_lines) {
        (Some(path), Some(lines), _) => format!("{path}:{}: ", lines.start),
        (_, _, Some(reply)) => format!("reply line {}: ", reply.start),
        _ => String::new(),
    };
    let severity = match d.severity {
        Severity::Error => paint(style::ERROR, "error:", styled),
        Severity::Warning => paint(style::WARNING, "warning:", styled),
        other => format!("{}:", other.as_str()),
    };
    let mut line = format!("{severity} {at}{}\n", d.message);
    if let Some(hint) = &d.hint {
        line += &format!("  hint: {hint}\n");
    }
    line
}

/// A unified diff of one file, `None` meaning absent.
pub fn unified_diff(old_path: &str, new_path: &str, old: Option<&str>, new: Option<&str>) -> String {
    // Shown diffs are minimal unless that takes long; then merely correct.
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
    let diff = TextDiff::configure().deadline(deadline).diff_lines(old.unwrap_or(""), new.unwrap_or(""));
    let old_header = if old.is_some() { format!("a/{old_path}") } else { "/dev/null".into() };
    let new_header = if new.is_some() { format!("b/{new_path}") } else { "/dev/null".into() };
    diff.unified_diff().context_radius(3).header(&old_header, &new_header).missing_newline_hint(true).to_string()
}

/// `diff` with styles for file headers, added, removed and hunk-header lines.
pub fn colorize_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 8);
    for line in diff.split_inclusive('\n') {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            style::DIFF_HEADER
        } else if line.starts_with('+') {
            style::ADDED
        } else if line.starts_with('-') {
            style::REMOVED
        } else if line.starts_with("@@") {
            style::HUNK
        } else {
            out.push_str(line);
            continue;
        };
        let text = line.trim_end_matches('\n');
        out += &format!("{style}{text}{style:#}{}", &line[text.len()..]);
    }
    out
}
