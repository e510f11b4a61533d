//! The rebase property (#25): for a random file A, random compact edits
//! written against A, and random changes A → B made since, applying the
//! reply to B with `--base` gives exactly what `git merge-file` (the git
//! binary) gives for B, A and the edits applied to A: the merged file when
//! it merges cleanly, and a refusal that leaves B as it was when it does not.

use proptest::prelude::*;

use crate::rebase::run;
use crate::repo::TestRepo;

/// One edit against A: replace `removed` lines from 0-based `start` with
/// `added` new lines (an insertion when `removed` is 0).
#[derive(Debug, Clone)]
struct RangeEdit {
    start: usize,
    removed: usize,
    added: usize,
}

/// One change A → B: 0 inserts a line before `at`, 1 deletes line `at`, 2 rewrites it.
type UserChange = (usize, u8);

/// Edits in line order that neither overlap nor touch, each changing something.
fn edits(n: usize) -> impl Strategy<Value = Vec<RangeEdit>> {
    prop::collection::vec((0..=n, 0..3usize, 0..3usize), 1..4).prop_map(move |raw| {
        let mut raw: Vec<(usize, usize, usize)> = raw;
        raw.sort();
        let mut out: Vec<RangeEdit> = Vec::new();
        for (start, removed, added) in raw {
            let removed = removed.min(n - start.min(n));
            if removed == 0 && added == 0 {
                continue;
            }
            if out.last().is_some_and(|p| start <= p.start + p.removed) {
                continue;
            }
            out.push(RangeEdit { start, removed, added });
        }
        if out.is_empty() {
            out.push(RangeEdit { start: 0, removed: 0, added: 1 });
        }
        out
    })
}

fn lines_a(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("line {i}")).collect()
}

fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn new_lines(k: usize, e: &RangeEdit) -> Vec<String> {
    (0..e.added).map(|j| format!("new {k}.{j}")).collect()
}

/// A with the edits applied, bottom up.
fn edited(a: &[String], edits: &[RangeEdit]) -> Vec<String> {
    let mut out = a.to_vec();
    for (k, e) in edits.iter().enumerate().rev() {
        out.splice(e.start..e.start + e.removed, new_lines(k, e));
    }
    out
}

fn changed(a: &[String], changes: &[UserChange]) -> Vec<String> {
    let mut b = a.to_vec();
    for (k, &(at, op)) in changes.iter().enumerate() {
        let at = at % (b.len() + 1);
        match op {
            0 => b.insert(at, format!("user {k}")),
            1 if at < b.len() => drop(b.remove(at)),
            _ if at < b.len() => b[at] = format!("user {k}"),
            _ => {}
        }
    }
    b
}

/// The compact reply for `edits`, in A's numbering.
fn reply(edits: &[RangeEdit]) -> String {
    let mut out = String::new();
    for (k, e) in edits.iter().enumerate() {
        let (start, end) = (e.start + 1, e.start + e.removed);
        out += &format!("f.txt:{start}-{end}\n```\n{}```\n\n", text(&new_lines(k, e)));
    }
    out
}

/// `git merge-file -p B A E`: the merged text, or `None` on a conflict.
fn git_merge_file(a: &str, b: &str, e: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [("a", a), ("b", b), ("e", e)] {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let out = std::process::Command::new("git")
        .current_dir(dir.path())
        .args(["merge-file", "-p", "b", "a", "e"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir.path())
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code >= 0, "git merge-file failed: {}", String::from_utf8_lossy(&out.stderr));
    (code == 0).then(|| String::from_utf8(out.stdout).unwrap())
}

fn case() -> impl Strategy<Value = (usize, Vec<RangeEdit>, Vec<UserChange>)> {
    (3..16usize).prop_flat_map(|n| (Just(n), edits(n), prop::collection::vec((0..20usize, 0..3u8), 1..4)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn rebasing_is_applying_to_the_base_and_merging_with_git_merge_file((n, edits, changes) in case()) {
        let a = lines_a(n);
        let b = text(&changed(&a, &changes));
        let e = text(&edited(&a, &edits));
        let repo = TestRepo::with(&[("f.txt", &text(&a))]);
        repo.write("f.txt", &b);
        let (code, report) = run(&repo, &["--format", "compact", "--no-commit", "--base", "HEAD"], &reply(&edits));
        let now = String::from_utf8(repo.read("f.txt").unwrap()).unwrap();
        match git_merge_file(&text(&a), &b, &e) {
            Some(merged) => {
                prop_assert_eq!(code, 0, "{}", report);
                prop_assert_eq!(now, merged, "{}", report);
            }
            None => {
                prop_assert_eq!(code, 1, "{}", report);
                prop_assert_eq!(now, b);
                let kinds: Vec<&str> = report["edits"].as_array().unwrap().iter().filter_map(|e| e["kind"].as_str()).collect();
                prop_assert!(kinds.contains(&"stale"), "{}", report);
            }
        }
    }
}
