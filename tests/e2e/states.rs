//! The repository states people have: operations in progress, linked
//! worktrees, staging while checks run, partially staged files, modes,
//! sparse checkouts, git's content conversions, unborn and bare
//! repositories, locks and races. In each, the tool either does exactly what
//! `git` would have done had the user made the same edit by hand and run
//! `git commit` (compared with the real `git` binary), or refuses and
//! changes nothing.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::repo::{TestRepo, wait_for, whole_reply};

const POLICIES: [&str; 3] = ["commit-first", "include", "refuse"];

/// `git` output that says what the user sees: the committed tree with modes,
/// the status, the staged and the unstaged diff.
fn git_view(repo: &TestRepo) -> [String; 4] {
    [
        repo.git(&["ls-tree", "-r", "HEAD"]),
        repo.git(&["status", "--porcelain=v1", "--untracked-files=all"]),
        repo.git(&["diff", "--cached"]),
        repo.git(&["diff"]),
    ]
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Each operation left in progress: the reply is refused with exit 4,
/// naming the operation and how to settle it, in both modes, and nothing
/// changes.
#[test]
fn operations_in_progress_are_refused_and_change_nothing() {
    let conflicting = |repo: &TestRepo| {
        repo.git(&["checkout", "-qb", "side"]);
        repo.write("a.txt", "side\n");
        repo.git(&["commit", "-qam", "side"]);
        repo.git(&["checkout", "-q", "main"]);
        repo.write("a.txt", "main\n");
        repo.git(&["commit", "-qam", "main"]);
    };
    type Setup = fn(&TestRepo);
    let states: [(&str, &str, Setup); 5] = [
        ("a merge", "git merge --abort", |r| {
            let _ = r.git_status(&["merge", "-q", "side"]);
        }),
        ("a rebase", "git rebase --abort", |r| {
            r.git(&["checkout", "-q", "side"]);
            let _ = r.git_status(&["rebase", "-q", "main"]);
        }),
        ("a cherry-pick", "git cherry-pick --abort", |r| {
            let _ = r.git_status(&["cherry-pick", "side"]);
        }),
        ("a revert", "git revert --abort", |r| {
            r.write("a.txt", "third\n");
            r.git(&["commit", "-qam", "third"]);
            let _ = r.git_status(&["revert", "--no-edit", "HEAD~1"]);
        }),
        ("a bisect", "git bisect reset", |r| {
            r.git(&["bisect", "start"]);
        }),
    ];
    for (name, settle, setup) in states {
        for mode in [&[][..], &["--no-commit"][..]] {
            let repo = TestRepo::with(&[("a.txt", "base\n"), ("b.txt", "b\n")]);
            conflicting(&repo);
            setup(&repo);
            let before = repo.state();
            let out = repo
                .apply()
                .args(["--format", "whole"])
                .args(mode)
                .write_stdin(whole_reply(&[("b.txt", "edited\n")]))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(4), "{name} {mode:?}: {stderr}");
            assert!(stderr.contains(&format!("{name} is in progress")), "{stderr}");
            assert!(stderr.contains(settle), "{stderr}");
            assert_eq!(repo.state(), before, "{name} {mode:?} changed something");
        }
    }
}

/// A run interrupted in a linked worktree is that worktree's to finish:
/// `recover` in the main worktree leaves it (and main's files) alone.
#[test]
fn a_linked_worktree_keeps_its_own_run_state() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let linked = tempfile::tempdir().unwrap();
    let linked_path = linked.path().join("wt");
    repo.git(&["worktree", "add", "-q", "-b", "other", linked_path.to_str().unwrap()]);
    let in_linked = |args: &[&str]| {
        let mut cmd = repo.apply_process();
        cmd.current_dir(&linked_path).args(args);
        assert_cmd::Command::from_std(cmd)
    };
    let out = in_linked(&["--format", "whole"])
        .env("AGENT_APPLY_FAULT", "after-ref")
        .write_stdin(whole_reply(&[("a.txt", "linked edit\n")]))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let main_before = repo.state();
    let out = repo.apply().args(["recover"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Nothing to recover.\n");
    assert_eq!(repo.state(), main_before, "recover in main touched main");
    assert_eq!(repo.read("a.txt").unwrap(), b"a\n");
    in_linked(&["recover"]).assert().success();
    assert_eq!(std::fs::read(linked_path.join("a.txt")).unwrap(), b"linked edit\n");
    let status = std::process::Command::new("git").current_dir(&linked_path).args(["status", "--porcelain"]).output();
    assert_eq!(String::from_utf8_lossy(&status.unwrap().stdout), "");
}

/// `git add` made while the run's checks run is kept: the index is updated
/// as a read-modify-write of the edited paths only.
#[test]
fn staging_done_while_checks_run_is_kept() {
    let repo = TestRepo::with(&[("a.txt", "a\n"), ("notes.txt", "n\n")]);
    let started = repo.path().join(".git/check-started");
    let check = format!("touch {}; sleep 2", started.display());
    let child = repo.spawn_apply(&["--format", "whole", "--check", &check, "-"], &whole_reply(&[("a.txt", "A\n")]));
    wait_for(&started);
    repo.write("notes.txt", "staged while the check ran\n");
    repo.git(&["add", "notes.txt"]);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"]), "notes.txt\n");
    assert_eq!(repo.committed("a.txt").as_deref(), Some("A\n"));
    assert_eq!(repo.git(&["status", "--porcelain"]), "M  notes.txt\n");
}

/// A file with staged changes and different unstaged changes (`MM`): every
/// dirty policy refuses, and both versions are kept.
#[test]
fn partially_staged_files_are_refused_under_every_policy() {
    for policy in POLICIES {
        let repo = TestRepo::with(&[("a.txt", "one\ntwo\n")]);
        repo.write("a.txt", "one staged\ntwo\n");
        repo.git(&["add", "a.txt"]);
        repo.write("a.txt", "one staged\ntwo unstaged\n");
        let before = repo.state();
        let out = repo
            .apply()
            .args(["--format", "editblock", "--dirty", policy])
            .write_stdin("a.txt\n```\n<<<<<<< SEARCH\none staged\n=======\nONE\n>>>>>>> REPLACE\n```\n")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{policy}: {stderr}");
        assert!(stderr.contains("staged changes and different unstaged changes"), "{stderr}");
        assert_eq!(repo.state(), before, "{policy}");
        assert_eq!(repo.git(&["show", ":a.txt"]), "one staged\ntwo\n");
    }
}

/// A private file (0600) and an executable one (0755).
fn with_modes() -> TestRepo {
    let repo = TestRepo::with(&[("private.txt", "p\n"), ("tool.sh", "echo\n")]);
    std::fs::set_permissions(repo.path().join("private.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(repo.path().join("tool.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    repo
}

/// Permission bits survive an edit, and the committed mode is what git
/// records: the same as editing by hand and running `git commit -a`.
#[test]
fn modes_are_kept_and_committed_as_git_would() {
    let reply = whole_reply(&[("private.txt", "P\n"), ("tool.sh", "echo hi\n")]);
    for policy in ["commit-first", "include"] {
        let ours = with_modes();
        ours.apply().args(["--format", "whole", "--dirty", policy]).write_stdin(reply.clone()).assert().success();
        let by_hand = with_modes();
        by_hand.write("private.txt", "P\n");
        by_hand.write("tool.sh", "echo hi\n");
        by_hand.git(&["commit", "-qam", "by hand"]);
        assert_eq!(git_view(&ours)[0], git_view(&by_hand)[0], "{policy}: committed modes");
        assert_eq!(git_view(&ours)[1..], git_view(&by_hand)[1..], "{policy}");
        for path in ["private.txt", "tool.sh"] {
            assert_eq!(mode(&ours.path().join(path)), mode(&by_hand.path().join(path)), "{policy}: {path}");
        }
        assert_eq!(mode(&ours.path().join("private.txt")), 0o600);
        if policy == "commit-first" {
            let user_commit = ours.git(&["ls-tree", "HEAD~1", "tool.sh"]);
            assert!(user_commit.starts_with("100755"), "the user's chmod is their own commit: {user_commit}");
        }
    }
}

/// `--no-commit` of several files goes through the journal, whose kept
/// copies of the new contents are linked into place: each file ends with
/// the mode writing it by hand gives, and as a link of its own (a kept
/// copy still linked to it would let a later run's journal write through
/// to the user's file).
#[test]
fn no_commit_files_keep_their_modes_and_are_links_of_their_own() {
    use std::os::unix::fs::MetadataExt as _;
    let files = [("private.txt", "P\n"), ("tool.sh", "echo hi\n"), ("new/made.txt", "made\n")];
    let ours = with_modes();
    ours.apply().args(["--format", "whole", "--no-commit"]).write_stdin(whole_reply(&files)).assert().success();
    let by_hand = with_modes();
    for (path, content) in files {
        by_hand.write(path, content);
    }
    assert_eq!(ours.status(), by_hand.status());
    for (path, content) in files {
        let meta = std::fs::symlink_metadata(ours.path().join(path)).unwrap();
        assert_eq!(ours.read(path).unwrap(), content.as_bytes(), "{path}");
        assert_eq!(mode(&ours.path().join(path)), mode(&by_hand.path().join(path)), "{path}");
        assert_eq!(meta.nlink(), 1, "{path} is still linked to a kept copy");
    }
    let kept = std::fs::read_dir(ours.path().join(".git/agent-apply/pending")).map_or(0, |dir| dir.count());
    assert_eq!(kept, 0, "a kept copy is left");
}

/// A path outside the sparse checkout (skip-worktree) is refused, saying
/// how to widen the checkout; nothing is committed or materialised.
#[test]
fn sparse_checkout_paths_are_refused() {
    let repo = TestRepo::with(&[("in/a.txt", "a\n"), ("out/b.txt", "b\n")]);
    repo.git(&["sparse-checkout", "set", "--cone", "in"]);
    assert!(!repo.path().join("out/b.txt").exists());
    let before = repo.state();
    let out = repo
        .apply()
        .args(["--format", "whole", "--json"])
        .write_stdin(whole_reply(&[("out/b.txt", "B\n")]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = crate::common::report_json(&out.stdout);
    assert_eq!(report["edits"][0]["kind"], "forbidden");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("outside your sparse checkout"));
    assert_eq!(repo.state(), before);
    assert!(!repo.path().join("out/b.txt").exists());
}

/// Git's content conversions (CRLF under `core.autocrlf` or `eol`, a
/// clean/smudge filter standing in for Git LFS, `ident`): the commit, the
/// index and the working tree are exactly what editing by hand and
/// `git commit -a` make, and `undo` restores the working-tree form.
#[test]
fn content_conversions_commit_what_git_add_would() {
    let cases: [(&str, &str, &str, &str); 5] = [
        ("core.autocrlf=true", "", "a\r\nb\r\n", "A\r\nb\r\n"),
        ("core.autocrlf=input", "", "a\nb\n", "A\nb\n"),
        ("", "*.txt text eol=crlf\n", "a\r\nb\r\n", "A\r\nb\r\n"),
        ("", "*.txt filter=fake\n", "a\nb\n", "A\nb\n"),
        ("", "*.txt ident\n", "$Id$\nline\n", "$Id$\nLINE\n"),
    ];
    for (config, attributes, before, after) in cases {
        let setup = || {
            let repo = TestRepo::with(&[(".gitattributes", attributes)]);
            // The fake filter stores lines marked, and checks them out plain.
            repo.git(&["config", "filter.fake.clean", "sed s/^/stored:/"]);
            repo.git(&["config", "filter.fake.smudge", "sed s/^stored://"]);
            if let Some((key, value)) = config.split_once('=') {
                repo.git(&["config", key, value]);
            }
            repo.write("a.txt", before);
            repo.git(&["add", "a.txt"]);
            repo.git(&["commit", "-qm", "a"]);
            // What checkout writes (CRLF, smudged, the expanded $Id$).
            std::fs::remove_file(repo.path().join("a.txt")).unwrap();
            repo.git(&["checkout", "--", "a.txt"]);
            repo
        };
        let ours = setup();
        let on_disk = String::from_utf8(ours.read("a.txt").unwrap()).unwrap();
        assert_eq!(ours.git(&["status", "--porcelain"]), "", "{config} {attributes}: clean before");
        // The model edits what it read: ident's expanded `$Id: … $` stays.
        let edited = if attributes.contains("ident") { on_disk.replace("line", "LINE") } else { after.to_string() };
        ours.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", &edited)])).assert().success();
        let by_hand = setup();
        by_hand.write("a.txt", &edited);
        by_hand.git(&["commit", "-qam", "by hand"]);
        assert_eq!(git_view(&ours), git_view(&by_hand), "{config} {attributes}");
        assert_eq!(ours.read("a.txt"), by_hand.read("a.txt"), "{config} {attributes}: working tree");
        assert_eq!(ours.git(&["status", "--porcelain"]), "", "{config} {attributes}: clean after");
        ours.apply().arg("undo").assert().success();
        assert_eq!(ours.read("a.txt").unwrap(), on_disk.as_bytes(), "{config} {attributes}: undo");
        assert_eq!(ours.git(&["status", "--porcelain"]), "", "{config} {attributes}: clean after undo");
    }
}

/// Checks run on an unborn branch (against an empty base), and the first
/// commit is made.
#[test]
fn checks_run_on_an_unborn_branch() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo { dir };
    repo.git(&["init", "-q", "-b", "main"]);
    repo.apply()
        .args(["--format", "whole", "--check", "test -f a.txt"])
        .write_stdin(whole_reply(&[("a.txt", "first\n")]))
        .assert()
        .success();
    assert_eq!(repo.committed("a.txt").as_deref(), Some("first\n"));
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// A bare repository is a usage error that says what to do.
#[test]
fn a_bare_repository_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo { dir };
    repo.git(&["init", "-q", "--bare"]);
    let out = repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "a\n")])).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a bare repository") && stderr.contains("git worktree add"), "{stderr}");
}

/// The loser of a race for the branch exits 4 and leaves no journal.
#[test]
fn the_loser_of_a_race_leaves_no_journal() {
    let repo = TestRepo::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let started = repo.path().join(".git/check-started");
    let check = format!("touch {}; sleep 2", started.display());
    let slow = repo.spawn_apply(&["--format", "whole", "--check", &check, "-"], &whole_reply(&[("a.txt", "A\n")]));
    wait_for(&started);
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("b.txt", "B\n")])).assert().success();
    let out = slow.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!repo.path().join(".git/agent-apply/journal.json").exists(), "the loser left its journal");
    assert_eq!(repo.committed("b.txt").as_deref(), Some("B\n"));
    assert_eq!(repo.committed("a.txt").as_deref(), Some("a\n"));
}

/// Once the branch has moved, the run reports applied (exit 0) even when
/// the index could not follow (another process took its lock meanwhile),
/// with a warning naming the command that finishes; `recover` then does.
#[test]
fn a_lock_taken_after_the_branch_moved_is_a_warning_not_a_failure() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let old = repo.head();
    // The check runs in the sandbox under .git/agent-apply/sandbox.
    let lock = repo.path().join(".git/index.lock");
    let check = format!("touch {}", lock.display());
    let out = repo
        .apply()
        .args(["--format", "whole", "--json", "--check", &check])
        .write_stdin(whole_reply(&[("a.txt", "A\n")]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = crate::common::report_json(&out.stdout);
    assert_eq!(report["status"], "applied");
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(warning.contains("git agent-apply recover"), "{warning}");
    assert_ne!(repo.head(), old);
    assert!(lock.exists(), "the other process's lock was kept");
    std::fs::remove_file(&lock).unwrap();
    repo.apply().arg("recover").assert().success();
    assert_eq!(repo.read("a.txt").unwrap(), b"A\n");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

/// A repo lock left by a dead run is free after `recover` (the file is
/// kept between runs, empty when free).
#[test]
fn recover_frees_a_dead_runs_repo_lock() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let state = repo.path().join(".git/agent-apply");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("lock"), "999999999").unwrap();
    repo.apply().arg("recover").assert().success();
    assert_eq!(std::fs::read(state.join("lock")).unwrap(), b"");
}

/// An agent commit amended by the user (the trailer survives the amend) is
/// not the commit the tool made: `undo` refuses and changes nothing, so the
/// user's amended-in file is never deleted.
#[test]
fn undo_refuses_an_amended_agent_commit() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "A\n")])).assert().success();
    repo.write("mine.txt", "the user's work\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "-q", "--amend", "--no-edit"]);
    let before = repo.state();
    let out = repo.apply().arg("undo").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("amended or rewritten"), "{stderr}");
    assert_eq!(repo.state(), before);
    assert_eq!(repo.read("mine.txt").unwrap(), b"the user's work\n");
}

/// `undo --dry-run` changes nothing; `undo --redo` reverses an undo and is
/// itself previewed the same way; with nothing left, redo refuses.
#[test]
fn undo_is_previewable_and_reversible() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .args(["--format", "whole"])
        .write_stdin(whole_reply(&[("a.txt", "A\n"), ("new.txt", "n\n")]))
        .assert()
        .success();
    let applied = (repo.head(), git_view(&repo));
    let before = repo.state();
    let out = repo.apply().args(["undo", "--dry-run"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Would undo agent commit"));
    assert_eq!(repo.state(), before, "a dry run changed something");
    repo.apply().arg("undo").assert().success();
    assert_eq!(repo.read("a.txt").unwrap(), b"a\n");
    assert!(!repo.path().join("new.txt").exists());
    let undone = repo.state();
    repo.apply().args(["undo", "--redo", "--dry-run"]).assert().success();
    assert_eq!(repo.state(), undone);
    repo.apply().args(["undo", "--redo"]).assert().success();
    assert_eq!((repo.head(), git_view(&repo)), applied);
    assert_eq!(repo.read("new.txt").unwrap(), b"n\n");
    let out = repo.apply().args(["undo", "--redo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no undo to redo"));
}

/// The matrix: each content state (plain, CRLF under autocrlf or `eol`, a
/// clean/smudge filter, `ident`, a 0600 file, an executable) × each dirty
/// policy, with the user's own uncommitted edit in the file. The tool's
/// result is compared with the user doing the same by hand with `git`:
/// `commit-first` is `git commit -a` of their change then of the edit,
/// `include` one `git commit -a` of both, `refuse` changes nothing.
#[test]
fn each_state_under_each_dirty_policy_matches_git_by_hand() {
    type Setup = fn(&TestRepo);
    let states: [(&str, Setup, &str); 7] = [
        ("plain", |_| {}, "\n"),
        ("autocrlf=true", |r| drop(r.git(&["config", "core.autocrlf", "true"])), "\r\n"),
        ("eol=crlf", |r| r.write(".gitattributes", "*.txt text eol=crlf\n"), "\r\n"),
        ("clean/smudge filter", |r| r.write(".gitattributes", "*.txt filter=fake\n"), "\n"),
        ("ident", |r| r.write(".gitattributes", "*.txt ident\n"), "\n"),
        (
            "0600",
            |r| std::fs::set_permissions(r.path().join("a.txt"), std::fs::Permissions::from_mode(0o600)).unwrap(),
            "\n",
        ),
        (
            "executable",
            |r| std::fs::set_permissions(r.path().join("a.txt"), std::fs::Permissions::from_mode(0o755)).unwrap(),
            "\n",
        ),
    ];
    for (name, enter, eol) in states {
        let lines = |l: &[&str]| l.iter().map(|line| format!("{line}{eol}")).collect::<String>();
        let setup = || {
            let repo = TestRepo::with(&[("a.txt", "")]);
            repo.git(&["config", "filter.fake.clean", "sed s/^/stored:/"]);
            repo.git(&["config", "filter.fake.smudge", "sed s/^stored://"]);
            enter(&repo);
            repo.write("a.txt", &lines(&["$Id$", "one", "two", "three"]));
            repo.git(&["add", "-A"]);
            repo.git(&["commit", "-qm", "state"]);
            std::fs::remove_file(repo.path().join("a.txt")).unwrap();
            repo.git(&["checkout", "--", "a.txt"]);
            enter(&repo);
            // The user's own uncommitted edit.
            let checked_out = String::from_utf8(repo.read("a.txt").unwrap()).unwrap();
            repo.write("a.txt", &checked_out.replace("three", "three (mine)"));
            enter(&repo);
            repo
        };
        for policy in POLICIES {
            let ours = setup();
            let current = String::from_utf8(ours.read("a.txt").unwrap()).unwrap();
            let edited = current.replace("one", "ONE");
            let before = ours.state();
            let out = ours
                .apply()
                .args(["--format", "whole", "--dirty", policy])
                .write_stdin(whole_reply(&[("a.txt", &edited)]))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            if policy == "refuse" {
                assert_eq!(out.status.code(), Some(4), "{name} {policy}: {stderr}");
                assert_eq!(ours.state(), before, "{name} {policy}");
                continue;
            }
            assert!(out.status.success(), "{name} {policy}: {stderr}");
            let by_hand = setup();
            if policy == "commit-first" {
                by_hand.git(&["commit", "-qam", "mine"]);
            }
            by_hand.write("a.txt", &edited);
            enter(&by_hand);
            by_hand.git(&["commit", "-qam", "by hand"]);
            assert_eq!(git_view(&ours), git_view(&by_hand), "{name} {policy}");
            assert_eq!(
                ours.git(&["ls-tree", "-r", "HEAD~1"]),
                by_hand.git(&["ls-tree", "-r", "HEAD~1"]),
                "{name} {policy}"
            );
            assert_eq!(ours.read("a.txt"), by_hand.read("a.txt"), "{name} {policy}: bytes");
            let path = ours.path().join("a.txt");
            assert_eq!(mode(&path), mode(&by_hand.path().join("a.txt")), "{name} {policy}: mode");
        }
    }
}
