//! Killed at any stage, the repository is before or after; recovery (by
//! `recover` or by the next run) finishes an interrupted working-tree update.
//! Two appliers racing never lose an update.

use agent_apply::transaction::fault::STAGES;

use crate::repo::{TestRepo, whole_reply};

const BEFORE: &[(&str, &str)] = &[("a.txt", "a\n"), ("b.txt", "b\n")];
const AFTER: &[(&str, &str)] = &[("a.txt", "A\n"), ("b.txt", "B\n"), ("c/new.txt", "C\n")];

/// HEAD, the working tree and the index agree, and hold `files`.
fn assert_consistent(repo: &TestRepo, files: &[(&str, &str)], absent: &[&str]) {
    for (path, content) in files {
        assert_eq!(repo.committed(path).as_deref(), Some(*content), "{path} in HEAD");
        assert_eq!(repo.read(path).as_deref(), Some(content.as_bytes()), "{path} in the working tree");
    }
    for path in absent {
        assert_eq!(repo.read(path), None, "{path} must not exist");
    }
    assert_eq!(repo.status(), "", "index and working tree match HEAD");
    repo.fsck();
}

/// The binary applying `AFTER` (whole format, with `args`), killed by an
/// injected fault at `stage`.
fn killed_at(repo: &TestRepo, stage: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = repo.apply();
    cmd.args(["--format", "whole"]).args(args).env("AGENT_APPLY_FAULT", stage);
    cmd.write_stdin(whole_reply(AFTER)).output().unwrap()
}

#[test]
fn killed_at_each_stage_then_recovered_is_before_or_after() {
    for stage in &STAGES {
        let repo = TestRepo::with(BEFORE);
        let old = repo.head();
        let out = killed_at(&repo, stage, &[]);
        assert!(!out.status.success(), "{stage}: the fault must kill the run");
        assert!(String::from_utf8_lossy(&out.stderr).contains("injected fault"), "{stage}");
        let moved = repo.head() != old;
        repo.apply().arg("recover").assert().success();
        if moved {
            assert_consistent(&repo, AFTER, &[]);
        } else {
            assert_consistent(&repo, BEFORE, &["c/new.txt"]);
        }
        let expect_moved = !matches!(*stage, "after-objects" | "after-journal" | "mid-ref-move");
        assert_eq!(moved, expect_moved, "{stage}");
        assert!(!repo.path().join(".git/agent-apply/journal.json").exists(), "{stage}: journal cleared");
    }
}

#[test]
fn the_next_run_finishes_an_interrupted_one_first() {
    let repo = TestRepo::with(BEFORE);
    let out = killed_at(&repo, "mid-worktree", &[]);
    assert!(!out.status.success());
    assert_ne!(repo.status(), "", "the crash left the working tree half updated");
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("d.txt", "D\n")])).assert().success();
    assert_consistent(&repo, &[("a.txt", "A\n"), ("b.txt", "B\n"), ("c/new.txt", "C\n"), ("d.txt", "D\n")], &[]);
}

#[test]
fn a_run_killed_while_writing_the_index_leaves_no_stale_index_lock() {
    let repo = TestRepo::with(BEFORE);
    let out = killed_at(&repo, "mid-index-write", &[]);
    assert!(!out.status.success());
    // What libgit2 holds while it writes the index, left by the kill.
    std::fs::write(repo.path().join(".git/index.lock"), "").unwrap();
    repo.apply().arg("recover").assert().success();
    assert!(!repo.path().join(".git/index.lock").exists());
    assert_consistent(&repo, AFTER, &[]);
}

#[test]
fn a_run_killed_while_moving_the_branch_leaves_no_stale_ref_lock() {
    let repo = TestRepo::with(BEFORE);
    let out = killed_at(&repo, "mid-ref-move", &[]);
    assert!(!out.status.success());
    // What libgit2 holds while it moves the branch, left by the kill.
    std::fs::write(repo.path().join(".git/refs/heads/main.lock"), "").unwrap();
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(AFTER)).assert().success();
    assert!(!repo.path().join(".git/refs/heads/main.lock").exists());
    assert_consistent(&repo, AFTER, &[]);
}

#[test]
fn recovery_never_overwrites_later_user_edits() {
    let repo = TestRepo::with(BEFORE);
    let out = killed_at(&repo, "after-ref", &[]);
    assert!(!out.status.success());
    repo.write("b.txt", "the user typed this after the crash\n");
    let out = repo.apply().args(["recover", "--json"]).output().unwrap();
    let report: serde_json::Value = crate::common::report_json(&out.stdout);
    assert_eq!(report["recovery"]["left"][0], "b.txt");
    assert_eq!(repo.read("b.txt").unwrap(), b"the user typed this after the crash\n");
    assert_eq!(repo.read("a.txt").unwrap(), b"A\n");
}

#[test]
fn no_commit_mode_is_crash_safe_too() {
    for stage in ["after-journal", "mid-write", "mid-worktree"] {
        let repo = TestRepo::with(BEFORE);
        let out = killed_at(&repo, stage, &["--no-commit"]);
        assert!(!out.status.success());
        repo.apply().arg("recover").assert().success();
        for (path, content) in AFTER {
            assert_eq!(repo.read(path).as_deref(), Some(content.as_bytes()), "{stage}: {path}");
        }
    }
}

/// A one-file `--no-commit` run records its temp file in the repo lock it
/// holds (no record file is created); killed then, it leaves the lock with
/// that record, and recovery removes the temp file it may have half written.
#[test]
fn a_one_file_no_commit_run_killed_mid_write_leaves_no_temp_file() {
    let repo = TestRepo::with(BEFORE);
    let mut cmd = repo.apply();
    cmd.args(["--format", "whole", "--no-commit"]).env("AGENT_APPLY_FAULT", "mid-write");
    let out = cmd.write_stdin(whole_reply(&[("a.txt", "A\n")])).output().unwrap();
    assert!(!out.status.success());
    let state = repo.path().join(".git/agent-apply");
    assert!(!state.join("git-lock").exists(), "the record is in the lock, not a file of its own");
    let lock = std::fs::read_to_string(state.join("lock")).unwrap();
    let temp = lock.lines().nth(1).expect("the lock records the temp file");
    assert!(temp.starts_with(repo.path().to_str().unwrap()) && temp.ends_with(".tmp"), "{lock}");
    // What the kill left of the write.
    std::fs::write(temp, "A").unwrap();
    repo.apply().arg("recover").assert().success();
    assert!(!std::path::Path::new(temp).exists(), "temp file removed");
    assert!(!state.join("git-lock").exists(), "the record is done with");
    assert_eq!(std::fs::read(state.join("lock")).unwrap(), b"", "the lock is free");
    assert_consistent(&repo, BEFORE, &[]);
}

#[test]
fn racing_appliers_never_lose_an_update() {
    const ROUNDS: usize = 30;
    let mut conflicts = 0;
    for round in 0..ROUNDS {
        let overlapping = round % 2 == 1;
        let repo = TestRepo::with(BEFORE);
        let ours = whole_reply(&[("a.txt", &format!("first {round}\n"))]);
        let theirs_path = if overlapping { "a.txt" } else { "b.txt" };
        let theirs = whole_reply(&[(theirs_path, &format!("second {round}\n"))]);
        let spawn = |reply: String| repo.spawn_apply(&["--format", "whole", "-"], &reply);
        let (a, b) = (spawn(ours.clone()), spawn(theirs.clone()));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let mut winners = Vec::new();
        for (out, path, content) in
            [(&a, "a.txt", format!("first {round}\n")), (&b, theirs_path, format!("second {round}\n"))]
        {
            match out.status.code() {
                Some(0) => winners.push((path, content)),
                Some(4) => {
                    conflicts += 1;
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    assert!(stderr.contains("while the edits were being applied"), "{stderr}");
                }
                other => panic!("round {round}: exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
            }
        }
        assert!(!winners.is_empty(), "round {round}: someone wins");
        let commits: usize = repo.git(&["rev-list", "--count", "HEAD"]).trim().parse().unwrap();
        assert_eq!(commits, 1 + winners.len(), "round {round}: every success is in the history");
        if !overlapping || winners.len() == 1 {
            for (path, content) in &winners {
                assert_eq!(repo.committed(path).as_deref(), Some(content.as_str()), "round {round}: {path}");
            }
        }
        assert_eq!(repo.status(), "", "round {round}");
        repo.fsck();
    }
    eprintln!("{ROUNDS} races, {conflicts} clean conflicts");
}

#[test]
fn a_journal_of_another_layout_is_refused_not_guessed_at() {
    let repo = TestRepo::with(BEFORE);
    let state = repo.path().join(".git/agent-apply");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("journal.json"), r#"{"version": 1, "entries": []}"#).unwrap();
    let out = repo.apply().arg("recover").output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("layout version 1") && stderr.contains("reads version 2"), "{stderr}");
    assert!(state.join("journal.json").exists(), "an unreadable journal is kept for the user");
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn process_runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

#[cfg(target_os = "linux")]
#[test]
fn a_run_killed_during_its_checks_takes_its_checks_with_it() {
    let repo = TestRepo::with(BEFORE);
    let old = repo.head();
    let marker = repo.path().join(".git/check-pid");
    let check = format!("echo $$ > {}; exec sleep 60", marker.display());
    let mut child = repo.spawn_apply(&["--format", "whole", "--check", &check, "-"], &whole_reply(AFTER));
    let started = std::time::Instant::now();
    let check_pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&marker).ok().and_then(|s| s.trim().parse().ok()) {
            break pid;
        }
        assert!(started.elapsed().as_secs() < 60, "the check never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = std::time::Instant::now();
    while process_runs(check_pid) {
        assert!(killed.elapsed().as_secs() < 5, "the check outlived the killed run");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    repo.apply().arg("recover").assert().success();
    assert_eq!(repo.head(), old);
    assert_consistent(&repo, BEFORE, &["c/new.txt"]);
    assert!(!repo.path().join(".git/agent-apply/sandbox.lock").exists());
}

/// What a `git worktree add` killed half-way leaves: an admin directory
/// still locked "initializing", with an empty HEAD that `git fsck` rejects.
#[test]
fn a_half_made_sandbox_left_by_a_killed_run_is_removed_by_recover_and_made_again() {
    let repo = TestRepo::with(BEFORE);
    let state = repo.path().join(".git/agent-apply");
    std::fs::create_dir_all(state.join("sandbox")).unwrap();
    std::fs::write(state.join("sandbox.lock"), dead_pid().to_string()).unwrap();
    let admin = repo.path().join(".git/worktrees/sandbox");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("locked"), "initializing").unwrap();
    std::fs::write(admin.join("gitdir"), format!("{}\n", state.join("sandbox/.git").display())).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(admin.join("HEAD"), "").unwrap();
    let broken = std::process::Command::new("git").current_dir(repo.path()).args(["fsck", "--strict"]).output();
    assert!(!broken.unwrap().status.success(), "the staged damage must be what fsck rejects");

    repo.apply().arg("recover").assert().success();
    assert!(!admin.exists() && !state.join("sandbox").exists() && !state.join("sandbox.lock").exists());
    assert_consistent(&repo, BEFORE, &["c/new.txt"]);

    repo.apply().args(["--format", "whole", "--check", "true"]).write_stdin(whole_reply(AFTER)).assert().success();
    assert_consistent(&repo, AFTER, &[]);
}

#[test]
fn a_user_worktree_is_never_taken_for_a_dead_runs_sandbox() {
    let repo = TestRepo::with(BEFORE);
    let elsewhere = tempfile::tempdir().unwrap();
    let user_tree = elsewhere.path().join("sandbox");
    repo.git(&["worktree", "add", "-q", "--detach", user_tree.to_str().unwrap()]);
    let state = repo.path().join(".git/agent-apply");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("sandbox.lock"), dead_pid().to_string()).unwrap();

    repo.apply().arg("recover").assert().success();
    assert!(user_tree.join("a.txt").exists());
    assert!(repo.git(&["worktree", "list"]).contains(user_tree.to_str().unwrap()));
    repo.fsck();
}

/// Found by the soak: a run killed while libgit2 wrote the scratch index
/// left `index.new` and its lock in the state directory, and every later
/// `recover` failed with "the index is locked". They are a dead run's.
#[test]
fn a_scratch_index_left_by_a_killed_run_does_not_block_recovery() {
    let repo = TestRepo::with(BEFORE);
    let out = killed_at(&repo, "after-ref", &[]);
    assert!(!out.status.success());
    let state = repo.path().join(".git/agent-apply");
    std::fs::write(state.join("index.new"), "half an index").unwrap();
    std::fs::write(state.join("index.new.lock"), "half an index").unwrap();
    repo.apply().arg("recover").assert().success();
    assert_consistent(&repo, AFTER, &[]);
}
