//! Replies whose files are megabytes (over 4 MiB in all): their edits are
//! first applied one file at a time, to keep the component's memory to one
//! file, and all at once when that might not give what one call gives. The
//! outcome is always one call's: the same files, the same reports. Their
//! files are compared, kept and written on several threads, and end as one
//! thread would leave them, killed in between or not. And a reply of
//! megabytes, whose format is detected with its hints searched in pieces
//! side by side.

use serde_json::Value;

use crate::rebase::run;
use crate::repo::TestRepo;

/// About 1.6 MB of distinct lines, each naming `tag`.
fn big(tag: &str) -> String {
    (0..120_000).map(|i| format!("{tag} line {i}\n")).collect()
}

fn block(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n\n")
}

/// Three files, 4.9 MB in all.
fn repo() -> (TestRepo, [String; 3]) {
    let files = [big("a"), big("b"), big("c")];
    let repo = TestRepo::with(&[("a.txt", &files[0]), ("b.txt", &files[1]), ("c.txt", &files[2])]);
    (repo, files)
}

fn file(repo: &TestRepo, path: &str) -> String {
    String::from_utf8(repo.read(path).unwrap()).unwrap()
}

fn edits(report: &Value) -> &Vec<Value> {
    report["edits"].as_array().unwrap()
}

#[test]
fn edits_of_large_files_apply_as_one_call_would() {
    let (repo, before) = repo();
    let reply = [
        block("a.txt", "a line 10\n", "a line ten\n"),
        block("b.txt", "b line 20\nb line 21\n", "b line twenty\n"),
        block("a.txt", "a line 119999\n", "a line last\nand one more\n"),
        block("c.txt", "c line 0\n", ""),
    ]
    .concat();
    let (code, report) = run(&repo, &["--format", "editblock", "--no-commit"], &reply);
    assert_eq!(code, 0, "{report}");
    let applied: Vec<&str> = edits(&report).iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(applied, ["applied"; 4]);
    // Line numbers as each block saw its file, in reply order.
    assert!(edits(&report)[2]["message"].as_str().unwrap().contains("lines 120000-120000 of a.txt"), "{report}");
    let want_a =
        before[0].replace("a line 10\n", "a line ten\n").replace("a line 119999\n", "a line last\nand one more\n");
    assert_eq!(file(&repo, "a.txt"), want_a);
    assert_eq!(file(&repo, "b.txt"), before[1].replace("b line 20\nb line 21\n", "b line twenty\n"));
    assert_eq!(file(&repo, "c.txt"), before[2].replacen("c line 0\n", "", 1));
}

#[test]
fn a_block_found_only_in_another_file_of_a_large_reply_is_applied_there() {
    // Alone with a.txt the block fails; with every file, as one call has
    // them, the format places it in b.txt, where it matches once.
    let (repo, before) = repo();
    let reply = [
        block("a.txt", "b line 7\n", "b line seven\n"),
        block("b.txt", "b line 100\n", "b line hundred\n"),
        block("c.txt", "c line 1\n", "c line one\n"),
    ]
    .concat();
    let (code, report) = run(&repo, &["--format", "editblock", "--no-commit"], &reply);
    assert_eq!(code, 0, "{report}");
    assert_eq!(edits(&report)[0]["applied_path"], "b.txt", "{report}");
    assert_eq!(file(&repo, "a.txt"), before[0]);
    let want_b = before[1].replace("b line 7\n", "b line seven\n").replace("b line 100\n", "b line hundred\n");
    assert_eq!(file(&repo, "b.txt"), want_b);
    assert_eq!(file(&repo, "c.txt"), before[2].replace("c line 1\n", "c line one\n"));
}

#[test]
fn a_failing_edit_of_a_large_reply_changes_nothing_and_is_named() {
    let (repo, before) = repo();
    let reply = [block("a.txt", "a line 3\n", "a line three\n"), block("b.txt", "no such line\n", "x\n")].concat();
    let (code, report) = run(&repo, &["--format", "editblock"], &reply);
    assert_ne!(code, 0, "{report}");
    assert_eq!(edits(&report)[1]["status"], "failed", "{report}");
    assert!(edits(&report)[1]["message"].as_str().unwrap().contains("b.txt"), "{report}");
    for (path, content) in ["a.txt", "b.txt", "c.txt"].iter().zip(&before) {
        assert_eq!(&file(&repo, path), content, "{path}");
    }
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
}

/// About 1.5 MB of prose that holds no format's detect hint (no fence,
/// colon, marker, diff word or tool key).
fn prose() -> String {
    (0..40_000).map(|i| format!("Paragraph {i} says nothing much here\n")).collect()
}

#[test]
fn a_reply_of_megabytes_is_detected_by_a_block_at_either_end() {
    // Over a MiB, the hints are searched in pieces side by side: the block
    // is in the first piece, then in the last.
    let (repo, before) = repo();
    let replies = [
        format!("{}\n{}", block("a.txt", "a line 5\n", "a line five\n"), prose()),
        format!("{}\n{}", prose(), block("a.txt", "a line 6\n", "a line six\n")),
    ];
    for reply in &replies {
        let (code, report) = run(&repo, &["--no-commit"], reply);
        assert_eq!(code, 0, "{report}");
        assert_eq!(report["format"]["name"], "editblock", "{report}");
        assert_eq!(report["format"]["by"], "auto", "{report}");
    }
    let want = before[0].replace("a line 5\n", "a line five\n").replace("a line 6\n", "a line six\n");
    assert_eq!(file(&repo, "a.txt"), want);
}

/// A udiff reply that changes a.txt and b.txt, deletes c.txt and makes
/// new/n.txt: megabytes of files, so compared, kept and written side by side.
fn spread_reply(before: &[String; 3]) -> String {
    let deleted: String = before[2].lines().map(|l| format!("-{l}\n")).collect();
    let lines = before[2].lines().count();
    format!(
        "```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -11,1 +11,1 @@\n-a line 10\n+a line ten\n\
         --- a/b.txt\n+++ b/b.txt\n@@ -120000,1 +120000,2 @@\n-b line 119999\n+b line last\n+b and one more\n\
         --- a/c.txt\n+++ /dev/null\n@@ -1,{lines} +0,0 @@\n{deleted}\
         --- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1,1 @@\n+new\n```\n"
    )
}

fn spread_after(before: &[String; 3]) -> [(&'static str, String); 3] {
    [
        ("a.txt", before[0].replace("a line 10\n", "a line ten\n")),
        ("b.txt", before[1].replace("b line 119999\n", "b line last\nb and one more\n")),
        ("new/n.txt", "new\n".to_string()),
    ]
}

#[test]
fn files_of_megabytes_written_side_by_side_end_as_one_by_one_would() {
    for args in [&["--no-commit"][..], &[]] {
        let (repo, before) = repo();
        let (code, report) = run(&repo, &[&["--format", "udiff"], args].concat(), &spread_reply(&before));
        assert_eq!(code, 0, "{args:?}: {report}");
        for (path, content) in spread_after(&before) {
            assert_eq!(file(&repo, path), content, "{args:?}: {path}");
            if args.is_empty() {
                assert_eq!(repo.committed(path).as_deref(), Some(content.as_str()), "{path} in HEAD");
            }
        }
        assert_eq!(repo.read("c.txt"), None, "{args:?}");
        let status = repo.status();
        if args.is_empty() {
            assert_eq!(status, "", "index and working tree match the new HEAD");
        } else {
            let mut lines: Vec<&str> = status.lines().collect();
            lines.sort();
            assert_eq!(lines, [" D c.txt", " M a.txt", " M b.txt", "?? new/n.txt"], "{status}");
        }
        assert!(!repo.path().join(".git/agent-apply/journal.json").exists(), "{args:?}: journal cleared");
    }
}

#[test]
fn files_of_megabytes_killed_between_two_writes_are_finished_by_recover() {
    for args in [&["--no-commit"][..], &[]] {
        let (repo, before) = repo();
        let mut cmd = repo.apply();
        cmd.args(["--format", "udiff", "-"]).args(args).env("AGENT_APPLY_FAULT", "mid-worktree");
        let out = cmd.write_stdin(spread_reply(&before)).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stderr).contains("injected fault"), "{args:?}");
        repo.apply().arg("recover").assert().success();
        for (path, content) in spread_after(&before) {
            assert_eq!(file(&repo, path), content, "{args:?}: {path}");
        }
        assert_eq!(repo.read("c.txt"), None, "{args:?}");
        if args.is_empty() {
            assert_eq!(repo.status(), "", "index and working tree match the new HEAD");
        }
    }
}
