//! Hostile replies that are not plain refusals (those are the case
//! directories of `tests/hostile/`, run by `hostile.rs`): temp files that
//! meet a planted symlink, names near the file-system limits, journals that
//! name a path which cannot be written, locks another process holds, checks
//! that leave processes behind, and protection lifted by config.

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use crate::repo::{TestRepo, wait_for, whole_reply};

/// The fixed temp name the tool once wrote beside `name`, planted as a
/// tracked symlink to a file outside: nothing outside may change, and the
/// symlink stays a symlink, in both modes.
#[test]
fn a_planted_symlink_beside_an_edited_file_is_never_followed_or_removed() {
    for mode in [&["--no-commit"][..], &[][..]] {
        let repo = TestRepo::with(&[("app.py", "old\n")]);
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "outside\n").unwrap();
        let victim_mode = mode_of(&victim);
        symlink(&victim, repo.path().join(".app.py.agent-apply-tmp")).unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-qm", "plant"]);
        repo.apply()
            .args(["--format", "whole"])
            .args(mode)
            .write_stdin(whole_reply(&[("app.py", "new\n")]))
            .assert()
            .success();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside\n", "{mode:?}: wrote outside");
        let planted = repo.path().join(".app.py.agent-apply-tmp");
        assert_eq!(std::fs::read_link(&planted).unwrap(), victim, "{mode:?}: the symlink was replaced");
        assert!(!repo.path().join("app.py").symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(repo.read("app.py").unwrap(), b"new\n");
        assert_eq!(mode_of(&victim), victim_mode, "{mode:?}: chmodded outside");
    }
}

fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode()
}

/// A name within `NAME_MAX` is edited even when the old temp name (the name
/// plus a suffix) would not have fit.
#[test]
fn a_file_with_a_name_of_250_bytes_is_edited() {
    let name = format!("{}.txt", "n".repeat(246));
    let repo = TestRepo::with(&[(&name, "old\n")]);
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[(&name, "new\n")])).assert().success();
    assert_eq!(repo.committed(&name).as_deref(), Some("new\n"));
    assert_eq!(repo.status(), "");
}

/// A run killed after moving the branch, whose path then became impossible
/// to write (its directory replaced by a file): `recover` finishes the rest,
/// reports the path as left, and later runs work.
#[test]
fn recover_finishes_a_journal_whose_path_can_no_longer_be_written() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let out = repo
        .apply()
        .args(["--format", "whole"])
        .env("AGENT_APPLY_FAULT", "after-ref")
        .write_stdin(whole_reply(&[("a.txt", "A\n"), ("d/x.txt", "x\n")]))
        .output()
        .unwrap();
    assert!(!out.status.success());
    std::fs::remove_dir_all(repo.path().join("d")).ok();
    std::fs::write(repo.path().join("d"), "the user made this a file\n").unwrap();
    let out = repo.apply().args(["recover", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = crate::common::report_json(&out.stdout);
    assert_eq!(report["recovery"]["left"], serde_json::json!(["d/x.txt"]));
    assert_eq!(repo.read("a.txt").unwrap(), b"A\n");
    assert!(!repo.path().join(".git/agent-apply/journal.json").exists());
    repo.apply().args(["--format", "whole"]).write_stdin(whole_reply(&[("a.txt", "B\n")])).assert().success();
}

/// A lock record left by a killed run, for an `index.lock` that another git
/// process took before that run recorded it: recovery leaves it alone.
#[test]
fn recovery_never_removes_a_lock_the_dead_run_did_not_make() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let lock = repo.path().join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&lock).unwrap().set_modified(an_hour_ago).unwrap();
    let state = repo.path().join(".git/agent-apply");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("git-lock"), lock.to_string_lossy().as_bytes()).unwrap();
    repo.apply().arg("recover").assert().success();
    assert!(lock.exists(), "recover removed a lock another process holds");
    assert!(!state.join("git-lock").exists(), "the record is done with");
}

/// Processes a check starts in the background die when it ends, even one
/// that left its process group.
#[cfg(target_os = "linux")]
#[test]
fn a_check_leaves_no_process_behind() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let marks: Vec<_> = ["grouped", "escaped"].iter().map(|m| repo.path().join(".git").join(m)).collect();
    let check = format!(
        "( sleep 2; touch {} ) & setsid sh -c 'sleep 2; touch {}' & true",
        marks[0].display(),
        marks[1].display()
    );
    let started = Instant::now();
    repo.apply()
        .args(["--format", "whole", "--check", &check])
        .write_stdin(whole_reply(&[("a.txt", "A\n")]))
        .assert()
        .success();
    assert!(started.elapsed() < Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(4));
    for mark in &marks {
        assert!(!mark.exists(), "{} was touched by a process the check left running", mark.display());
    }
}

/// A run killed while its check runs takes every process of the check with
/// it, including one the check put in the background.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_run_takes_its_checks_background_processes_with_it() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let started_mark = repo.path().join(".git/check-started");
    let late_mark = repo.path().join(".git/check-late");
    let check = format!("touch {}; ( sleep 3; touch {} ) & sleep 60", started_mark.display(), late_mark.display());
    let mut child = repo.spawn_apply(&["--format", "whole", "--check", &check, "-"], &whole_reply(&[("a.txt", "A\n")]));
    wait_for(&started_mark);
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_secs(5));
    assert!(!late_mark.exists(), "a background process of the check outlived the killed run");
}

/// Config, never a reply, lifts a protection: with `allow-protected` in the
/// user's config the same edit applies.
#[test]
fn config_can_lift_a_protection() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let config = repo.path().join(".git/user-config.toml");
    std::fs::write(&config, "allow-protected = [\".envrc\"]\n").unwrap();
    let reply = whole_reply(&[(".envrc", "export A=1\n")]);
    repo.apply().args(["--format", "whole"]).write_stdin(reply.clone()).assert().code(1);
    repo.apply().args(["--format", "whole"]).env("AGENT_APPLY_CONFIG", &config).write_stdin(reply).assert().success();
    assert_eq!(repo.committed(".envrc").as_deref(), Some("export A=1\n"));
}
