//! The reflection: the text an agent hands back to its model, saying what
//! failed and why, the closest real lines, which edits applied (so they are
//! not resent), which the user rejected, and what to send next.

use agent_apply_sdk::types::{CUT_OFF, Severity};

use super::{ApplyReport, DiagnosticJson, EditJson, EditState, ReportStatus};

impl ApplyReport {
    /// Never empty when nothing was applied.
    pub(super) fn reflection_text(&self) -> String {
        let failed: Vec<&EditJson> = self.edits.iter().filter(|e| e.status == EditState::Failed).collect();
        let errors: Vec<&DiagnosticJson> = self.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
        let failed_check = self.checks.iter().find(|c| !c.passed);
        let rejected = self.rejected_text();
        if failed.is_empty() && errors.is_empty() && failed_check.is_none() {
            return match self.status {
                ReportStatus::Unchanged => "Every edit in your reply is already in the files, so nothing was changed; do not send them again.\n".into(),
                ReportStatus::Rejected => format!("{rejected}Nothing was changed.\n"),
                _ if !rejected.is_empty() => format!("{}\n{rejected}", self.applied_text()),
                _ => String::new(),
            };
        }
        let mut out = String::new();
        if let Some(cut) = errors.iter().find(|d| d.message.starts_with(CUT_OFF)) {
            return format!(
                "Your reply was cut off: {}. Nothing of it was applied. Send the edits again from that edit on, \
                 each complete.\n",
                &cut.message[CUT_OFF.len()..].trim_start()
            );
        }
        for d in &errors {
            let at = d.reply_lines.as_ref().map(|l| format!(" (reply line {})", l.start)).unwrap_or_default();
            out += &format!("Your reply could not be read{at}: {}", d.message);
            if let Some(hint) = &d.hint {
                out += &format!(" ({hint})");
            }
            out += "\n";
        }
        for e in &failed {
            out += &format!("Edit {} to {} failed: {}\n", e.index, e.path, e.message);
            if let Some(hint) = &e.hint {
                out += &format!("{}\n", hint.trim_end());
            }
        }
        if let Some(check) = failed_check {
            out += &format!(
                "Your edits applied, but the check `{}` failed, so nothing was kept:\n{}\n",
                check.name,
                check.output.trim_end()
            );
        }
        out += &rejected;
        let others = if rejected.is_empty() { "all of the edits" } else { "the edits the user did not reject" };
        if self.status == ReportStatus::Partial {
            out += &format!("{} Send corrected versions of the failed edits only.\n", self.applied_text());
        } else if failed_check.is_some() {
            out += &format!("Fix the problem and send {others} again.\n");
        } else {
            out += &format!(
                "None of your edits were applied, because of the problems above. Fix them and send {others} again.\n"
            );
        }
        out
    }

    /// Which edits applied, so they are not resent.
    fn applied_text(&self) -> String {
        let applied: Vec<String> =
            self.edits.iter().filter(|e| e.status.applied()).map(|e| e.index.to_string()).collect();
        format!("Edits {} were applied; do not send them again.", applied.join(", "))
    }

    /// The edits the user rejected under `--interactive`, if any.
    fn rejected_text(&self) -> String {
        let rejected: Vec<String> = self
            .edits
            .iter()
            .filter(|e| e.status == EditState::Rejected)
            .map(|e| format!("{} (to {})", e.index, e.path))
            .collect();
        match rejected.len() {
            0 => String::new(),
            1 => format!(
                "The user rejected edit {} on review; it was not applied. Do not send it again unless asked.\n",
                rejected[0]
            ),
            _ => format!(
                "The user rejected edits {} on review; they were not applied. Do not send them again unless asked.\n",
                rejected.join(", ")
            ),
        }
    }
}
