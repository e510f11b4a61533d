//! Paths a model got slightly wrong: `path/to/sample.txt` for the
//! repository's `sample.txt`, or `app.py` for `src/app.py`. A missing path
//! that ends like exactly one tracked file (or that the tracked file ends
//! like, at a `/`) may mean that file, or may be a new file that happens to
//! share its name (`test_utils.py` at the root beside `pkg/test_utils.py`,
//! `docs/README.md` beside `README.md`). The reply's edits decide
//! ([`settle`]): an edit that needs the file to exist (its SEARCH text or
//! hunk context) and one that rewrites it keeping most of its lines go to
//! the tracked file; one that writes new content is a new file. Either way
//! the report says which, so no stray file appears beside the real one
//! unannounced and no file is overwritten by another's content.

use std::borrow::Cow;

use agent_apply_sdk::matching::line_similarity;
use agent_apply_sdk::types::{Change, Diagnostic, Edit, EditStatus, FailureKind, File, Outcome};

use crate::Error;

/// A path the reply named and the tracked file it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Alias {
    pub named: String,
    pub real: String,
}

/// Whether one path is the other with leading directories added.
fn same_tail(a: &str, b: &str) -> bool {
    let (long, short) = if a.len() > b.len() { (a, b) } else { (b, a) };
    long.len() > short.len() && long.ends_with(short) && long.as_bytes()[long.len() - short.len() - 1] == b'/'
}

/// The paths of the index: what the repository tracks. Read only when a
/// reply names a missing path. An unreadable index means no guesses.
pub fn tracked(repo: &git2::Repository) -> Vec<String> {
    let Ok(index) = repo.index() else { return Vec::new() };
    index.iter().filter_map(|entry| String::from_utf8(entry.path).ok()).collect()
}

/// For each `missing` path, the tracked files it can mean: a candidate
/// alias when there is exactly one (for [`settle`] to confirm), a
/// did-you-mean note when there are several.
pub fn resolve<'t>(
    missing: &[String],
    tracked: impl Iterator<Item = &'t str> + Clone,
) -> (Vec<Alias>, Vec<Diagnostic>) {
    let mut aliases = Vec::new();
    let mut notes = Vec::new();
    for named in missing {
        let near: Vec<&str> = tracked.clone().filter(|t| same_tail(named, t)).take(4).collect();
        match near.as_slice() {
            [] => {}
            [real] => aliases.push(Alias { named: named.clone(), real: real.to_string() }),
            several => notes.push(
                Diagnostic::warning(
                    format!("{named} does not exist and would be created; did you mean {}?", several.join(" or ")),
                    None,
                )
                .with_hint("name files by their path from the repository root"),
            ),
        }
    }
    (aliases, notes)
}

/// What applying the reply gave: the changes, and each edit's verdict.
pub type Run<R> = (Vec<Change>, Vec<Option<Outcome>>, R);

/// The paths settled: the aliases taken, the run with them in force, and
/// the notes for the report.
pub struct Settled<R> {
    pub aliases: Vec<Alias>,
    pub run: Run<R>,
    pub notes: Vec<Diagnostic>,
}

/// Which `candidates` the reply's edits really mean, found by applying it
/// (`run`, given the aliases in force), first as named (the missing paths
/// new files). A candidate is taken when its edits fail that way (they need
/// the file to exist: SEARCH text, hunk context), or when they create the
/// file with content that is a rewrite of the tracked file ([`kinship`])
/// and also apply to it. Content that is clearly new is a new file. When
/// the tracked file is too small to tell (a line or two that the content
/// does not resemble), the edits are refused with a did-you-mean instead of
/// guessed either way. Returns the aliases taken, the run with them, and a
/// note per candidate saying which way it went (none for the destination
/// of a file moved there from the tracked path itself).
pub fn settle<R>(
    candidates: &[Alias],
    snapshots: &[File],
    edits: &[Edit],
    mut run: impl FnMut(&[Alias]) -> Result<Run<R>, Error>,
) -> Result<Settled<R>, Error> {
    let as_named = run(&[])?;
    let judge = Judge { snapshots, edits, tried: as_named.1.iter().map(Option::is_some).collect() };
    // Each candidate with what its edits say as named: `None` when they
    // need the file, else how the content they wrote relates to it.
    let mut tentative: Vec<(Alias, Option<Kinship>)> = Vec::new();
    for alias in candidates.iter().filter(|a| !judge.mine(a).is_empty()) {
        if !judge.applied(alias, &as_named, true) {
            tentative.push((alias.clone(), None));
        } else if let kin @ (Kinship::Same | Kinship::Unsure) = judge.kinship(alias, &as_named) {
            tentative.push((alias.clone(), Some(kin)));
        }
    }
    let (taken, doubtful, mut result) = if tentative.is_empty() {
        (Vec::new(), Vec::new(), as_named)
    } else {
        let all: Vec<Alias> = tentative.iter().map(|(a, _)| a.clone()).collect();
        let redirected = run(&all)?;
        // A rewrite that fails on the tracked file (a create that will not
        // overwrite) was not written for it after all: a new file.
        let fits = |(a, kin): &(Alias, Option<Kinship>)| kin.is_none() || judge.applied(a, &redirected, false);
        let (doubtful, taken): (Vec<_>, Vec<_>) =
            tentative.iter().filter(|t| fits(t)).partition(|(_, kin)| *kin == Some(Kinship::Unsure));
        let (doubtful, taken): (Vec<Alias>, Vec<Alias>) =
            (doubtful.into_iter().map(|t| t.0.clone()).collect(), taken.into_iter().map(|t| t.0.clone()).collect());
        let result = match (taken.len() == all.len(), taken.is_empty()) {
            (true, _) => redirected,
            (false, true) => as_named,
            (false, false) => run(&taken)?,
        };
        (taken, doubtful, result)
    };
    for alias in &doubtful {
        judge.refuse(alias, &mut result);
    }
    let notes = candidates
        .iter()
        .filter(|alias| !doubtful.contains(alias))
        .filter_map(|alias| match taken.contains(alias) {
            true => Some(redirected_note(alias, judge.applied(alias, &result, false))),
            false => judge.created(alias).then(|| created_note(alias)),
        })
        .collect();
    Ok(Settled { aliases: taken, run: result, notes })
}

/// What [`settle`] reads the first run's verdicts by.
struct Judge<'a> {
    snapshots: &'a [File],
    edits: &'a [Edit],
    /// The edits that were tried (not refused, not left out).
    tried: Vec<bool>,
}

impl Judge<'_> {
    /// The tried edits of the named path.
    fn mine(&self, alias: &Alias) -> Vec<usize> {
        (0..self.edits.len()).filter(|&i| self.tried[i] && self.edits[i].path == alias.named).collect()
    }

    /// Whether every edit of the named path applied in `run`, and there
    /// (`exactly`: not retried on another file, as a SEARCH block may be).
    fn applied<R>(&self, alias: &Alias, (_, verdicts, _): &Run<R>, exactly: bool) -> bool {
        self.mine(alias).into_iter().all(|i| {
            verdicts[i].as_ref().is_some_and(|o| {
                let there = o.applied_path.as_ref().is_none_or(|p| *p == alias.named);
                o.status == EditStatus::Applied && (there || !exactly)
            })
        })
    }

    /// How what the edits wrote as named relates to the tracked file.
    fn kinship<R>(&self, alias: &Alias, (changes, _, _): &Run<R>) -> Kinship {
        let real = self.snapshots.iter().find(|f| f.path == alias.real).map_or("", |f| f.content.as_str());
        let written = changes.iter().find_map(|c| match c {
            Change::Write(file) if file.path == alias.named => Some(file.content.as_str()),
            _ => None,
        });
        written.map_or(Kinship::Other, |written| kinship(real, written))
    }

    /// Whether a tried edit writes the named path as a new file, unless it
    /// is a file moved to a path its own name ends with (no file beside it).
    fn created(&self, alias: &Alias) -> bool {
        let writes =
            |(i, e): (usize, &Edit)| self.tried[i] && (e.path == alias.named || e.related_paths.contains(&alias.named));
        let moved_from = |e: &Edit| e.path == alias.real && e.related_paths.contains(&alias.named);
        self.edits.iter().enumerate().any(writes) && !self.edits.iter().any(moved_from)
    }

    /// Fail the named path's edits with a did-you-mean, and drop what they
    /// wrote: neither a stray file nor a guessed overwrite.
    fn refuse<R>(&self, alias: &Alias, (changes, verdicts, _): &mut Run<R>) {
        changes.retain(|c| c.path() != alias.named);
        for i in self.mine(alias) {
            verdicts[i] = Some(doubtful_outcome(i, alias));
        }
    }
}

/// How content written under a missing name relates to the tracked file
/// the name can mean.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kinship {
    /// A rewrite of it.
    Same,
    /// Cannot tell: the tracked file has a line or two, and the content
    /// does not resemble them. Counting lines says nothing about so few.
    Unsure,
    /// New content.
    Other,
}

/// Lines a tracked file may have and still be too small for the line count.
const TINY: usize = 2;

/// A rewrite keeps most of the file's lines ([`mostly_the_same`]). A file
/// of a line or two has too few lines for that: there, a rewrite is text
/// that contains it, is contained in it, or is at least half like it
/// (`version = 1` for `version = 2`, `hello` for `hello, world`).
fn kinship(old: &str, new: &str) -> Kinship {
    if mostly_the_same(old, new) {
        return Kinship::Same;
    }
    fn text(t: &str) -> Vec<&str> {
        t.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
    }
    let (old, new) = (text(old), text(new));
    match (old.len() > TINY, old.is_empty(), new.is_empty()) {
        (true, _, _) | (_, true, true) => Kinship::Other,
        (_, true, false) | (_, false, true) => Kinship::Unsure,
        _ => {
            let (old, new) = (old.join("\n"), new.join("\n"));
            let like = new.contains(&old) || old.contains(&new) || line_similarity(&old, &new) >= 0.5;
            if like { Kinship::Same } else { Kinship::Unsure }
        }
    }
}

/// Whether `new` keeps most of `old`: at least half the non-blank lines of
/// the longer of the two are found in the other (as a multiset, ignoring
/// the whitespace around each line).
fn mostly_the_same(old: &str, new: &str) -> bool {
    fn lines(text: &str) -> Vec<&str> {
        let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        lines.sort_unstable();
        lines
    }
    let (old, new) = (lines(old), lines(new));
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < old.len() && j < new.len() {
        match old[i].cmp(new[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => (shared, i, j) = (shared + 1, i + 1, j + 1),
        }
    }
    shared > 0 && shared * 2 >= old.len().max(new.len())
}

fn redirected_note(alias: &Alias, applied: bool) -> Diagnostic {
    let Alias { named, real } = alias;
    let done = if applied { "was applied to" } else { "was tried on" };
    Diagnostic::warning(
        format!("{named} does not exist; its edit {done} {real}, the one tracked file it can mean"),
        None,
    )
    .with_hint(format!("name files by their path from the repository root ({real})"))
}

/// The verdict on edit `index`, written under `alias.named` for a tracked
/// file too small to tell whether it was meant.
fn doubtful_outcome(index: usize, alias: &Alias) -> Outcome {
    let Alias { named, real } = alias;
    Outcome {
        edit: index as u32,
        status: EditStatus::Failed,
        kind: Some(FailureKind::Ambiguous),
        message: format!(
            "{named} does not exist; did you mean {real}, the one tracked file it can mean? {real} has too few \
             lines to tell whether this content rewrites it or is a new file beside it, so neither was done"
        ),
        hint: Some(format!(
            "to rewrite {real}, name it by its path from the repository root ({real}); to create {named} beside it, \
             send it as a new file (a diff from /dev/null, `*** Add File`, a create call), which never overwrites"
        )),
        applied_path: None,
        lines: None,
        matched: None,
    }
}

fn created_note(alias: &Alias) -> Diagnostic {
    let Alias { named, real } = alias;
    Diagnostic::warning(
        format!(
            "{named} was created as a new file beside the tracked {real}: what the reply wrote for it is no edit of {real}"
        ),
        None,
    )
    .with_hint(format!("to change {real}, name it by its path from the repository root"))
}

/// The files a plugin is given: the snapshots, plus each alias's real file
/// under the name the reply used, so every format applies to it unchanged.
pub fn plugin_files<'a>(snapshots: &'a [File], aliases: &[Alias]) -> Cow<'a, [File]> {
    if aliases.is_empty() {
        // No copy of files that may be megabytes when there is nothing to add.
        return Cow::Borrowed(snapshots);
    }
    let mut files = snapshots.to_vec();
    for alias in aliases {
        if let Some(real) = snapshots.iter().find(|f| f.path == alias.real) {
            files.push(File::new(alias.named.clone(), real.content.clone()));
        }
    }
    Cow::Owned(files)
}

/// `changes` with each named path turned back into its real file.
pub fn real_changes(changes: Vec<Change>, aliases: &[Alias]) -> Vec<Change> {
    let real = |path: String| aliases.iter().find(|a| a.named == path).map_or(path, |a| a.real.clone());
    changes
        .into_iter()
        .map(|change| match change {
            Change::Write(file) => Change::Write(File { path: real(file.path), ..file }),
            Change::Delete(path) => Change::Delete(real(path)),
            Change::Rename(r) => Change::Rename(agent_apply_sdk::types::Renamed { from: real(r.from), ..r }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_apply_sdk::types::Span;

    #[test]
    fn a_missing_path_means_the_one_tracked_file_with_its_tail() {
        let tracked = ["sample.txt", "src/app.py", "tests/app.py", "lib/util.rs"];
        let missing =
            ["path/to/sample.txt".to_string(), "app.py".to_string(), "util.rs".to_string(), "new.rs".to_string()];
        let (aliases, notes) = resolve(&missing, tracked.iter().copied());
        assert_eq!(
            aliases,
            [
                Alias { named: "path/to/sample.txt".into(), real: "sample.txt".into() },
                Alias { named: "util.rs".into(), real: "lib/util.rs".into() }
            ]
        );
        assert_eq!(notes.len(), 1, "a single match is only a candidate until settled");
        assert!(notes[0].message.contains("did you mean src/app.py or tests/app.py"), "{}", notes[0].message);
        assert!(!same_tail("xsample.txt", "sample.txt"));
        let changes = real_changes(vec![Change::Write(File::new("util.rs", "x"))], &aliases);
        assert_eq!(changes[0].path(), "lib/util.rs");
    }

    /// A run of one edit on `named`: a SEARCH-like edit (`needs`) applies
    /// where the file holds that text; a create-like one writes `writes`,
    /// which when marked `create:` will not overwrite a file.
    fn fake(
        named: &str,
        snapshots: &[File],
        needs: Option<&str>,
        writes: &str,
    ) -> impl FnMut(&[Alias]) -> Result<Run<()>, Error> {
        let (named, snapshots, needs, writes) =
            (named.to_string(), snapshots.to_vec(), needs.map(str::to_string), writes.to_string());
        move |aliases: &[Alias]| {
            let files = plugin_files(&snapshots, aliases);
            let current = files.iter().find(|f| f.path == named).map(|f| f.content.clone());
            let fits = match (&needs, &current) {
                (Some(needs), Some(current)) => current.contains(needs.as_str()),
                (Some(_), None) => false,
                (None, current) => current.is_none() || !writes.starts_with("create:"),
            };
            let status = if fits { EditStatus::Applied } else { EditStatus::Failed };
            let outcome = Outcome {
                edit: 0,
                status,
                kind: None,
                message: String::new(),
                hint: None,
                applied_path: None,
                lines: None,
                matched: None,
            };
            let changes = if fits {
                vec![Change::Write(File::new(named.clone(), writes.trim_start_matches("create:")))]
            } else {
                Vec::new()
            };
            Ok((changes, vec![Some(outcome)], ()))
        }
    }

    fn edit(path: &str) -> Edit {
        Edit {
            path: path.into(),
            related_paths: Vec::new(),
            span: Span { start: 0, end: 0, first_line: 1, last_line: 1 },
            summary: String::new(),
            payload: String::new(),
        }
    }

    #[test]
    fn an_edit_goes_to_the_tracked_file_only_when_it_is_an_edit_of_it() {
        let utils = "import os\n\ndef make_fixture():\n    return {}\n\ndef cleanup(path):\n    os.remove(path)\n";
        let snapshots = [File::new("pkg/test_utils.py", utils)];
        let alias = [Alias { named: "test_utils.py".into(), real: "pkg/test_utils.py".into() }];
        let edits = [edit("test_utils.py")];
        let settled = |needs: Option<&str>, writes: &str| {
            let settled = settle(&alias, &snapshots, &edits, fake("test_utils.py", &snapshots, needs, writes)).unwrap();
            (settled.aliases.len(), settled.run.0[0].path().to_string(), settled.notes[0].message.clone())
        };
        // SEARCH text found in the tracked file: its edit.
        let (taken, path, note) = settled(Some("def cleanup"), "edited");
        assert_eq!((taken, path.as_str()), (1, "test_utils.py"));
        assert!(note.contains("was applied to pkg/test_utils.py"), "{note}");
        // A whole file that keeps most of the tracked file's lines: a rewrite of it.
        let (taken, _, _) = settled(None, &utils.replace("{}", "{\"a\": 1}"));
        assert_eq!(taken, 1);
        // New content: a new file, said so.
        let (taken, path, note) = settled(None, "def assert_close(a, b):\n    assert abs(a - b) < 1e-9\n");
        assert_eq!((taken, path.as_str()), (0, "test_utils.py"));
        assert!(note.contains("created as a new file beside the tracked pkg/test_utils.py"), "{note}");
        // A copy that will not overwrite the tracked file (a create) stays new.
        let (taken, _, note) = settled(None, &format!("create:{utils}"));
        assert_eq!(taken, 0, "{note}");
    }

    #[test]
    fn a_rewrite_of_a_tiny_file_goes_to_it_or_is_refused_never_made_a_stray() {
        let snapshots = [File::new("sample.txt", "hello\n")];
        let alias = [Alias { named: "path/to/sample.txt".into(), real: "sample.txt".into() }];
        let edits = [edit("path/to/sample.txt")];
        let settled = |writes: &str| {
            settle(&alias, &snapshots, &edits, fake("path/to/sample.txt", &snapshots, None, writes)).unwrap()
        };
        // Shares its text: a rewrite of it.
        let taken = settled("hello, world\n");
        assert_eq!((taken.aliases.len(), taken.run.1[0].as_ref().unwrap().status), (1, EditStatus::Applied));
        // Too small to tell: refused with a did-you-mean, nothing written.
        let refused = settled("fn main() {}\n");
        assert!(refused.aliases.is_empty() && refused.run.0.is_empty() && refused.notes.is_empty());
        let verdict = refused.run.1[0].as_ref().unwrap();
        assert_eq!((verdict.status, verdict.kind), (EditStatus::Failed, Some(FailureKind::Ambiguous)));
        assert!(verdict.message.contains("did you mean sample.txt"), "{}", verdict.message);
        // A create that will not overwrite is a new file, said so.
        let created = settled("create:fn main() {}\n");
        assert_eq!((created.aliases.len(), created.run.0[0].path()), (0, "path/to/sample.txt"));
        assert!(created.notes[0].message.contains("created as a new file"), "{}", created.notes[0].message);
    }

    #[test]
    fn most_lines_kept_is_a_rewrite() {
        assert!(mostly_the_same("a\nb\nc\nd\n", "a\nb\nc\nx\n"));
        assert!(!mostly_the_same("a\nb\nc\nd\n", "a\nx\ny\nz\n"));
        assert!(!mostly_the_same("hello\n", "hello, world\n"));
        assert!(!mostly_the_same("", ""));
    }

    #[test]
    fn a_file_of_a_line_or_two_is_judged_by_its_text() {
        assert_eq!(kinship("hello\n", "hello, world\n"), Kinship::Same);
        assert_eq!(kinship("version = 1\n", "version = 2\n"), Kinship::Same);
        assert_eq!(kinship("alpha\nbeta\n", "alpha\n"), Kinship::Same);
        assert_eq!(kinship("hello\n", "fn main() {}\n"), Kinship::Unsure);
        assert_eq!(kinship("", "anything\n"), Kinship::Unsure);
        assert_eq!(kinship("", "\n"), Kinship::Other);
        // Three lines and more: the line count decides, as before.
        assert_eq!(kinship("a\nb\nc\n", "x\ny\nz\n"), Kinship::Other);
    }
}
