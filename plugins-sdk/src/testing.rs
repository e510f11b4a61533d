//! A corpus is a directory with one subdirectory per case. A case holds:
//!
//! - `input/`: the files before, read byte for byte (paths relative to it,
//!   with `/` separators);
//! - one reply file, `reply.<ext>` (`reply.md` in the built-in corpora);
//! - optional `candidates`: extra candidate paths, one per line, as `--files`
//!   passes them;
//! - optional `options`: `key=value` lines, passed as format options;
//! - either `expected/` (the files after, byte for byte; files not listed
//!   must be unchanged) or `expected-error` (a substring of one failure
//!   message; nothing may change);
//! - optional `expected-hint`, next to `expected-error`: lines that must each
//!   appear in the failures' hints (the fresh view of a stale anchor, say).
//!
//! The host's end-to-end test runs the same cases through the wasm component
//! (and ignores `expected-hint`).
//!
//! A case is all or nothing, as the host's transaction is: a parse error or
//! one failed edit fails the whole reply, and no change is kept.
//!
//! A format's corpus test is then a few lines:
//!
//! ```text
//! use std::path::Path;
//!
//! #[test]
//! fn corpus() {
//!     let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/myformat");
//!     agent_apply_sdk::testing::run_corpus(&MyFormat, &dir).assert_passed(10);
//! }
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Plugin;
use crate::types::{Change, EditStatus, File, OptionValue, Severity};

/// Files by path (relative, `/`-separated) and content.
pub type Tree = BTreeMap<String, String>;

/// One reason a reply did not apply: an error diagnostic of `parse` or a
/// failed outcome of `apply`.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// `malformed` for a parse error, else the failure kind (`not-found`, …).
    pub kind: String,
    /// The message; `expected-error` must be a substring of one of them.
    pub message: String,
    /// The hint, if any; `expected-hint` lines are looked for in these.
    pub hint: Option<String>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n{hint}")?;
        }
        Ok(())
    }
}

/// What running a reply did.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    /// Every edit applied; the files after (the input with the changes).
    Applied(Tree),
    /// The reply failed; nothing is kept.
    Failed(Vec<Failure>),
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case directory's name.
    pub name: String,
    /// `None` when the case passed, else what was wrong, readably.
    pub problem: Option<String>,
}

impl CaseResult {
    /// Whether the case passed.
    pub fn passed(&self) -> bool {
        self.problem.is_none()
    }
}

/// The verdicts on every case of a corpus, in case-name order.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusReport {
    /// The corpus directory's name (the format's, in the built-in corpora).
    pub name: String,
    /// One result per case.
    pub cases: Vec<CaseResult>,
}

impl CorpusReport {
    /// How many cases passed.
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed()).count()
    }

    /// The cases that did not pass.
    pub fn failed(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| !c.passed())
    }

    /// Panic unless the corpus has at least `min_cases` cases and every one
    /// passed, listing each failing case and why.
    pub fn assert_passed(&self, min_cases: usize) {
        let total = self.cases.len();
        assert!(total >= min_cases, "the {} corpus has only {total} cases", self.name);
        let failed: Vec<String> =
            self.failed().map(|c| format!("== {}\n{}", c.name, c.problem.as_deref().unwrap_or(""))).collect();
        assert!(failed.is_empty(), "{} of {total} cases failed:\n{}", failed.len(), failed.join("\n"));
    }
}

/// Run every case under `corpus_dir` (each subdirectory, in name order)
/// through `plugin`, printing one line per case and a summary.
///
/// Panics if `corpus_dir` cannot be read.
pub fn run_corpus(plugin: &dyn Plugin, corpus_dir: &Path) -> CorpusReport {
    let mut dirs: Vec<PathBuf> = fs::read_dir(corpus_dir)
        .unwrap_or_else(|e| panic!("corpus dir {}: {e}", corpus_dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let cases: Vec<CaseResult> =
        dirs.iter().map(|dir| CaseResult { name: file_name(dir), problem: check_case(plugin, dir).err() }).collect();
    let report = CorpusReport { name: file_name(corpus_dir), cases };
    println!("{} corpus: {}/{} cases pass", report.name, report.passed(), report.cases.len());
    report
}

/// [`assert_hints_cover_detect`] over every reply of the repository's
/// corpus (`tests/corpus`, all formats') and detection set (`tests/detect`),
/// `root` being the repository. Panics unless `plugin` detects some of them.
pub fn assert_hints_cover_detect_in(plugin: &dyn Plugin, root: &Path) {
    let replies = replies_under(&[&root.join("tests/corpus"), &root.join("tests/detect")]);
    let detected = assert_hints_cover_detect(plugin, &replies);
    println!("{detected} of {} replies detected, each holding a hint", replies.len());
    assert!(detected > 0, "none of the {} replies is detected: is the corpus where it was?", replies.len());
}

/// Every reply under `dirs` (a case's `reply.*` file, or a loose `.md`
/// file), searched to any depth, in path order.
pub fn replies_under(dirs: &[&Path]) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for path in entries.map(|e| e.unwrap().path()) {
            if path.is_dir() {
                walk(&path, found);
            } else if file_name(&path).starts_with("reply.") || path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    dirs.iter().for_each(|dir| walk(dir, &mut found));
    found.sort();
    found.into_iter().filter_map(|path| Some((path.clone(), fs::read_to_string(&path).ok()?))).collect()
}

/// Panics unless every reply `plugin` detects (with any score above 0)
/// holds one of its `detect_hints`, ignoring ASCII case; the same for each
/// reply in lower and in upper case. The host skips `detect` for a reply
/// that holds none, so a hint that is not needed for a score loses replies.
/// Returns how many of the replies (as written) were detected.
pub fn assert_hints_cover_detect(plugin: &dyn Plugin, replies: &[(PathBuf, String)]) -> usize {
    let hints: Vec<String> = plugin.info().detect_hints.iter().map(|h| h.to_ascii_lowercase()).collect();
    assert!(!hints.is_empty(), "the format gives no detect hints");
    let mut detected = 0;
    for (path, reply) in replies {
        for text in [reply.clone(), reply.to_ascii_lowercase(), reply.to_ascii_uppercase()] {
            if plugin.detect(&text) <= 0.0 {
                continue;
            }
            detected += usize::from(text == *reply);
            let lower = text.to_ascii_lowercase();
            assert!(
                hints.iter().any(|hint| lower.contains(hint.as_str())),
                "{} is detected (in this case: {:?}) but holds none of the hints {hints:?}",
                path.display(),
                text.chars().take(40).collect::<String>()
            );
        }
    }
    detected
}

/// Check one case directory: `Ok(())` when it passes, else what was wrong.
pub fn check_case(plugin: &dyn Plugin, dir: &Path) -> Result<(), String> {
    let input = read_tree(&dir.join("input"));
    let reply = read_reply(dir)?;
    let candidates = listed(&dir.join("candidates"));
    let options: Vec<OptionValue> = listed(&dir.join("options"))
        .iter()
        .filter_map(|l| l.split_once('=').map(|(k, v)| OptionValue { key: k.trim().into(), value: v.trim().into() }))
        .collect();
    let ran = run(plugin, &input, &reply, &candidates, &options)?;
    match &ran {
        Ran::Applied(_) => println!("{}: applied", file_name(dir)),
        Ran::Failed(failures) => println!(
            "{}: failed: {}",
            file_name(dir),
            failures
                .first()
                .map(|f| format!("{}: {}", f.kind, f.message.lines().next().unwrap_or("")))
                .unwrap_or_default()
        ),
    }
    let want_error = fs::read_to_string(dir.join("expected-error")).ok().map(|s| s.trim().to_string());
    let want_hints = listed(&dir.join("expected-hint"));
    match (ran, want_error) {
        (Ran::Failed(failures), Some(want)) => {
            if !failures.iter().any(|f| f.message.contains(&want)) {
                return Err(format!("failed, but no message holds {want:?}:\n{}", render(&failures)));
            }
            let hints = failures.iter().filter_map(|f| f.hint.as_deref()).collect::<Vec<_>>().join("\n");
            for line in &want_hints {
                if !hints.contains(line.as_str()) {
                    return Err(format!("the hints lack {line:?}:\n{hints}"));
                }
            }
            Ok(())
        }
        (Ran::Applied(_), Some(want)) => Err(format!("applied, but it must fail with {want:?}")),
        (Ran::Failed(failures), None) => Err(format!("failed:\n{}", render(&failures))),
        (Ran::Applied(after), None) => {
            if !want_hints.is_empty() {
                return Err("the case has expected-hint but no expected-error".into());
            }
            if !dir.join("expected").is_dir() {
                return Err("the case has neither expected/ nor expected-error".into());
            }
            compare(&input, &read_tree(&dir.join("expected")), &after)
        }
    }
}

/// Run a reply against `input` the way the host does: parse; stop on an
/// error diagnostic or when there are no edits; hand `apply` the files the
/// edits name (targets, then related paths) and the `candidates`, in
/// first-seen order, those that exist in `input`; fail on any failed outcome;
/// else apply the changes (writes, deletes, renames) to a copy of `input`.
///
/// `Err` is a contract error of `apply` itself, which no case may expect.
pub fn run(
    plugin: &dyn Plugin,
    input: &Tree,
    reply: &str,
    candidates: &[String],
    options: &[OptionValue],
) -> Result<Ran, String> {
    let parsed = plugin.parse(reply, options);
    let errors: Vec<Failure> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| Failure { kind: "malformed".into(), message: d.message.clone(), hint: d.hint.clone() })
        .collect();
    if !errors.is_empty() {
        return Ok(Ran::Failed(errors));
    }
    if parsed.edits.is_empty() {
        let message = "no edits found in the reply".to_string();
        return Ok(Ran::Failed(vec![Failure { kind: "malformed".into(), message, hint: None }]));
    }
    let mut wanted: Vec<&String> = Vec::new();
    for path in parsed.edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths)).chain(candidates) {
        if !wanted.contains(&path) {
            wanted.push(path);
        }
    }
    let files = wanted.iter().filter_map(|p| input.get(*p).map(|c| File::new(p.as_str(), c.as_str()))).collect();
    let out =
        plugin.apply(files, parsed.edits.clone(), options).map_err(|e| format!("apply returned an error: {e}"))?;
    let failures: Vec<Failure> = out
        .outcomes
        .iter()
        .filter(|o| o.status == EditStatus::Failed)
        .map(|o| Failure {
            kind: o.kind.map(|k| k.as_str()).unwrap_or("failed").into(),
            message: o.message.clone(),
            hint: o.hint.clone(),
        })
        .collect();
    if !failures.is_empty() {
        return Ok(Ran::Failed(failures));
    }
    let mut after = input.clone();
    for change in out.changes {
        match change {
            Change::Write(file) => {
                after.insert(file.path, file.content);
            }
            Change::Delete(path) => {
                after.remove(&path);
            }
            Change::Rename(renamed) => {
                after.remove(&renamed.from);
                after.insert(renamed.to, renamed.content);
            }
        }
    }
    Ok(Ran::Applied(after))
}

/// Read every file under `dir`, recursively and byte for byte, by path
/// relative to `dir` with `/` separators. A missing `dir` is an empty tree.
///
/// Panics on a file that cannot be read or is not UTF-8, naming it.
pub fn read_tree(dir: &Path) -> Tree {
    let mut out = Tree::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let content = String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(rel, content);
            }
        }
    }
    out
}

/// The trimmed, non-empty lines of the file at `path` (none if it is absent).
pub fn listed(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// The case's one `reply.<ext>` file.
fn read_reply(dir: &Path) -> Result<String, String> {
    let mut replies: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && file_name(p).starts_with("reply."))
        .collect();
    replies.sort();
    match replies.as_slice() {
        [reply] => fs::read_to_string(reply).map_err(|e| format!("{}: {e}", file_name(reply))),
        [] => Err("the case has no reply.* file".into()),
        several => Err(format!(
            "the case has several reply files: {}",
            several.iter().map(|p| file_name(p)).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Files in `expected` must match `after`; every other file of `after` must
/// be as it was in `input`.
fn compare(input: &Tree, expected: &Tree, after: &Tree) -> Result<(), String> {
    let mut problems = Vec::new();
    for (path, want) in expected {
        match after.get(path) {
            Some(got) if got == want => {}
            Some(got) => problems.push(format!("{path} differs:\n--- want\n{want:?}\n--- got\n{got:?}")),
            None => problems.push(format!("{path} is missing")),
        }
    }
    for (path, got) in after {
        if !expected.contains_key(path) && input.get(path) != Some(got) {
            problems.push(format!("{path} changed but is not in expected/: {got:?}"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

fn render(failures: &[Failure]) -> String {
    let mut out = String::new();
    for failure in failures {
        let _ = writeln!(out, "{failure}");
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or_default().to_string_lossy().into_owned()
}
