//! The in-memory files a reply's edits apply to.

use crate::format::EditFailure;
use crate::types::FailureKind;
use std::collections::BTreeMap;

use crate::types::{Change, File, MatchInfo, Renamed};

/// A file's state. Its original content is kept only once it is replaced
/// (moved, not copied: files can be megabytes, and in a wasm plugin every
/// copy is fresh linear memory the host pays page faults for).
#[derive(Debug, Clone)]
struct Entry {
    existed: bool,
    /// `Some` once the file was written or deleted: its content before.
    replaced: Option<Option<String>>,
    current: Option<String>,
}

impl Entry {
    fn set(&mut self, content: Option<String>) {
        let before = std::mem::replace(&mut self.current, content);
        self.replaced.get_or_insert(before);
    }

    fn original(&self) -> Option<&String> {
        match &self.replaced {
            Some(before) => before.as_ref(),
            None => self.current.as_ref(),
        }
    }
}

/// The files the host passed to `apply`, as edits change them. At the end it
/// turns into the contract's whole-file [`Change`]s.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    files: BTreeMap<String, Entry>,
    renames: Vec<(String, String)>,
    /// How each edit was placed, at its index in the reply's edits (a
    /// vector, not a map: a large reply notes every edit, in order).
    matches: Vec<Option<MatchInfo>>,
    /// The edit `Format::apply_edit` is applying, for [`Workspace::note_match`].
    current: usize,
}

impl Workspace {
    /// A workspace holding `files` as they are on disk.
    pub fn new(files: Vec<File>) -> Self {
        let files = files
            .into_iter()
            .map(|f| (f.path, Entry { existed: true, replaced: None, current: Some(f.content) }))
            .collect();
        Workspace { files, renames: Vec::new(), matches: Vec::new(), current: 0 }
    }

    /// The current content of `path`, or `None` if it does not exist.
    pub fn read(&self, path: &str) -> Option<&str> {
        self.files.get(path).and_then(|e| e.current.as_deref())
    }

    /// The current content of `path`, or a not-found failure naming it (for
    /// edits that change existing files).
    pub fn read_existing(&self, path: &str) -> Result<&str, EditFailure> {
        self.read(path).ok_or_else(|| {
            EditFailure::new(FailureKind::NotFound, format!("{path} does not exist"))
                .with_hint("check the path; name a file that exists in the repository")
        })
    }

    /// Whether `path` exists now.
    pub fn exists(&self, path: &str) -> bool {
        self.read(path).is_some()
    }

    /// Paths of the files that exist now, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().filter(|(_, e)| e.current.is_some()).map(|(p, _)| p.as_str())
    }

    /// Create or overwrite `path`.
    pub fn write(&mut self, path: &str, content: String) {
        let absent = Entry { existed: false, replaced: None, current: None };
        self.files.entry(path.to_string()).or_insert(absent).set(Some(content));
    }

    /// Delete `path`; false if it did not exist.
    pub fn delete(&mut self, path: &str) -> bool {
        match self.files.get_mut(path) {
            Some(entry) if entry.current.is_some() => {
                entry.set(None);
                true
            }
            _ => false,
        }
    }

    /// Move `from` to `to`, keeping its content.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        if self.exists(to) {
            return Err(format!("cannot rename {from} to {to}: {to} already exists"));
        }
        let entry = self.files.get_mut(from).filter(|e| e.current.is_some());
        let entry = entry.ok_or_else(|| format!("cannot rename {from}: it does not exist"))?;
        let content = entry.current.clone().expect("checked above");
        entry.set(None);
        self.write(to, content);
        self.renames.push((from.to_string(), to.to_string()));
        Ok(())
    }

    /// Say how the edit being applied (by `Format::apply_edit`) was placed:
    /// the report shows it so a harness can audit risky matches. Formats
    /// that override `Format::apply` use [`Workspace::note_match_of`].
    pub fn note_match(&mut self, info: MatchInfo) {
        self.note_match_of(self.current, info);
    }

    /// Say how edit `index` (in the reply's order) was placed.
    pub fn note_match_of(&mut self, index: usize, info: MatchInfo) {
        if self.matches.len() <= index {
            self.matches.resize(index + 1, None);
        }
        self.matches[index] = Some(info);
    }

    /// Say which edit `apply_edit` is about to apply (`apply_each` does).
    pub(crate) fn set_current(&mut self, index: usize) {
        self.current = index;
    }

    /// How edit `index` was placed, if its format said.
    pub(crate) fn take_match(&mut self, index: usize) -> Option<MatchInfo> {
        self.matches.get_mut(index).and_then(Option::take)
    }

    /// The net changes: one per path whose content changed, renames kept as
    /// renames when the source is gone and the destination exists.
    pub fn into_changes(mut self) -> Vec<Change> {
        let mut changes = Vec::new();
        for (from, to) in std::mem::take(&mut self.renames) {
            let from_gone = self.files.get(&from).is_some_and(|e| e.current.is_none() && e.existed);
            let to_new = self.files.get(&to).is_some_and(|e| !e.existed);
            if from_gone && to_new {
                let content = self.files.remove(&to).and_then(|e| e.current).unwrap_or_default();
                self.files.remove(&from);
                changes.push(Change::Rename(Renamed { from, to, content }));
            }
        }
        for (path, entry) in self.files {
            let unchanged = entry.replaced.is_none() || entry.original() == entry.current.as_ref();
            match entry.current {
                Some(content) if !unchanged => changes.push(Change::Write(File { path, content })),
                None if entry.existed => changes.push(Change::Delete(path)),
                _ => {}
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_net_changes_only() {
        let mut ws = Workspace::new(vec![File::new("a", "1"), File::new("b", "2"), File::new("c", "3")]);
        ws.write("a", "1".into());
        ws.write("b", "22".into());
        ws.delete("c");
        ws.write("d", "4".into());
        let changes = ws.into_changes();
        assert_eq!(
            changes,
            vec![Change::Write(File::new("b", "22")), Change::Delete("c".into()), Change::Write(File::new("d", "4"))]
        );
    }

    #[test]
    fn renames_stay_renames() {
        let mut ws = Workspace::new(vec![File::new("old", "x")]);
        ws.rename("old", "new").unwrap();
        ws.write("new", "y".into());
        assert_eq!(
            ws.into_changes(),
            vec![Change::Rename(Renamed { from: "old".into(), to: "new".into(), content: "y".into() })]
        );
        let mut ws = Workspace::new(vec![File::new("a", "x"), File::new("b", "y")]);
        assert!(ws.rename("a", "b").is_err());
        assert!(ws.rename("zzz", "c").is_err());
    }
}
