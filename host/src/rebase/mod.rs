//! Stale edits, rebased: a reply written against an older version of a file
//! (the one `read` showed, `--base REV`, or HEAD's) is applied to that
//! version by its own format, and the result is three-way merged into the
//! file as it is now, with git's file merge. A clean merge is applied
//! (`rebased`); a conflict fails the file's edits as `stale`, with the
//! format's view of just the conflicting lines.
//!
//! Everything here is host-side: a format sees the base as the file's
//! snapshot and checks its own line numbers, anchors and version tags
//! against it, so no format needs to know about rebasing.

mod bases;
pub mod merge;

use std::collections::BTreeMap;

use agent_apply_sdk::types::{Change, Edit, EditStatus, FailureKind, File, LineRange, Outcome};
use serde::Serialize;

pub use bases::{Base, BaseError, BaseSource, Bases, record_read, short};
use merge::{Merged, conflicts, merge3};

use crate::Error;
use crate::parts::{self, Part};

/// The base a file's edits were applied to, for the report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileBase {
    pub source: BaseSource,
    /// The blob id of the base (none for the working tree's own content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The base in words, as messages name it: "--base HEAD~1",
    /// "HEAD (1a2b3c4)", "the version read showed (blob 1a2b3c4)".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl FileBase {
    /// Edits applied to the file as it is.
    pub fn working_tree() -> Self {
        FileBase { source: BaseSource::WorkingTree, blob: None, label: None }
    }

    fn of(base: &Base) -> Self {
        FileBase { source: base.source, blob: Some(base.blob.clone()), label: Some(base.label.clone()) }
    }
}

/// What rebasing did in a run: the bases used, by path, and the edits that
/// were rebased onto the current file.
#[derive(Debug, Default)]
pub struct Rebased {
    pub files: BTreeMap<String, FileBase>,
    pub edits: Vec<usize>,
}

/// What the edits of one file did, when a base decided it.
struct Verdict {
    change: Option<Change>,
    outcomes: Vec<Outcome>,
    base: Option<FileBase>,
}

/// The changes (one per path), the outcomes by edit index, and what was rebased.
pub type Results = (Vec<Change>, Vec<Option<Outcome>>, Rebased);

/// [`parts::apply`], with each file's edits rebased where they were written
/// against another version of it than `files` holds.
pub fn apply(
    parts: &mut [Part],
    files: &[File],
    edits: &[Edit],
    allowed: &[usize],
    bases: &Bases<'_>,
) -> Result<Results, Error> {
    let (mut changes, mut outcomes) = parts::apply(parts, files, edits, allowed)?;
    let mut rebased = Rebased::default();
    for (path, mine) in parts::by_path(edits, allowed.iter().copied()) {
        let Some(current) = files.iter().find(|f| f.path == path) else { continue };
        // An edit that also moves or retries on other files is left as it went.
        let plain = mine.iter().all(|&i| {
            edits[i].related_paths.is_empty() && outcomes[i].as_ref().is_some_and(|o| o.applied_path.is_none())
        });
        if !plain {
            continue;
        }
        let mut file = FileEdits { parts: &mut *parts, files, edits, mine, current };
        let Some(verdict) = file.decide(&changes, &outcomes, bases)? else { continue };
        changes.retain(|c| c.path() != path);
        changes.extend(verdict.change);
        for outcome in verdict.outcomes {
            let index = outcome.edit as usize;
            if outcome.status == EditStatus::Applied && verdict.base.is_some() {
                rebased.edits.push(index);
            }
            outcomes[index] = Some(outcome);
        }
        if let Some(base) = verdict.base {
            rebased.files.insert(path.to_string(), base);
        }
    }
    Ok((changes, outcomes, rebased))
}

/// One file's edits, with what applying them again needs: the parts that
/// read them, every file and edit of the reply, and the file as it is now.
struct FileEdits<'a> {
    parts: &'a mut [Part],
    files: &'a [File],
    edits: &'a [Edit],
    /// The indexes of this file's edits in `edits`.
    mine: Vec<usize>,
    current: &'a File,
}

impl FileEdits<'_> {
    /// Which version one file's edits go on, when that is not simply the
    /// current file: the `--base` one; else, when the edits failed on the
    /// current file as out of date, the first earlier version they fit; else,
    /// for line-numbered edits of a file with uncommitted changes, a check that
    /// HEAD's numbering would have meant the same lines.
    fn decide(
        &mut self,
        changes: &[Change],
        outcomes: &[Option<Outcome>],
        bases: &Bases<'_>,
    ) -> Result<Option<Verdict>, Error> {
        let current = self.current;
        let path = current.path.as_str();
        if let Some(base) = bases.explicit(path)? {
            if base.content == current.content {
                return Ok(None);
            }
            return match self.on_base(&base)? {
                Some((edited, applied)) => self.rebase(&base, &edited, applied).map(Some),
                // The edits do not fit the version they were said to be written
                // against: their own failures there say why.
                None => Ok(Some(self.failed_on_base(&base)?)),
            };
        }
        let mine_outcomes = || self.mine.iter().filter_map(|&i| outcomes[i].as_ref());
        let out_of_date = mine_outcomes().any(|o| {
            o.status == EditStatus::Failed
                && matches!(o.kind, Some(FailureKind::Stale | FailureKind::NotFound | FailureKind::OutOfRange))
        });
        if out_of_date {
            for base in bases.candidates(path, &current.content) {
                if let Some((edited, applied)) = self.on_base(&base)? {
                    return self.rebase(&base, &edited, applied).map(Some);
                }
            }
            return Ok(None);
        }
        let numbered = mine_outcomes()
            .any(|o| o.status == EditStatus::Applied && o.matched.as_ref().is_some_and(|m| m.level == "line-numbers"));
        if numbered && !bases.last_read_is(path, &current.content) {
            return self.ambiguous(changes, bases);
        }
        Ok(None)
    }

    /// Every file of the reply, with this one holding `content`.
    fn files_with(&self, content: &str) -> Vec<File> {
        let path = self.current.path.as_str();
        self.files.iter().map(|f| if f.path == path { File::new(path, content) } else { f.clone() }).collect()
    }

    /// The file after applying `mine` to `base`, and their outcomes there, when
    /// every one of them applies and they only rewrite that file.
    fn on_base(&mut self, base: &Base) -> Result<Option<(String, Vec<Outcome>)>, Error> {
        let (files, path) = (self.files_with(&base.content), self.current.path.as_str());
        let (changes, outcomes) = parts::apply(self.parts, &files, self.edits, &self.mine)?;
        let mine = &self.mine;
        let outcomes: Vec<Outcome> = mine.iter().filter_map(|&i| outcomes[i].clone()).collect();
        if outcomes.len() != mine.len() || outcomes.iter().any(|o| o.status != EditStatus::Applied) {
            return Ok(None);
        }
        let edited = match changes.as_slice() {
            [] => base.content.clone(),
            [Change::Write(file)] if file.path == path => file.content.clone(),
            _ => return Ok(None),
        };
        Ok(Some((edited, outcomes)))
    }

    /// Merge `base → edited` into the current file: applied as `rebased`, or
    /// every edit of the file `stale` with a view of the conflicting lines.
    fn rebase(&mut self, base: &Base, edited: &str, applied: Vec<Outcome>) -> Result<Verdict, Error> {
        let current = self.current;
        let note = FileBase::of(base);
        let merged = merge3(&base.content, &current.content, edited)?;
        let path = current.path.as_str();
        match merged {
            Merged::Clean(content) => {
                // The format's message counts lines of the base; the merged
                // file's count is what the model should believe.
                let lines = agent_apply_sdk::text::line_count(&content);
                let outcomes = applied
                    .into_iter()
                    .map(|o| Outcome {
                        message: format!(
                            "{} (written against {}; rebased onto the current {path}, which now has {lines} lines)",
                            o.message, base.label
                        ),
                        ..o
                    })
                    .collect();
                let change = (content != current.content).then(|| Change::Write(File::new(path, content)));
                Ok(Verdict { change, outcomes, base: Some(note) })
            }
            Merged::Conflict => {
                let outcomes = self.conflicted(base, edited, applied)?;
                Ok(Verdict { change: None, outcomes, base: Some(note) })
            }
        }
    }

    /// The outcomes of a file whose merge conflicts: the edits that meet a
    /// conflicting region are `stale`, with the format's view of it in the
    /// current file; the others merged, but nothing of the file is written.
    fn conflicted(&mut self, base: &Base, edited: &str, applied: Vec<Outcome>) -> Result<Vec<Outcome>, Error> {
        let current = self.current;
        let path = current.path.as_str();
        let regions = conflicts(&base.content, &current.content, edited);
        let meets = |o: &Outcome, c: &merge::Conflict| o.lines.is_none_or(|l| c.meets(l.start, l.end));
        let mut outcomes = Vec::new();
        for o in &applied {
            let mine: Vec<&merge::Conflict> = regions.iter().filter(|c| meets(o, c)).collect();
            if mine.is_empty() {
                let message = format!(
                    "not applied: this edit merged cleanly into {path}, but another edit of {path} conflicts with \
                 changes made since {}",
                    base.label
                );
                let hint = format!("send it again with the corrected edits of {path}");
                outcomes.push(stale(o.edit, message, hint, o.lines));
                continue;
            }
            let ranges: Vec<LineRange> = mine.iter().map(|c| LineRange::new(c.current.0, c.current.1)).collect();
            let listed: Vec<String> = ranges
                .iter()
                .map(|r| if r.start == r.end { r.start.to_string() } else { format!("{}-{}", r.start, r.end) })
                .collect();
            let view = self.view(o.edit as usize, &ranges)?;
            let message = format!(
                "stale: written against {}, and {path} has changed since where this edit goes (now {} {} of {path})",
                base.label,
                if matches!(ranges.as_slice(), [one] if one.start == one.end) { "line" } else { "lines" },
                listed.join(", ")
            );
            let hint = format!(
                "nothing was written to {path}. Those lines of {path} now read:\n{view}Redo just this edit against \
             these lines."
            );
            outcomes.push(stale(o.edit, message, hint, ranges.first().copied()));
        }
        Ok(outcomes)
    }

    /// The edits did not fit the `--base` version: each fails with what its
    /// format said there, so the model sees why.
    fn failed_on_base(&mut self, base: &Base) -> Result<Verdict, Error> {
        let (files, path) = (self.files_with(&base.content), self.current.path.as_str());
        let (_, outcomes) = parts::apply(self.parts, &files, self.edits, &self.mine)?;
        let mine = &self.mine;
        let note = FileBase::of(base);
        let outcomes = mine
            .iter()
            .filter_map(|&i| outcomes[i].clone())
            .map(|o| {
                if o.status == EditStatus::Failed {
                    Outcome { message: format!("{} (on {path} as {} has it)", o.message, base.label), ..o }
                } else {
                    let message =
                        format!("not applied: another edit of {path} does not fit {path} as {} has it", base.label);
                    stale(o.edit, message, None, o.lines)
                }
            })
            .collect();
        Ok(Verdict { change: None, outcomes, base: Some(note) })
    }

    /// Untagged line numbers on a file whose HEAD and working-tree versions
    /// differ: the model may have read either. Applied when both readings give
    /// the same file; otherwise every edit of the file is `stale`, naming both.
    /// `changes` are what the edits did to the current files.
    fn ambiguous(&mut self, changes: &[Change], bases: &Bases<'_>) -> Result<Option<Verdict>, Error> {
        let current = self.current;
        let path = current.path.as_str();
        let Some(head) = bases.head_other_than(path, &current.content) else { return Ok(None) };
        // Numbers that do not fit HEAD's version were not written against it.
        let Some((edited, applied)) = self.on_base(&head)? else { return Ok(None) };
        let now = match changes.iter().find(|c| c.path() == path) {
            Some(Change::Write(file)) => file.content.as_str(),
            _ => current.content.as_str(),
        };
        if merge3(&head.content, &current.content, &edited).ok() == Some(Merged::Clean(now.to_string())) {
            return Ok(None);
        }
        let mut outcomes = Vec::new();
        for o in applied {
            let lines = o.lines.unwrap_or(LineRange::new(1, 1));
            let around = LineRange::new(lines.start.saturating_sub(2).max(1), lines.end.max(lines.start) + 2);
            let view = self.view(o.edit as usize, &[around])?;
            let message = format!(
                "the line numbers of this edit are ambiguous: {path} differs between {} and the working tree \
             (uncommitted changes), and they name different lines in each",
                head.label
            );
            let hint = format!(
                "nothing was written to {path}. Both versions you may have read: {} (blob {}) and the working tree. \
             The working tree's lines there now:\n{view}Resend the edit with the version tag of a fresh view \
             (`git agent-apply read`), or pass --base to say which version you read.",
                head.label,
                &head.blob[..7]
            );
            outcomes.push(stale(o.edit, message, hint, o.lines));
        }
        Ok(Some(Verdict { change: None, outcomes, base: None }))
    }

    /// `ranges` of the current file in the view of the format that read edit `index`.
    fn view(&mut self, index: usize, ranges: &[LineRange]) -> Result<String, Error> {
        let current = self.current;
        let part = self.parts.iter_mut().find(|p| p.edits.contains(&index)).expect("every edit belongs to a part");
        let view = part.instance.render(current, ranges, &part.options)?.unwrap_or_else(|_| {
            agent_apply_sdk::view::render_ranges(&current.content, ranges, |n, line| format!("{n}: {line}"))
        });
        Ok(if view.ends_with('\n') { view } else { view + "\n" })
    }
}

fn stale(edit: u32, message: String, hint: impl Into<Option<String>>, lines: Option<LineRange>) -> Outcome {
    Outcome {
        edit,
        status: EditStatus::Failed,
        kind: Some(FailureKind::Stale),
        message,
        hint: hint.into(),
        applied_path: None,
        lines,
        matched: None,
    }
}
