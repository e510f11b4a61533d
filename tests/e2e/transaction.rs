//! The transaction through the real binary: all or nothing, dirty files,
//! path policy, checks and hooks, undo, and the JSON report.

use predicates::prelude::*;

use crate::common::report_json as json;
use crate::repo::{TestRepo, whole_reply};

const ELIDED: &str = "x = 1\n# ... rest of the file unchanged ...\n";

#[test]
fn success_commits_exactly_the_new_tree_and_leaves_status_clean() {
    let repo = TestRepo::with(&[("src/app.py", "old\n"), ("other.txt", "untouched\n")]);
    let before = repo.head();
    let out = repo
        .apply()
        .args(["--format", "whole", "--json", "-"])
        .write_stdin(whole_reply(&[("src/app.py", "new\n"), ("src/new/mod.py", "created\n")]))
        .assert()
        .success();
    let report = json(&out.get_output().stdout);
    assert_eq!(report["status"], "applied");
    assert_eq!(report["commit"].as_str().unwrap(), repo.head());
    let change = &report["files"][0]["changes"][0];
    assert_eq!(
        (change["old_start"].as_u64(), change["removed"].as_u64(), change["added"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"]).trim(), before);
    assert_eq!(repo.committed("src/app.py").as_deref(), Some("new\n"));
    assert_eq!(repo.committed("src/new/mod.py").as_deref(), Some("created\n"));
    assert_eq!(repo.git(&["diff", "--name-only", "HEAD~1", "HEAD"]), "src/app.py\nsrc/new/mod.py\n");
    assert_eq!(repo.status(), "", "working tree and index follow the commit");
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(message.starts_with("Edit src/app.py, src/new/mod.py (whole)"), "{message}");
    assert!(message.contains("Agent-Apply: whole"), "{message}");
    repo.fsck();
}

#[test]
fn one_failing_edit_changes_nothing_at_all() {
    let repo = TestRepo::with(&[("a.py", "a\n"), ("b.py", "b\n")]);
    let before = repo.state();
    let out = repo
        .apply()
        .args(["--format", "whole", "--json"])
        .write_stdin(whole_reply(&[("a.py", "a2\n"), ("b.py", ELIDED)]))
        .assert()
        .code(1);
    let report = json(&out.get_output().stdout);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["edits"][0]["status"], "applied");
    assert_eq!(report["edits"][1]["status"], "failed");
    assert_eq!(report["edits"][1]["kind"], "forbidden");
    assert!(report["reflection"].as_str().unwrap().contains("Edit 2 to b.py failed"));
    assert_eq!(repo.state(), before, "HEAD, index, files and objects are as before");
}

#[test]
fn dry_run_writes_nothing_not_even_objects() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let before = repo.state();
    repo.apply()
        .args(["--dry-run", "--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "b\n"), ("new.txt", "n\n")]))
        .assert()
        .success()
        .stdout(predicate::str::contains("+b"));
    assert_eq!(repo.state(), before);
}

#[test]
fn no_commit_writes_the_working_tree_only() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let head = repo.head();
    repo.apply()
        .args(["--no-commit", "--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "b\n")]))
        .assert()
        .success();
    assert_eq!(repo.head(), head);
    assert_eq!(repo.read("a.txt").unwrap(), b"b\n");
    assert_eq!(repo.status(), " M a.txt\n");
}

#[test]
fn no_commit_writes_no_objects_and_leaves_no_state_behind() {
    // Nothing is committed, so nothing goes into the object database; the
    // journal's kept contents are gone once the files are in place (the
    // finished journal is set aside, read by nothing, until the next run's).
    for files in [&[("a.txt", "b\n")][..], &[("a.txt", "b\n"), ("new/c.txt", "c\n")][..]] {
        let repo = TestRepo::with(&[("a.txt", "a\n")]);
        let objects = || repo.git(&["count-objects", "-v"]);
        let before = objects();
        repo.apply().args(["--no-commit", "--format", "whole"]).write_stdin(whole_reply(files)).assert().success();
        for (path, content) in files {
            assert_eq!(repo.read(path).unwrap(), content.as_bytes());
        }
        assert_eq!(objects(), before, "{} file(s)", files.len());
        let state = repo.path().join(".git/agent-apply");
        let kept = std::fs::read_dir(state.join("pending")).map_or(0, |dir| dir.count());
        assert!(!state.join("journal.json").exists() && kept == 0, "{} file(s): state left", files.len());
    }
}

#[test]
fn partial_applies_what_it_can_and_says_so() {
    let repo = TestRepo::with(&[("a.py", "a\n"), ("b.py", "b\n")]);
    let out = repo
        .apply()
        .args(["--partial", "--format", "whole", "--json"])
        .write_stdin(whole_reply(&[("a.py", "a2\n"), ("b.py", ELIDED)]))
        .assert()
        .code(0);
    let report = json(&out.get_output().stdout);
    assert_eq!(report["status"], "partial", "exit 0: something changed; the status says not everything did");
    assert_eq!(repo.committed("a.py").as_deref(), Some("a2\n"));
    assert_eq!(repo.committed("b.py").as_deref(), Some("b\n"));
    let reflection = report["reflection"].as_str().unwrap();
    assert!(reflection.contains("Edits 1 were applied; do not send them again"), "{reflection}");
}

#[test]
fn dirty_commit_first_saves_the_users_changes_in_their_own_commit() {
    let repo = TestRepo::with(&[("a.txt", "one\n"), ("other.txt", "o\n"), ("staged.txt", "s\n")]);
    let base = repo.head();
    repo.write("a.txt", "one\nmine\n");
    repo.write("other.txt", "o\nunstaged\n");
    repo.write("staged.txt", "s\nstaged\n");
    repo.git(&["add", "staged.txt"]);
    let other_before = repo.read("other.txt");
    let staged_index = repo.git(&["ls-files", "-s", "staged.txt"]);
    repo.apply()
        .args(["--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "one\nmine\nagent\n")]))
        .assert()
        .success();
    assert_eq!(repo.git(&["rev-parse", "HEAD~2"]).trim(), base);
    let user = repo.git(&["show", "HEAD~1:a.txt"]);
    assert_eq!(user, "one\nmine\n", "the user's own change is committed first");
    assert!(repo.git(&["log", "-1", "--format=%B", "HEAD~1"]).contains("Agent-Apply-User-Changes: yes"));
    assert_eq!(repo.committed("a.txt").as_deref(), Some("one\nmine\nagent\n"));
    assert_eq!(repo.read("other.txt"), other_before, "untouched dirty files are byte-identical");
    assert_eq!(repo.git(&["ls-files", "-s", "staged.txt"]), staged_index, "untouched staged files stay staged");
    assert_eq!(repo.committed("staged.txt").as_deref(), Some("s\n"), "staged changes are not swept into agent commits");
    assert_eq!(repo.status(), " M other.txt\nM  staged.txt\n");
}

#[test]
fn dirty_include_commits_both_together() {
    let repo = TestRepo::with(&[("a.txt", "one\n")]);
    let base = repo.head();
    repo.write("a.txt", "one\nmine\n");
    repo.apply()
        .args(["--format", "whole", "--dirty", "include"])
        .write_stdin(whole_reply(&[("a.txt", "one\nmine\nagent\n")]))
        .assert()
        .success();
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"]).trim(), base);
    assert_eq!(repo.committed("a.txt").as_deref(), Some("one\nmine\nagent\n"));
    assert_eq!(repo.status(), "");
}

#[test]
fn dirty_refuse_exits_4_and_changes_nothing() {
    let repo = TestRepo::with(&[("a.txt", "one\n")]);
    repo.write("a.txt", "one\nmine\n");
    let before = repo.state();
    repo.apply()
        .args(["--format", "whole", "--dirty", "refuse"])
        .write_stdin(whole_reply(&[("a.txt", "agent\n")]))
        .assert()
        .code(4)
        .stderr(predicate::str::contains("a.txt has uncommitted changes"));
    assert_eq!(repo.state(), before);
}

fn refused(repo: &TestRepo, reply: &str, reason: &str) {
    let before = repo.state();
    let out = repo.apply().args(["--format", "whole", "--json"]).write_stdin(reply.to_string()).assert().code(1);
    let report = json(&out.get_output().stdout);
    let message = report["edits"][0]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains(reason), "expected {reason:?} in {report:#}");
    assert_eq!(report["edits"][0]["kind"], "forbidden");
    assert_eq!(repo.state(), before);
}

#[test]
fn refuses_absolute_paths() {
    refused(&TestRepo::with(&[("a", "a\n")]), "/tmp/x.txt\n```\nx\n```\n", "is an absolute path");
}

#[test]
fn refuses_parent_escapes() {
    refused(&TestRepo::with(&[("a", "a\n")]), "src/../../x.txt\n```\nx\n```\n", "leaves the repository");
}

#[test]
fn refuses_the_git_directory() {
    refused(&TestRepo::with(&[("a", "a\n")]), ".git/hooks/pre-commit\n```\nx\n```\n", "inside a .git directory");
}

#[cfg(unix)]
#[test]
fn refuses_symlinks_out_of_the_repo() {
    let repo = TestRepo::with(&[("a", "a\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("link")).unwrap();
    refused(&repo, "link/x.txt\n```\nx\n```\n", "symlink");
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
}

#[test]
fn refuses_ignored_files_unless_allowed() {
    let repo = TestRepo::with(&[(".gitignore", "*.log\n")]);
    refused(&repo, "debug.log\n```\nx\n```\n", "ignored by git");
    repo.apply()
        .args(["--format", "whole", "--allow-ignored", "--no-commit"])
        .write_stdin("debug.log\n```\nx\n```\n")
        .assert()
        .success();
}

#[test]
fn refuses_binary_files() {
    let repo = TestRepo::with(&[("a", "a\n")]);
    std::fs::write(repo.path().join("img.txt"), b"GIF\0\x01").unwrap();
    repo.git(&["add", "img.txt"]);
    repo.git(&["commit", "-qm", "binary"]);
    refused(&repo, "img.txt\n```\ntext\n```\n", "looks binary");
}

#[test]
fn refuses_files_over_the_size_limit() {
    let repo = TestRepo::with(&[("a", "a\n")]);
    std::fs::write(repo.path().join("big.txt"), "x\n".repeat(5 << 20)).unwrap();
    refused(&repo, "big.txt\n```\nsmall\n```\n", "over the");
}

#[test]
fn a_failing_check_rolls_back_and_exits_3() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let before = repo.state();
    let out = repo
        .apply()
        .args([
            "--format",
            "whole",
            "--json",
            "--check",
            "grep -q good a.txt || { echo 'a.txt is not good' >&2; exit 7; }",
        ])
        .write_stdin(whole_reply(&[("a.txt", "bad\n")]))
        .assert()
        .code(3);
    let report = json(&out.get_output().stdout);
    assert_eq!(report["status"], "checks-failed");
    assert_eq!(report["checks"][0]["exit_code"], 7);
    assert!(report["checks"][0]["output"].as_str().unwrap().contains("a.txt is not good"));
    assert!(report["reflection"].as_str().unwrap().contains("a.txt is not good"));
    let after = repo.state();
    assert_eq!(
        (after.head, after.index, after.status, after.files),
        (before.head, before.index, before.status, before.files)
    );
    // A passing check commits, and the sandbox is reused incrementally.
    repo.apply()
        .args(["--format", "whole", "--check", "grep -q good a.txt"])
        .write_stdin(whole_reply(&[("a.txt", "good\n")]))
        .assert()
        .success();
    assert_eq!(repo.committed("a.txt").as_deref(), Some("good\n"));
    assert_eq!(repo.status(), "", "the user's tree never saw the check run");
}

#[cfg(unix)]
#[test]
fn the_pre_commit_hook_runs_in_the_sandbox_and_no_verify_skips_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let hooks = repo.path().join("githooks");
    std::fs::create_dir(&hooks).unwrap();
    let hook = hooks.join("pre-commit");
    // The hook sees the staged change, as under `git commit`.
    std::fs::write(
        &hook,
        "#!/bin/sh\nif git diff --cached | grep -q forbidden; then echo 'hook: forbidden word' >&2; exit 1; fi\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.git(&["config", "core.hooksPath", "githooks"]);
    repo.apply()
        .args(["--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "forbidden\n")]))
        .assert()
        .code(3)
        .stdout(predicate::str::contains("hook: forbidden word"));
    assert_eq!(repo.committed("a.txt").as_deref(), Some("a\n"));
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "fine\n")])).assert().success();
    repo.apply()
        .args(["--format", "whole", "--no-verify"])
        .write_stdin(whole_reply(&[("a.txt", "forbidden\n")]))
        .assert()
        .success();
    assert_eq!(repo.committed("a.txt").as_deref(), Some("forbidden\n"));
}

#[test]
fn undo_round_trip() {
    let repo = TestRepo::with(&[("a.txt", "a\n"), ("gone.txt", "g\n")]);
    let before = repo.head();
    repo.apply()
        .args(["--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "b\n"), ("new.txt", "n\n")]))
        .assert()
        .success();
    repo.write("unrelated.txt", "mine\n");
    repo.apply().arg("undo").assert().success().stdout(predicate::str::contains("Undid agent commit"));
    assert_eq!(repo.head(), before);
    assert_eq!(repo.read("a.txt").unwrap(), b"a\n");
    assert_eq!(repo.read("new.txt"), None);
    assert_eq!(repo.read("unrelated.txt").unwrap(), b"mine\n", "nothing else is touched");
    assert_eq!(repo.status(), "?? unrelated.txt\n");
}

#[test]
fn undo_refuses_when_files_changed_since_or_head_is_not_an_agent_commit() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply().arg("undo").assert().code(1).stderr(predicate::str::contains("is not an agent commit"));
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "b\n")])).assert().success();
    repo.write("a.txt", "b\nedited later\n");
    let head = repo.head();
    repo.apply().arg("undo").assert().code(1).stderr(predicate::str::contains("a.txt changed since the agent commit"));
    assert_eq!(repo.head(), head);
    assert_eq!(repo.read("a.txt").unwrap(), b"b\nedited later\n");
}

#[test]
fn crlf_bom_and_missing_newline_survive_a_commit() {
    let repo = TestRepo::with(&[]);
    std::fs::write(repo.path().join("w.txt"), "\u{feff}a\r\nb").unwrap();
    repo.git(&["add", "w.txt"]);
    repo.git(&["commit", "-qm", "crlf"]);
    repo.apply().args(["--format", "whole"]).write_stdin("w.txt\n```\na\nc\n```\n").assert().success();
    assert_eq!(repo.read("w.txt").unwrap(), "\u{feff}a\r\nc".as_bytes());
    assert_eq!(repo.status(), "");
}

#[test]
fn commit_message_from_flag_or_config_template() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .args(["--format", "whole", "-m", "my message"])
        .write_stdin(whole_reply(&[("a.txt", "b\n")]))
        .assert()
        .success();
    assert_eq!(repo.git(&["log", "-1", "--format=%B"]), "my message\n\nAgent-Apply: whole\n\n");
    repo.write(".agent-apply.toml", "commit-message = \"agent({format}): {files}\"\n");
    repo.git(&["add", ".agent-apply.toml"]);
    repo.git(&["commit", "-qm", "config"]);
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "c\n")])).assert().success();
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]), "agent(whole): a.txt\n");
}

#[test]
fn json_stats_give_bytes_always_and_tokens_only_when_asked() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let reply = whole_reply(&[("a.txt", "Hello, world!\n")]);
    let out =
        repo.apply().args(["--format", "whole", "--json", "--dry-run"]).write_stdin(reply.clone()).output().unwrap();
    let report = json(&out.stdout);
    assert_eq!(report["stats"]["reply_bytes"], reply.len());
    assert!(report["stats"].get("reply_tokens").is_none(), "not counted unless asked");
}

/// Run by .ci/run's release step, which builds with the `tokens` feature.
#[cfg(feature = "tokens")]
#[test]
fn json_stats_count_tokens_with_the_real_vocabulary() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let reply = whole_reply(&[("a.txt", "Hello, world!\n")]);
    // `Hello, world!` is 4 tokens in o200k_base; the reply's fence and path add the rest.
    let counted = repo
        .apply()
        .args(["--format", "whole", "--json", "--dry-run", "--tokens"])
        .write_stdin(reply.clone())
        .output()
        .unwrap();
    let report = json(&counted.stdout);
    let tokens = report["stats"]["reply_tokens"].as_u64().unwrap() as usize;
    let bpe = bpe_openai::o200k_base();
    assert_eq!(bpe.count("Hello, world!"), 4, "the real o200k_base vocabulary");
    assert_eq!(tokens, bpe.count(&reply));
    assert!((5..20).contains(&tokens), "{tokens}");
}

#[cfg(not(feature = "tokens"))]
#[test]
fn json_stats_tokens_without_the_vocabulary_say_how_to_get_it() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .args(["--format", "whole", "--json", "--dry-run", "--tokens"])
        .write_stdin(whole_reply(&[("a.txt", "b\n")]))
        .assert()
        .code(2)
        .stdout(predicates::str::contains("--features tokens"));
}

#[test]
fn json_timings_separate_checks_from_git() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let out = repo
        .apply()
        .args(["--format", "whole", "--json", "--check", "sleep 0.2"])
        .write_stdin(whole_reply(&[("a.txt", "b\n")]))
        .output()
        .unwrap();
    let timings = &json(&out.stdout)["timings"];
    assert!(timings["checks_ms"].as_f64().unwrap() >= 200.0, "{timings}");
    assert!(timings["git_ms"].as_f64().unwrap() < timings["total_ms"].as_f64().unwrap() - 200.0, "{timings}");
}
