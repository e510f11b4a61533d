//! The conformance corpus of every built-in format through the real binary,
//! as a user runs it: each case's `input/` committed in a fresh repository,
//! `git agent-apply --format NAME --no-commit reply.*`, and the working tree
//! compared with `expected/` (listed files as given, every other file as it
//! was) or, for `expected-error`, left as it was. `corpus.rs` runs the same
//! cases through the components alone; this adds what the host does around
//! them (mixed-reply checks, path policy, suffix redirects, guards), so a
//! host rule that breaks a format's case is caught.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::bin_process;
use crate::corpus::{lines_of, read_tree, reply_file};

/// Cases whose `options` file sets format options, which the command line
/// has no flag for; `corpus.rs` runs them through the components.
fn needs_options(case: &Path) -> bool {
    case.join("options").exists()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn run_case(format: &str, case: &Path) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let input = read_tree(&case.join("input"));
    for (path, bytes) in &input {
        let file = repo.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "input"]);
    let reply = reply_file(case)?;
    let wanted_error = std::fs::read_to_string(case.join("expected-error")).ok();
    // `--format whole` is how a user says a file really shrinks to a
    // fragment (it lifts the fragment guard); a reply that just arrives is
    // read with `auto`.
    let fragment = wanted_error.as_deref().is_some_and(|w| w.contains("fragment"));
    let mut command = bin_process();
    command.current_dir(&repo).args(["--format", if fragment { "auto" } else { format }, "--no-commit"]).arg(&reply);
    let candidates = lines_of(&case.join("candidates"));
    if !candidates.is_empty() {
        command.arg("--files").args(&candidates);
    }
    let out = command.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut after = read_tree(&repo);
    after.retain(|path, _| !path.starts_with(".git/"));
    if let Some(wanted) = wanted_error {
        // Edits already in the files are done: exit 0, status `unchanged`.
        let done = wanted.contains("already") && out.status.success();
        if !out.status.success() || done {
            return if after == input { Ok(()) } else { Err(format!("refused but changed files:\n{said}")) };
        }
        return Err(format!("expected a refusal ({}), but it applied:\n{said}", wanted.trim()));
    }
    if !out.status.success() {
        return Err(format!("exit {:?}:\n{said}", out.status.code()));
    }
    let expected = read_tree(&case.join("expected"));
    for (path, bytes) in &after {
        let want = expected.get(path).or_else(|| input.get(path).filter(|_| !expected.contains_key(path)));
        if want != Some(bytes) {
            return Err(format!("{path} is not as expected:\n{}\n{said}", String::from_utf8_lossy(bytes)));
        }
    }
    match expected.keys().find(|path| !after.contains_key(*path)) {
        Some(path) => Err(format!("{path} is in expected/ but was not written:\n{said}")),
        None => Ok(()),
    }
}

#[test]
fn conformance_corpus_through_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let builtins: Vec<&str> = agent_apply::registry::BUILTIN_FORMATS.iter().map(|f| f.name).collect();
    let (mut failures, mut count, mut skipped) = (Vec::new(), 0, 0);
    for format in &builtins {
        let mut cases: Vec<PathBuf> = std::fs::read_dir(root.join(format))
            .unwrap_or_else(|e| panic!("tests/corpus/{format}: {e}"))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        cases.sort();
        for case in cases {
            if needs_options(&case) {
                skipped += 1;
                continue;
            }
            count += 1;
            if let Err(why) = run_case(format, &case) {
                failures.push(format!("{format}/{}: {why}", case.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(count > 200, "only {count} cases ran ({skipped} need options)");
    assert!(failures.is_empty(), "{} of {count} cases failed:\n{}", failures.len(), failures.join("\n\n"));
}
