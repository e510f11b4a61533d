//! Reports as a person reads them: lines of text, with what went wrong
//! (`FAILED`, `error:`) and diffs in colour when asked for styled text (the
//! CLI writes it through anstream, which drops the colour where it is not
//! wanted), and plain for every other caller.

use std::fmt::{self, Write};

use agent_apply_sdk::types::{FailureKind, Severity};
use similar::TextDiff;

use super::{ApplyReport, CommandJson, DiagnosticJson, EditJson, EditState, ParseReport, ReportStatus};
use crate::style::{self, paint};
use crate::transaction::short_id;

impl ParseReport {
    /// The report as text, with styles when `styled` (see [`crate::style`]).
    pub fn human(&self, styled: bool) -> String {
        let mut out = String::new();
        let _ = self.write_human(&mut out, styled);
        out
    }

    /// [`ParseReport::human`], written piece by piece into `out`.
    pub fn write_human(&self, out: &mut impl Write, styled: bool) -> fmt::Result {
        writeln!(out, "format: {}", self.format.name)?;
        if !self.format.also.is_empty() {
            writeln!(out, "also read as: {}", self.format.also.join(", "))?;
        }
        for edit in &self.edits {
            writeln!(
                out,
                "edit {} {} (reply lines {}-{}): {}",
                edit.index, edit.path, edit.span.first_line, edit.span.last_line, edit.summary
            )?;
        }
        if self.edits.is_empty() {
            out.write_str("no edits found\n")?;
        }
        for d in &self.diagnostics {
            diagnostic_line(out, d, styled)?;
        }
        command_lines(out, &self.commands)
    }
}

impl ApplyReport {
    /// The report as text, with styles when `styled` (see [`crate::style`]).
    pub fn human(&self, styled: bool) -> String {
        let mut out = String::new();
        let _ = self.write_human(&mut out, styled);
        out
    }

    /// [`ApplyReport::human`], written piece by piece into `out`: the CLI
    /// streams it to stdout, since a reply of 20,000 edits makes megabytes
    /// of it (built whole, 2.4 MB of fresh memory for a 10 MB reply).
    pub fn write_human(&self, out: &mut impl Write, styled: bool) -> fmt::Result {
        for d in &self.diagnostics {
            diagnostic_line(out, d, styled)?;
        }
        for e in &self.edits {
            edit_line(out, e, styled)?;
        }
        let verb = if self.written { "was" } else { "would be" };
        for check in &self.checks {
            let verdict = if check.passed { "passed".to_string() } else { paint(style::ERROR, "FAILED", styled) };
            writeln!(out, "check `{}` {verdict} ({} ms)", check.name, check.millis)?;
            if !check.passed {
                writeln!(out, "{}", check.output.trim_end())?;
            }
        }
        command_lines(out, &self.commands)?;
        match self.status {
            ReportStatus::Failed => out.write_str("nothing was changed\n"),
            ReportStatus::ChecksFailed => out.write_str("a check failed: nothing was changed\n"),
            ReportStatus::Unchanged => out.write_str("nothing to change\n"),
            ReportStatus::Rejected => {
                out.write_str("every edit that changes something was rejected: nothing was changed\n")
            }
            ReportStatus::Applied | ReportStatus::Partial => self.write_written(out, verb, styled),
        }
    }

    /// What was written or committed, and the warnings of a run that was.
    fn write_written(&self, out: &mut impl Write, verb: &str, styled: bool) -> fmt::Result {
        for f in &self.files {
            let plural = if f.lines_after == 1 { "" } else { "s" };
            writeln!(out, "{} {verb} {} ({} line{plural})", f.path, f.action, f.lines_after)?;
        }
        if let Some(user) = &self.user_commit {
            writeln!(
                out,
                "your own uncommitted changes to {} were committed first as {}",
                self.dirty_paths.join(", "),
                short_id(user)
            )?;
        }
        if let Some(commit) = &self.commit {
            writeln!(out, "committed {}", short_id(commit))?;
        }
        for warning in &self.warnings {
            writeln!(out, "{} {warning}", paint(style::WARNING, "warning:", styled))?;
        }
        Ok(())
    }
}

/// One edit's line (and its hint), written straight into `out`: a reply of
/// 20,000 edits made and copied 20,000 formatted strings.
fn edit_line(out: &mut impl Write, e: &EditJson, styled: bool) -> fmt::Result {
    // The number without the formatting machinery: its line is written
    // for each of a large reply's edits.
    out.write_str("edit ")?;
    out.write_str(itoa::Buffer::new().format(e.index))?;
    out.write_char(' ')?;
    out.write_str(&e.path)?;
    match e.status {
        EditState::Rebased => out.write_str(" rebased")?,
        EditState::Applied | EditState::AlreadyApplied => {}
        EditState::Rejected => write!(out, " {}", paint(style::WARNING, "rejected", styled))?,
        EditState::Failed => {
            write!(out, " {} ({})", paint(style::ERROR, "FAILED", styled), e.kind.map_or("error", FailureKind::as_str))?
        }
    }
    out.write_str(": ")?;
    out.write_str(&e.message)?;
    out.write_char('\n')?;
    if let (EditState::Failed, Some(hint)) = (e.status, &e.hint) {
        out.write_str("  hint: ")?;
        out.write_str(hint)?;
        out.write_char('\n')?;
    }
    Ok(())
}

/// The shell commands a reply suggests: listed, never run.
fn command_lines(out: &mut impl Write, commands: &[CommandJson]) -> fmt::Result {
    for c in commands {
        writeln!(out, "suggested command (reply line {}, not run): {}", c.reply_lines.start, c.command)?;
    }
    Ok(())
}

fn diagnostic_line(out: &mut impl Write, d: &DiagnosticJson, styled: bool) -> fmt::Result {
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
    writeln!(out, "{severity} {at}{}", d.message)?;
    if let Some(hint) = &d.hint {
        writeln!(out, "  hint: {hint}")?;
    }
    Ok(())
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
