//! Properties on generated inputs, through the real wasm components and the
//! real binary, with case counts small enough for CI:
//! - no format's parser (or apply) traps on any input;
//! - apply never writes outside the repository, whatever paths a reply names;
//! - `--dry-run` writes nothing;
//! - a failed apply leaves the repository byte-identical.
//!
//! The fuzz regression corpus (fuzz/regressions/) is replayed here too.

use std::path::Path;

use agent_apply::transaction::check_path;
use agent_apply_sdk::{fuzzing, paths};
use proptest::prelude::*;

use crate::common::{Component, registry, shared_cache};
use crate::repo::TestRepo;

const FORMATS: &[&str] = &["whole", "editblock", "udiff", "compact", "hashline", "tool-calls", "apply-patch"];

/// Pieces of every format's syntax, and of hostile text, so generated
/// replies reach deep into the parsers instead of being rejected at once.
const TOKENS: &[&str] = &[
    "a.txt\n",
    "src/x.py\n",
    "```\n",
    "```python\n",
    "~~~\n",
    "<<<<<<< SEARCH\n",
    "*** Begin Patch\n",
    "*** Update File: a.txt\n",
    "*** Move to: ../out\n",
    "@@ def f\n",
    "*** End of File\n",
    "*** End Patch\n",
    "cd .. && apply_patch <<'EOF'\n",
    "=======\n",
    ">>>>>>> REPLACE\n",
    "--- a/a.txt\n",
    "+++ b/a.txt\n",
    "--- /dev/null\n",
    "@@ -1,2 +1,2 @@\n",
    "@@ @@\n",
    "-a\n",
    "+b\n",
    " a\n",
    "...\n",
    "# ... rest of code ...\n",
    "1:ab|",
    "2:zz|x\n",
    "@@ a.txt\n",
    "set_line 1:ab\n",
    "insert_after 2:cd\n",
    "replace 1:ab..2:cd\n",
    "delete 1-3\n",
    "{\"name\": \"Edit\", \"input\": ",
    "{\"file_path\": \"a.txt\", \"old_string\": \"a\", \"new_string\": \"b\", \"replace_all\": true}",
    "{\"command\": \"insert\", \"path\": \"a.txt\", \"insert_line\": 1, \"insert_text\": \"x\"}",
    "\"edits\": [",
    "}",
    "]",
    "**a.txt**\n",
    "### a.txt\n",
    "\r\n",
    "\n",
    "\u{feff}",
    "\u{201c}q\u{201d}",
    "\u{0}",
    "é",
    "x",
    " ",
    "\t",
    "999999999999",
    "-1",
];

fn reply_text() -> impl Strategy<Value = String> {
    let token = prop::sample::select(TOKENS).prop_map(str::to_string);
    prop_oneof![
        3 => prop::collection::vec(token, 0..40).prop_map(|t| t.concat()),
        1 => any::<String>(),
    ]
}

fn reply_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => reply_text().prop_map(String::into_bytes),
        1 => (reply_text(), reply_text()).prop_map(|(content, reply)| fuzzing::join_apply_input(&content, &reply)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_format_traps_on_any_reply_in_parse_or_apply(data in reply_bytes()) {
        let registry = registry(&shared_cache());
        for name in FORMATS {
            let component = Component::builtin(&registry, name);
            fuzzing::parse_bytes(&component, &data).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
            fuzzing::apply_bytes(&component, &data).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        }
    }
}

/// Path pieces that try every way out of a repository.
const HOSTILE: &[&str] =
    &["..", "../..", "/tmp", "/", ".git", ".GIT", "./.git", "out", "sub/../..", "sub/../../..", "C:", "\\", "sub", "."];

fn hostile_path() -> impl Strategy<Value = String> {
    (prop::collection::vec(prop::sample::select(HOSTILE), 1..4), "[a-z]{1,6}(\\.txt)?")
        .prop_map(|(dirs, name)| format!("{}/{name}", dirs.join("/")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// The policy itself: a path it accepts resolves inside the root, even
    /// through the `out` symlink that points outside.
    #[test]
    fn an_accepted_path_always_resolves_inside_the_repository(path in hostile_path()) {
        let (repo, _outside) = repo_with_escape_hatch();
        if let Ok(full) = check_path(repo.path(), &path) {
            let root = repo.path().canonicalize().unwrap();
            let mut existing = full.as_path();
            while !existing.exists() {
                existing = existing.parent().unwrap();
            }
            prop_assert!(existing.canonicalize().unwrap().starts_with(&root), "{path} resolved outside");
            prop_assert!(!full.strip_prefix(repo.path()).unwrap().starts_with(".git"), "{path} is in .git");
        }
    }
}

/// A repository with `sub/` and an `out` symlink to a directory outside it.
fn repo_with_escape_hatch() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::with(&[("a.txt", "a\n"), ("sub/b.txt", "b\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("out")).unwrap();
    (repo, outside)
}

/// Every file under `dir` but git's own bookkeeping (the index, logs,
/// objects, refs, the agent-apply state), as path → bytes.
fn git_dir_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()) {
            let relative = entry.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if ["objects", "logs", "refs", "agent-apply", "index", "HEAD", "ORIG_HEAD"].iter().any(|p| relative == *p) {
                continue;
            }
            if entry.is_dir() {
                stack.push(entry);
            } else {
                files.push((relative, std::fs::read(&entry).unwrap()));
            }
        }
    }
    files.sort();
    files
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Through the binary: replies naming hostile paths (alone, or beside a
    /// good edit with --partial) never write outside the repository or into
    /// .git/, and without --partial change nothing at all.
    #[test]
    fn apply_never_writes_outside_the_repository(
        paths in prop::collection::vec(hostile_path(), 1..4),
        with_good_edit in any::<bool>(),
        format in prop::sample::select(&["whole", "editblock", "udiff"][..]),
    ) {
        let (repo, outside) = repo_with_escape_hatch();
        let git_before = git_dir_files(&repo.path().join(".git"));
        let before = repo.state();
        let mut targets: Vec<&str> = paths.iter().map(String::as_str).collect();
        if with_good_edit {
            targets.push("good.txt");
        }
        let reply = create_reply(format, &targets);
        let mut cmd = repo.apply();
        cmd.args(["--format", format, "-"]).write_stdin(reply);
        if with_good_edit {
            cmd.arg("--partial");
        }
        let out = cmd.output().unwrap();
        let outside_files: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        prop_assert!(outside_files.is_empty(), "wrote outside: {outside_files:?}");
        prop_assert_eq!(git_dir_files(&repo.path().join(".git")), git_before, "wrote into .git/");
        // Formats read `./a` as `a` (the SDK's `paths::normalize`), so the
        // policy is asked about the path as the format passes it on.
        let accepted: Vec<&&str> =
            targets.iter().filter(|p| check_path(repo.path(), &paths::normalize(p)).is_ok()).collect();
        if accepted.is_empty() {
            prop_assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
            prop_assert_eq!(repo.state(), before);
        }
        repo.fsck();
    }
}

/// A reply in `format` that creates each of `paths` with one line.
fn create_reply(format: &str, paths: &[&str]) -> String {
    paths
        .iter()
        .map(|path| match format {
            "whole" => format!("{path}\n```\ncreated\n```\n\n"),
            "editblock" => format!("{path}\n```\n<<<<<<< SEARCH\n=======\ncreated\n>>>>>>> REPLACE\n```\n\n"),
            "udiff" => format!("```diff\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+created\n```\n\n"),
            other => unreachable!("no create reply for {other}"),
        })
        .collect()
}

/// One edit of a reply: replace `old` with `new` in a.txt or b.txt
/// (editblock), where `old` may or may not be in the file.
fn edit() -> impl Strategy<Value = (bool, String, String)> {
    (any::<bool>(), "[a-c]{1,2}", "[a-z ]{0,6}")
}

fn editblock_reply(edits: &[(bool, String, String)]) -> String {
    edits
        .iter()
        .map(|(first, old, new)| {
            let path = if *first { "a.txt" } else { "b.txt" };
            format!("{path}\n```\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n\n")
        })
        .collect()
}

fn lines() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-c]{1,2}", 1..6).prop_map(|l| l.join("\n") + "\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the reply and whatever the dirty state, --dry-run leaves
    /// HEAD, the index, every file and the object database as they were.
    #[test]
    fn dry_run_writes_nothing(
        a in lines(), b in lines(), dirty in prop::option::of(lines()),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let repo = TestRepo::with(&[("a.txt", &a), ("b.txt", &b)]);
        if let Some(dirty) = &dirty {
            repo.write("a.txt", dirty);
            repo.write("untracked.txt", dirty);
        }
        let before = repo.state();
        repo.apply().args(["--format", "editblock", "--dry-run", "-"]).write_stdin(editblock_reply(&edits)).output().unwrap();
        prop_assert_eq!(repo.state(), before);
    }

    /// A reply with at least one edit that cannot apply (its SEARCH text is
    /// not in the file) fails, in every mode, and changes nothing.
    #[test]
    fn a_failed_apply_leaves_the_repository_byte_identical(
        a in lines(), b in lines(), dirty in prop::option::of(lines()),
        mut edits in prop::collection::vec(edit(), 0..3),
        missing_at in any::<prop::sample::Index>(),
        mode in prop::sample::select(&["commit", "--no-commit", "--json"][..]),
    ) {
        let repo = TestRepo::with(&[("a.txt", &a), ("b.txt", &b)]);
        if let Some(dirty) = &dirty {
            repo.write("b.txt", dirty);
        }
        edits.insert(missing_at.index(edits.len() + 1), (true, "NOT IN ANY FILE".into(), "x".into()));
        let before = repo.state();
        let mut cmd = repo.apply();
        cmd.args(["--format", "editblock", "-"]).write_stdin(editblock_reply(&edits));
        if mode != "commit" {
            cmd.arg(mode);
        }
        let out = cmd.output().unwrap();
        prop_assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        prop_assert_eq!(repo.state(), before);
    }
}

/// Every input the fuzzers ever crashed on, kept under
/// fuzz/regressions/<target>/, replayed through the real components.
#[test]
fn fuzz_regressions_replay_through_the_components() {
    let regressions = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let registry = registry(&shared_cache());
    let mut ran = 0;
    for name in FORMATS {
        let component = Component::builtin(&registry, name);
        // Fuzz target names use `_` where format names use `-` (apply-patch).
        let target = name.replace('-', "_");
        ran += fuzzing::replay(&component, &regressions.join(format!("parse_{target}")), fuzzing::parse_bytes).unwrap();
        ran += fuzzing::replay(&component, &regressions.join(format!("apply_{target}")), fuzzing::apply_bytes).unwrap();
    }
    eprintln!("replayed {ran} fuzz regressions");
}
