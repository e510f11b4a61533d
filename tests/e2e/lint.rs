//! `git agent-apply lint [--staged] [--json] [PATH...]`: leftovers of each
//! format, and git merge-conflict markers, in the working tree or the index.

use serde_json::Value;

use crate::repo::TestRepo;

struct Lint {
    code: i32,
    stdout: String,
}

fn lint(repo: &TestRepo, args: &[&str]) -> Lint {
    let out = repo.apply().arg("lint").args(args).output().unwrap();
    Lint { code: out.status.code().unwrap(), stdout: String::from_utf8(out.stdout).unwrap() }
}

fn lint_json(repo: &TestRepo, args: &[&str]) -> Value {
    let out = repo.apply().args(["lint", "--json"]).args(args).output().unwrap();
    crate::common::report_json(&out.stdout)
}

#[test]
fn a_clean_repository_exits_0_with_no_output() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n"), ("README.md", "# Title\n=======\n\nText.\n")]);
    let out = lint(&repo, &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert_eq!(out.stdout, "");
    let value = lint_json(&repo, &[]);
    assert_eq!(value["status"], "clean");
    assert_eq!(value["files_checked"], 2);
}

#[test]
fn each_kind_of_leftover_is_reported_with_path_and_line() {
    let repo = TestRepo::with(&[
        ("editblock.py", "a = 1\n<<<<<<< SEARCH\nb = 1\n=======\nb = 2\n>>>>>>> REPLACE\n"),
        ("hashline.py", "def f():\n1:48|def greet():\n2:53|    print(\"Hello!\")\n"),
        ("compact.py", "x = 1\nsrc/compact.py:1-2\ny = 2\n"),
        ("udiff.py", "x = 1\n@@ -1,2 +1,2 @@\ny = 2\n"),
        ("whole.py", "def f():\n    # ... rest of code ...\n"),
        ("clean.py", "print('fine')\n"),
    ]);
    let out = lint(&repo, &[]);
    assert_eq!(out.code, 1);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let has = |prefix: &str, what: &str, tag: &str| {
        assert!(
            lines.iter().any(|l| l.starts_with(prefix) && l.contains(what) && l.ends_with(tag)),
            "no `{prefix} … {what} … {tag}` in:\n{}",
            out.stdout
        )
    };
    has("editblock.py:2: ", "SEARCH", "[editblock]");
    has("editblock.py:4: ", "divider", "[editblock]");
    has("editblock.py:6: ", "REPLACE", "[editblock]");
    has("hashline.py:2: ", "LINE:HASH", "[hashline]");
    has("compact.py:2: ", "compact edit header", "[compact]");
    has("udiff.py:2: ", "hunk header", "[udiff]");
    has("whole.py:2: ", "rest of code", "[whole]");
    assert!(!out.stdout.contains("clean.py"));
    // No merge-conflict finding for an edit block.
    assert!(!out.stdout.contains("merge conflict"), "{}", out.stdout);

    let value = lint_json(&repo, &[]);
    assert_eq!(value["status"], "findings");
    let findings = value["findings"].as_array().unwrap();
    let formats: std::collections::BTreeSet<&str> = findings.iter().filter_map(|f| f["format"].as_str()).collect();
    assert_eq!(formats.into_iter().collect::<Vec<_>>(), ["compact", "editblock", "hashline", "udiff", "whole"]);
    let hash = findings.iter().find(|f| f["path"] == "hashline.py").unwrap();
    assert_eq!((hash["line"].as_u64(), hash["end_line"].as_u64()), (Some(2), Some(3)));
    assert!(findings.iter().all(|f| f["kind"] == "leftover"));

    // PATH arguments restrict the check.
    let out = lint(&repo, &["clean.py", "whole.py"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.lines().all(|l| l.starts_with("whole.py:")), "{}", out.stdout);
    assert_eq!(lint(&repo, &["clean.py"]).code, 0);
}

#[test]
fn real_merge_conflict_markers_are_reported_apart_from_edit_blocks() {
    let repo = TestRepo::with(&[("a.txt", "one\ntwo\nthree\n")]);
    repo.git(&["checkout", "-qb", "feature"]);
    repo.write("a.txt", "one\nTWO (feature)\nthree\n");
    repo.git(&["commit", "-qam", "feature"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "one\nTWO (main)\nthree\n");
    repo.git(&["commit", "-qam", "main"]);
    let merge = std::process::Command::new("git")
        .current_dir(repo.path())
        .args(["-c", "user.name=T", "-c", "user.email=t@e", "merge", "-q", "feature"])
        .env("HOME", repo.path())
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge should conflict");
    let value = lint_json(&repo, &["a.txt"]);
    let findings = value["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3, "{value:#}");
    assert!(findings.iter().all(|f| f["kind"] == "merge-conflict" && f["format"].is_null()));
    assert_eq!(findings.iter().map(|f| f["line"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 4, 6]);
    assert!(findings[0]["message"].as_str().unwrap().contains("<<<<<<< HEAD"));
    assert!(findings[2]["message"].as_str().unwrap().contains(">>>>>>> feature"));
    let out = lint(&repo, &["a.txt"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.starts_with("a.txt:2: start of a git merge conflict"), "{}", out.stdout);
    assert!(out.stdout.lines().all(|l| l.ends_with("[git]")), "{}", out.stdout);
}

#[test]
fn staged_checks_the_index_blobs_not_the_working_tree() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n"), ("b.py", "y = 1\n")]);
    // Staged leftover, fixed in the working tree only.
    repo.write("a.py", "x = 1\n<<<<<<< SEARCH\n");
    repo.git(&["add", "a.py"]);
    repo.write("a.py", "x = 2\n");
    // Unstaged leftover in another file.
    repo.write("b.py", "y = 1\n# ... existing code ...\n");
    let staged = lint(&repo, &["--staged"]);
    assert_eq!(staged.code, 1);
    assert!(staged.stdout.starts_with("a.py:2: "), "{}", staged.stdout);
    assert!(!staged.stdout.contains("b.py"), "unstaged files are not checked: {}", staged.stdout);
    let tree = lint(&repo, &[]);
    assert_eq!(tree.code, 1);
    assert!(tree.stdout.starts_with("b.py:2: "), "{}", tree.stdout);
    assert!(!tree.stdout.contains("a.py"), "{}", tree.stdout);
    // Staging the fix makes the staged check clean; only staged paths count.
    repo.git(&["add", "a.py"]);
    let value = lint_json(&repo, &["--staged"]);
    assert_eq!(value["status"], "clean", "{value:#}");
    assert_eq!(value["files_checked"], 1);
    assert_eq!(value["staged"], true);
}

#[test]
fn binary_and_non_utf8_files_are_skipped() {
    let repo = TestRepo::with(&[("a.txt", "fine\n")]);
    std::fs::write(repo.path().join("bin.dat"), b"\0\x01<<<<<<< SEARCH\n").unwrap();
    std::fs::write(repo.path().join("latin1.txt"), b"caf\xe9\n<<<<<<< SEARCH\n").unwrap();
    repo.git(&["add", "bin.dat", "latin1.txt"]);
    let value = lint_json(&repo, &[]);
    assert_eq!(value["status"], "clean", "{value:#}");
    let skipped = value["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s["path"] == "bin.dat" && s["reason"] == "binary"));
    assert!(skipped.iter().any(|s| s["path"] == "latin1.txt" && s["reason"] == "not UTF-8"));
    assert_eq!(lint(&repo, &["--staged"]).code, 0);
}

#[test]
fn gitattributes_opt_files_out() {
    let repo = TestRepo::with(&[
        ("fixtures/reply.md", "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"),
        ("src/a.py", "# ... rest of code ...\n"),
        (".gitattributes", "fixtures/** -agent-apply-lint\n"),
    ]);
    let value = lint_json(&repo, &[]);
    let findings = value["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["path"] == "src/a.py"), "{value:#}");
    assert!(!findings.is_empty());
    assert!(
        value["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["path"] == "fixtures/reply.md" && s["reason"] == "gitattributes")
    );
}
