//! The hostile-reply suite: `tests/hostile/<case>/`, one directory per
//! attack, run through the real binary on a real repository.
//!
//! A case holds:
//! - `input/` (optional): files committed in the first commit;
//! - `setup.sh` (optional): bash run in the repository after that commit,
//!   with `$OUTSIDE` naming a directory outside it (holding `victim.txt`);
//! - `reply.*` (optional): the reply, given on stdin;
//! - `args`: the command line, one argument a line (`--json` is usual);
//! - `expected.toml`: `exit` (the exit code), `says` (strings the output
//!   must hold), `kind` (the failure kind every edit must have, from the
//!   JSON report), `after` (commands run next, one list of arguments each,
//!   each must exit 0) and `exists` (paths under the repository that must
//!   still exist at the end, such as another process's `.git/index.lock`).
//!
//! Every case asserts that nothing changed: HEAD, the index, the working
//! tree (bytes, modes, symlinks), every file under `.git/` (objects, config,
//! hooks) but this tool's own state directory, and the directory outside.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::repo::TestRepo;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    exit: i32,
    #[serde(default)]
    says: Vec<String>,
    kind: Option<String>,
    #[serde(default)]
    after: Vec<Vec<String>>,
    #[serde(default)]
    exists: Vec<String>,
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/hostile")
}

#[test]
fn every_hostile_reply_is_refused_and_changes_nothing() {
    let mut failures = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir()).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 25, "the suite lost cases: {}", cases.len());
    for case in &cases {
        if let Err(message) = run_case(case) {
            failures.push(format!("{}: {message}", case.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

fn run_case(case: &Path) -> Result<(), String> {
    let expected: Expected = toml::from_str(&std::fs::read_to_string(case.join("expected.toml")).unwrap())
        .map_err(|e| format!("expected.toml: {e}"))?;
    let repo = TestRepo::with(&[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    if case.join("input").is_dir() {
        copy_tree(&case.join("input"), repo.path());
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-qm", "input"]);
    }
    if case.join("setup.sh").is_file() {
        let status = repo
            .shell(&case.join("setup.sh"))
            .env("OUTSIDE", outside.path())
            .env("HOSTILE_WASM", crate::common::HOSTILE_WASM)
            .status()
            .map_err(|e| format!("setup.sh: {e}"))?;
        if !status.success() {
            return Err(format!("setup.sh failed: {status}"));
        }
    }
    let before = (repo.state(), tree(&repo.path().join(".git")), tree(outside.path()));

    let args: Vec<String> = std::fs::read_to_string(case.join("args")).unwrap().lines().map(String::from).collect();
    let reply = std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("reply.")))
        .map(|p| std::fs::read(p).unwrap())
        .unwrap_or_default();
    let out = repo.apply().args(&args).write_stdin(reply).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    if out.status.code() != Some(expected.exit) {
        return Err(format!("exit {:?}, expected {}:\n{text}", out.status.code(), expected.exit));
    }
    if let Some(missing) = expected.says.iter().find(|s| !text.contains(s.as_str())) {
        return Err(format!("the output does not say {missing:?}:\n{text}"));
    }
    if let Some(kind) = &expected.kind {
        let report: serde_json::Value = serde_json::from_str(&stdout).map_err(|e| format!("not JSON ({e}): {text}"))?;
        let edits = report["edits"].as_array().cloned().unwrap_or_default();
        if edits.is_empty() || edits.iter().any(|e| e["kind"] != kind.as_str()) {
            return Err(format!("expected every edit to fail as {kind}:\n{text}"));
        }
    }
    for command in &expected.after {
        let out = repo.apply().args(command).output().unwrap();
        if !out.status.success() {
            return Err(format!("`{}` failed afterwards: {}", command.join(" "), String::from_utf8_lossy(&out.stderr)));
        }
    }
    let after = (repo.state(), tree(&repo.path().join(".git")), tree(outside.path()));
    if after != before {
        return Err(describe_change(&before, &after));
    }
    match expected.exists.iter().find(|p| repo.path().join(p).symlink_metadata().is_err()) {
        Some(gone) => Err(format!("{gone} was removed")),
        None => Ok(()),
    }
}

type Snapshot = (crate::repo::RepoState, Vec<(String, String)>, Vec<(String, String)>);

fn describe_change(before: &Snapshot, after: &Snapshot) -> String {
    if before.0 != after.0 {
        return format!("the repository changed:\nbefore {:?}\nafter  {:?}", before.0, after.0);
    }
    let changed = |a: &[(String, String)], b: &[(String, String)]| {
        a.iter().filter(|x| !b.contains(x)).chain(b.iter().filter(|x| !a.contains(x))).cloned().collect::<Vec<_>>()
    };
    if before.1 != after.1 {
        return format!(".git changed: {:?}", changed(&before.1, &after.1));
    }
    format!("the directory outside changed: {:?}", changed(&before.2, &after.2))
}

/// Every entry under `dir` but this tool's state directory, as path → what
/// it is (bytes digest, mode, or symlink target).
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for path in std::fs::read_dir(&at).unwrap().map(|e| e.unwrap().path()) {
            let relative = path.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if relative == "agent-apply" {
                continue;
            }
            let meta = path.symlink_metadata().unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path);
                "dir".into()
            } else {
                use std::os::unix::fs::PermissionsExt as _;
                let bytes = std::fs::read(&path).unwrap();
                format!("{:o} {:x}", meta.permissions().mode(), xxhash_rust::xxh3::xxh3_64(&bytes))
            };
            entries.push((relative, what));
        }
    }
    entries.sort();
    entries
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap().map(|e| e.unwrap().path()) {
        let target = to.join(entry.file_name().unwrap());
        if entry.is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry, &target);
        } else {
            std::fs::copy(&entry, &target).unwrap();
        }
    }
}
