//! Stale edits, rebased (#25): the model read version A of a file, the file
//! became B, and the edits written against A land on B as a person would
//! write them there, or are refused as `stale` where B changed the lines
//! they edit. Real repositories, the real binary and the real components.

use serde_json::Value;

use crate::repo::TestRepo;

/// Twelve distinct lines: `line 1` … `line 12`.
pub fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// Run the binary with `args` and `reply` on stdin; exit code and report.
pub fn run(repo: &TestRepo, args: &[&str], reply: &str) -> (i32, Value) {
    let out = repo.apply().args(args).args(["--json", "-"]).write_stdin(reply.to_string()).output().unwrap();
    let report = crate::common::report_json(&out.stdout);
    (out.status.code().unwrap(), report)
}

/// `git agent-apply read` of `path` in `format`: the view the model read.
pub fn read_view(repo: &TestRepo, format: &str, path: &str) -> String {
    let out = repo.apply().args(["read", "--format", format, path]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The compact view's version tag (`f.txt @3fa9c1 (12 lines)`).
fn compact_tag(view: &str) -> String {
    view.lines().next().unwrap().split(' ').nth(1).unwrap().to_string()
}

/// The hashline anchor (`7:3f`) of the line reading `text` in a view.
fn anchor(view: &str, text: &str) -> String {
    let line = view.lines().find(|l| l.split_once('|').is_some_and(|(_, t)| t == text)).unwrap();
    line.split_once('|').unwrap().0.to_string()
}

fn file(repo: &TestRepo, path: &str) -> String {
    String::from_utf8(repo.read(path).unwrap()).unwrap()
}

/// B: two lines inserted at the top, line 6 removed (between the edits),
/// one line appended at the bottom.
fn moved_on(a: &str) -> String {
    let mut lines: Vec<&str> = a.lines().collect();
    lines.remove(5);
    let mut b = String::from("user top 1\nuser top 2\n");
    for line in lines {
        b += line;
        b.push('\n');
    }
    b + "user bottom\n"
}

/// What a person writes on B for edits that replace `line 3` and
/// `line 9-10` of A and insert before `line 12`. (An insertion after the
/// last line would meet the user's appended line: git calls that a
/// conflict, see the stale test.)
const EXPECTED: &str = "user top 1\nuser top 2\nline 1\nline 2\nTHREE\nline 4\nline 5\nline 7\nline 8\nNINE\nTEN\nline 11\nbefore twelve\nline 12\nuser bottom\n";

#[test]
fn tagged_compact_edits_written_against_a_read_are_rebased_onto_the_changed_file() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    let tag = compact_tag(&read_view(&repo, "compact", "f.txt"));
    repo.write("f.txt", &moved_on(&numbered(12)));
    let reply = format!(
        "f.txt:3-3 {tag}\n```\nTHREE\n```\n\nf.txt:9-10 {tag}\n```\nNINE\nTEN\n```\n\nf.txt:12-11 {tag}\n```\nbefore twelve\n```\n"
    );
    let (code, report) = run(&repo, &["--format", "compact", "--no-commit"], &reply);
    assert_eq!(code, 0, "{report}");
    assert_eq!(file(&repo, "f.txt"), EXPECTED);
    assert_eq!(report["status"], "applied");
    for edit in report["edits"].as_array().unwrap() {
        assert_eq!(edit["status"], "rebased", "{report}");
    }
    assert_eq!(report["files"][0]["base"]["source"], "read", "{report}");
    let blob = report["files"][0]["base"]["blob"].as_str().unwrap();
    assert_eq!(repo.git(&["cat-file", "-p", blob]), numbered(12), "the recorded blob is what read showed");
}

#[test]
fn a_tagged_compact_edit_of_lines_the_user_changed_is_stale_with_a_view_of_them() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    let tag = compact_tag(&read_view(&repo, "compact", "f.txt"));
    // The user rewrote line 10, inside the range the edit replaces.
    let b = moved_on(&numbered(12)).replace("line 10\n", "user ten\n");
    repo.write("f.txt", &b);
    let before = repo.state();
    let reply = format!("f.txt:3-3 {tag}\n```\nTHREE\n```\n\nf.txt:9-10 {tag}\n```\nNINE\nTEN\n```\n");
    let (code, report) = run(&repo, &["--format", "compact"], &reply);
    assert_eq!(code, 1, "{report}");
    assert_eq!(repo.state(), before, "a refusal leaves the repository as it was");
    let edit = &report["edits"][1];
    assert_eq!(edit["kind"], "stale", "{report}");
    let hint = edit["hint"].as_str().unwrap();
    // The conflicting region of B, in compact's own numbered view.
    assert!(hint.contains("11: user ten"), "{hint}");
    assert!(!hint.contains("3: line 3"), "only the conflicting region is shown: {hint}");
    assert!(report["reflection"].as_str().unwrap().contains("user ten"));
}

#[test]
fn an_untagged_compact_edit_after_a_line_inserted_at_the_top_does_not_replace_the_wrong_line() {
    // The issue's case: `f.txt:2-2` used to replace `alpha` instead of `beta`.
    let repo = TestRepo::with(&[("f.txt", "alpha\nbeta\ngamma\n")]);
    repo.write("f.txt", "inserted\nalpha\nbeta\ngamma\n");
    let before = repo.state();
    let (code, report) = run(&repo, &["--format", "compact"], "f.txt:2-2\n```\nBETA\n```\n");
    assert_eq!(code, 1, "{report}");
    assert_eq!(repo.state(), before);
    let edit = &report["edits"][0];
    assert_eq!(edit["kind"], "stale", "{report}");
    let message = edit["message"].as_str().unwrap();
    assert!(message.contains("HEAD") && message.contains("working tree"), "names both versions: {message}");
    assert!(edit["hint"].as_str().unwrap().contains("2: alpha"), "a fresh view: {report}");
}

#[test]
fn an_untagged_compact_edit_after_a_staged_insertion_is_stale_too() {
    // The user's insertion is staged, and the index's stat data proves the
    // file is the staged version, so the run takes its id from the index
    // rather than hashing the file: it is still not HEAD's.
    let repo = TestRepo::with(&[("f.txt", "alpha\nbeta\ngamma\n")]);
    repo.write("f.txt", "inserted\nalpha\nbeta\ngamma\n");
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(repo.path().join("f.txt")).unwrap().set_modified(an_hour_ago).unwrap();
    repo.git(&["add", "f.txt"]);
    let before = repo.state();
    let (code, report) = run(&repo, &["--format", "compact"], "f.txt:2-2\n```\nBETA\n```\n");
    assert_eq!((code, report["edits"][0]["kind"].as_str()), (1, Some("stale")), "{report}");
    assert_eq!(repo.state(), before);
}

#[test]
fn an_untagged_compact_edit_far_from_the_users_change_applies() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    // Both HEAD's and the working tree's numbering mean line 3 here.
    repo.write("f.txt", &numbered(12).replace("line 11\n", "user eleven\n"));
    let (code, report) = run(&repo, &["--format", "compact", "--no-commit"], "f.txt:3-3\n```\nTHREE\n```\n");
    assert_eq!(code, 0, "{report}");
    assert_eq!(file(&repo, "f.txt"), numbered(12).replace("line 11\n", "user eleven\n").replace("line 3\n", "THREE\n"));
    assert_eq!(report["edits"][0]["status"], "applied");
    assert_eq!(report["files"][0]["base"]["source"], "working-tree");
}

#[test]
fn base_names_the_version_an_untagged_reply_was_written_against() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12)), ("g.txt", &numbered(3))]);
    repo.write("f.txt", &moved_on(&numbered(12)));
    let reply =
        "f.txt:3-3\n```\nTHREE\n```\n\nf.txt:9-10\n```\nNINE\nTEN\n```\n\nf.txt:12-11\n```\nbefore twelve\n```\n";
    let (code, report) = run(&repo, &["--format", "compact", "--base", "HEAD"], reply);
    assert_eq!(code, 0, "{report}");
    assert_eq!(repo.committed("f.txt").unwrap(), EXPECTED, "{report}");
    assert_eq!(report["files"][0]["base"]["source"], "flag");
    assert_eq!(report["files"][0]["base"]["label"], "--base HEAD");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("rebased"), "{report}");

    // Per file, by blob id.
    let blob = repo.git(&["rev-parse", "HEAD:g.txt"]).trim().to_string();
    repo.write("g.txt", "top\nline 1\nline 2\nline 3\n");
    let (code, report) =
        run(&repo, &["--format", "compact", "--base", &format!("g.txt={blob}")], "g.txt:3-3\n```\nTHREE\n```\n");
    assert_eq!(code, 0, "{report}");
    assert_eq!(repo.committed("g.txt").unwrap(), "top\nline 1\nline 2\nTHREE\n");

    // The human report says so too.
    repo.write("g.txt", "top 2\ntop\nline 1\nline 2\nTHREE\n");
    let out = repo
        .apply()
        .args(["--format", "compact", "--no-commit", "--base", "g.txt=HEAD"])
        .write_stdin("g.txt:3-3\n```\nTWO\n```\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("edit 1 g.txt rebased: "));
    assert_eq!(file(&repo, "g.txt"), "top 2\ntop\nline 1\nTWO\nTHREE\n");
}

#[test]
fn an_unknown_base_is_a_usage_error_with_a_hint() {
    let repo = TestRepo::with(&[("f.txt", &numbered(3))]);
    let (code, report) = run(&repo, &["--format", "compact", "--base", "no-such-rev"], "f.txt:1-1\n```\nx\n```\n");
    assert_eq!(code, 2, "{report}");
    assert!(report["error"]["message"].as_str().unwrap().contains("no-such-rev"), "{report}");
    assert!(report["error"]["hints"][0].as_str().unwrap().contains("PATH=REV"));
}

#[test]
fn hashline_anchors_that_moved_beyond_the_window_are_rebased_from_the_read() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    let view = read_view(&repo, "hashline", "f.txt");
    // Twenty lines above: further than the anchors' window of 8, which was
    // a stale refusal before.
    let top: String = (1..=20).map(|i| format!("user {i}\n")).collect();
    repo.write("f.txt", &(top.clone() + &numbered(12)));
    let reply = format!(
        "```json\n{{\"path\": \"f.txt\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{}\", \"new_text\": \"THREE\"}}}}, \
         {{\"insert_after\": {{\"anchor\": \"{}\", \"text\": \"after twelve\"}}}}]}}\n```\n",
        anchor(&view, "line 3"),
        anchor(&view, "line 12")
    );
    let (code, report) = run(&repo, &["--format", "hashline", "--no-commit"], &reply);
    assert_eq!(code, 0, "{report}");
    assert_eq!(file(&repo, "f.txt"), top + &numbered(12).replace("line 3\n", "THREE\n") + "after twelve\n");
    assert_eq!(report["edits"][0]["status"], "rebased");
    assert_eq!(report["files"][0]["base"]["source"], "read");
}

#[test]
fn a_hashline_edit_of_a_line_the_user_changed_is_stale_in_the_hashline_view() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    let view = read_view(&repo, "hashline", "f.txt");
    let top: String = (1..=20).map(|i| format!("user {i}\n")).collect();
    repo.write("f.txt", &(top + &numbered(12).replace("line 4\n", "user four\n")));
    let before = repo.state();
    let reply = format!(
        "```json\n{{\"path\": \"f.txt\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{}\", \"new_text\": \"FOUR\"}}}}]}}\n```\n",
        anchor(&view, "line 4")
    );
    let (code, report) = run(&repo, &["--format", "hashline"], &reply);
    assert_eq!(code, 1, "{report}");
    assert_eq!(repo.state(), before);
    assert_eq!(report["edits"][0]["kind"], "stale");
    let hint = report["edits"][0]["hint"].as_str().unwrap();
    assert!(hint.contains(":") && hint.contains("|user four"), "the hashline view of the conflict: {hint}");
}

/// Text-addressed formats: the text the edit quotes was changed by the user
/// (a context line), so it is not in the current file, but it is, once, in
/// HEAD's version; the edit goes there and is merged.
#[test]
fn text_edits_whose_context_the_user_changed_are_rebased_from_head() {
    let udiff = "```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -2,4 +2,4 @@\n line 2\n line 3\n line 4\n-line 5\n+FIVE\n```\n";
    let patch =
        "*** Begin Patch\n*** Update File: f.txt\n@@\n line 2\n line 3\n line 4\n-line 5\n+FIVE\n*** End Patch\n";
    let block = "f.txt\n```\n<<<<<<< SEARCH\nline 2\nline 3\nline 4\nline 5\n=======\nline 2\nline 3\nline 4\nFIVE\n>>>>>>> REPLACE\n```\n";
    let call = serde_json::json!({"type": "tool_use", "id": "t1", "name": "Edit", "input": {
        "file_path": "f.txt", "old_string": "line 2\nline 3\nline 4\nline 5", "new_string": "line 2\nline 3\nline 4\nFIVE"}})
    .to_string();
    for (format, reply) in [("udiff", udiff), ("apply-patch", patch), ("editblock", block), ("tool-calls", &call)] {
        let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
        repo.write("f.txt", &format!("user top\n{}", numbered(12).replace("line 2\n", "user two\n")));
        let (code, report) = run(&repo, &["--format", format, "--no-commit"], reply);
        assert_eq!(code, 0, "{format}: {report}");
        let expected =
            format!("user top\n{}", numbered(12).replace("line 2\n", "user two\n").replace("line 5\n", "FIVE\n"));
        assert_eq!(file(&repo, "f.txt"), expected, "{format}");
        assert_eq!(report["edits"][0]["status"], "rebased", "{format}: {report}");
        assert_eq!(report["files"][0]["base"]["source"], "head", "{format}: {report}");
    }
}

/// The same edits, when the user changed the very line they replace: a
/// conflict, refused as stale, nothing written.
#[test]
fn text_edits_of_a_line_the_user_changed_are_stale() {
    let patch =
        "*** Begin Patch\n*** Update File: f.txt\n@@\n line 2\n line 3\n line 4\n-line 5\n+FIVE\n*** End Patch\n";
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    repo.write("f.txt", &numbered(12).replace("line 5\n", "user five\n"));
    let before = repo.state();
    let (code, report) = run(&repo, &["--format", "apply-patch"], patch);
    assert_eq!(code, 1, "{report}");
    assert_eq!(repo.state(), before);
    assert_eq!(report["edits"][0]["kind"], "stale", "{report}");
    assert!(report["edits"][0]["hint"].as_str().unwrap().contains("user five"), "{report}");
}

#[test]
fn a_hashline_object_with_the_views_file_tag_is_applied_to_that_version_and_merged() {
    let repo = TestRepo::with(&[("f.txt", &numbered(12))]);
    let view = read_view(&repo, "hashline", "f.txt");
    let tag = compact_tag(&view);
    // Two lines above: the anchors alone would follow their lines; the tag
    // says for sure which version they come from.
    repo.write("f.txt", &format!("user 1\nuser 2\n{}", numbered(12).replace("line 11\n", "user eleven\n")));
    let reply = format!(
        "```json\n{{\"path\": \"f.txt\", \"tag\": \"{tag}\", \"edits\": [{{\"replace_lines\": {{\"start_anchor\": \"{}\", \
         \"end_anchor\": \"{}\", \"new_text\": \"FOUR\\nFIVE\"}}}}]}}\n```\n",
        anchor(&view, "line 4"),
        anchor(&view, "line 5")
    );
    let (code, report) = run(&repo, &["--format", "hashline", "--no-commit"], &reply);
    assert_eq!(code, 0, "{report}");
    let expected = numbered(12).replace("line 11\n", "user eleven\n").replace("line 4\nline 5\n", "FOUR\nFIVE\n");
    assert_eq!(file(&repo, "f.txt"), format!("user 1\nuser 2\n{expected}"));
    assert_eq!(report["edits"][0]["status"], "rebased", "{report}");
    assert_eq!(report["files"][0]["base"]["source"], "read");
}

#[test]
fn heads_version_is_taken_as_checked_out_so_crlf_files_rebase() {
    // Stored with LF, checked out with CRLF: the base must be the CRLF form
    // the model saw, or every line would differ and conflict.
    let crlf = |text: &str| text.replace('\n', "\r\n");
    let repo = TestRepo::with(&[(".gitattributes", "f.txt text eol=crlf\n"), ("f.txt", &crlf(&numbered(12)))]);
    repo.write("f.txt", &crlf(&format!("user top\n{}", numbered(12).replace("line 2\n", "user two\n"))));
    let patch =
        "*** Begin Patch\n*** Update File: f.txt\n@@\n line 2\n line 3\n line 4\n-line 5\n+FIVE\n*** End Patch\n";
    let (code, report) = run(&repo, &["--format", "apply-patch", "--no-commit"], patch);
    assert_eq!(code, 0, "{report}");
    let expected =
        format!("user top\n{}", numbered(12).replace("line 2\n", "user two\n").replace("line 5\n", "FIVE\n"));
    assert_eq!(file(&repo, "f.txt"), crlf(&expected));
    assert_eq!(report["edits"][0]["status"], "rebased", "{report}");
}
