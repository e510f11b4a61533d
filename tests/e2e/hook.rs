//! `git agent-apply hook install|uninstall`: a real `git commit` blocked by
//! the installed hook, chaining with existing hooks, byte-exact uninstall.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::shared_cache;
use crate::repo::TestRepo;

fn hook(repo: &TestRepo, action: &str) {
    let out = repo.apply().args(["hook", action]).output().unwrap();
    assert!(out.status.success(), "hook {action}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `git commit` as a user runs it: hooks enabled, the tool's config and
/// cache kept out of the repository.
fn commit(repo: &TestRepo, message: &str) -> Output {
    Command::new("git")
        .current_dir(repo.path())
        .args(["-c", "user.name=Tester", "-c", "user.email=tester@example.com", "-c", "commit.gpgsign=false"])
        .args(["commit", "-qm", message])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo.path())
        .env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml")
        .env("AGENT_APPLY_CACHE_DIR", shared_cache())
        .output()
        .unwrap()
}

fn hooks(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/hooks")
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn installed_hook_blocks_a_commit_with_a_leftover_until_it_is_removed() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n")]);
    hook(&repo, "install");
    let script = std::fs::read_to_string(hooks(&repo).join("pre-commit")).unwrap();
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    let binary = crate::common::binary_path();
    assert!(script.contains(binary.to_str().unwrap()), "absolute path of the binary: {script}");
    assert!(script.contains("lint --staged"));

    repo.write("a.py", "x = 1\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n");
    repo.git(&["add", "a.py"]);
    let head = repo.head();
    let out = commit(&repo, "with leftover");
    assert!(!out.status.success(), "the hook should block the commit");
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("a.py:2: "), "{said}");
    assert_eq!(repo.head(), head);

    // A working-tree fix that is not staged does not help: the staged blob is checked.
    repo.write("a.py", "x = 2\n");
    assert!(!commit(&repo, "still staged leftover").status.success());
    repo.git(&["add", "a.py"]);
    let out = commit(&repo, "fixed");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(repo.head(), head);
    assert_eq!(repo.committed("a.py").unwrap(), "x = 2\n");

    // Installing twice changes nothing; uninstall removes the file it created.
    let before = std::fs::read(hooks(&repo).join("pre-commit")).unwrap();
    hook(&repo, "install");
    assert_eq!(std::fs::read(hooks(&repo).join("pre-commit")).unwrap(), before);
    hook(&repo, "uninstall");
    assert!(!hooks(&repo).join("pre-commit").exists());
    repo.write("a.py", "<<<<<<< SEARCH\n");
    repo.git(&["add", "a.py"]);
    assert!(commit(&repo, "no hook any more").status.success());
}

#[test]
fn a_shell_hook_is_chained_and_restored_byte_for_byte() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n")]);
    let original = "#!/bin/sh\n# my hook\r\necho ran >> \"$(git rev-parse --git-dir)/my-hook-ran\"\nexit 0\n";
    let path = hooks(&repo).join("pre-commit");
    std::fs::create_dir_all(hooks(&repo)).unwrap();
    std::fs::write(&path, original).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    }
    hook(&repo, "install");
    let chained = std::fs::read_to_string(&path).unwrap();
    assert!(chained.starts_with("#!/bin/sh\n# >>> git agent-apply hook >>>\n"), "{chained}");
    assert!(chained.ends_with(
        "# <<< git agent-apply hook <<<\n# my hook\r\necho ran >> \"$(git rev-parse --git-dir)/my-hook-ran\"\nexit 0\n"
    ));

    // A leftover blocks the commit before the user's hook runs; a clean commit runs both.
    repo.write("a.py", "1:48|x = 1\n");
    repo.git(&["add", "a.py"]);
    assert!(!commit(&repo, "leftover").status.success());
    assert!(!repo.path().join(".git/my-hook-ran").exists());
    repo.write("a.py", "x = 3\n");
    repo.git(&["add", "a.py"]);
    let out = commit(&repo, "clean");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(repo.path().join(".git/my-hook-ran").exists(), "the original hook still runs");

    hook(&repo, "uninstall");
    assert_eq!(std::fs::read(&path).unwrap(), original.as_bytes());
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o750);
    // Uninstalling again is a no-op.
    hook(&repo, "uninstall");
    assert_eq!(std::fs::read(&path).unwrap(), original.as_bytes());
}

#[test]
fn a_non_shell_hook_is_moved_aside_called_and_restored() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n")]);
    // A hook in another language (no shell shebang): moved aside, then exec'd by the wrapper.
    let original = "#!/usr/bin/env -S sh -e\n# not recognised as plain sh: treated as foreign\ntouch \"$(git rev-parse --git-dir)/foreign-ran\"\n";
    let path = hooks(&repo).join("pre-commit");
    std::fs::create_dir_all(hooks(&repo)).unwrap();
    std::fs::write(&path, original).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    hook(&repo, "install");
    let moved = hooks(&repo).join("pre-commit.agent-apply-orig");
    assert_eq!(std::fs::read(&moved).unwrap(), original.as_bytes());
    repo.write("a.py", "x = 4\n");
    repo.git(&["add", "a.py"]);
    let out = commit(&repo, "clean");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(repo.path().join(".git/foreign-ran").exists(), "the moved hook still runs");
    hook(&repo, "uninstall");
    assert!(!moved.exists());
    assert_eq!(std::fs::read(&path).unwrap(), original.as_bytes());
}

#[test]
fn core_hooks_path_is_respected() {
    let repo = TestRepo::with(&[("a.py", "x = 1\n")]);
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    hook(&repo, "install");
    assert!(repo.path().join(".githooks/pre-commit").exists());
    assert!(!hooks(&repo).join("pre-commit").exists());
    repo.write("a.py", "x = 1\n@@ -1,1 +1,1 @@\n");
    repo.git(&["add", "a.py"]);
    assert!(!commit(&repo, "leftover").status.success());
    hook(&repo, "uninstall");
    assert!(!repo.path().join(".githooks/pre-commit").exists());
}

/// The pre-commit framework's view of `.pre-commit-hooks.yaml`, when the
/// framework is installed (`pip install pre-commit`); skipped otherwise.
#[test]
fn pre_commit_framework_runs_the_agent_apply_lint_hook() {
    let available = Command::new("pre-commit").arg("--version").output().is_ok_and(|o| o.status.success());
    if !available {
        println!("skipped: the pre-commit framework is not installed (pip install pre-commit)");
        return;
    }
    let repo = TestRepo::with(&[("a.py", "x = 1\n")]);
    let this_repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let binary = crate::common::binary_path();
    let bin_dir = binary.parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let home = tempfile::tempdir().unwrap();
    let run = || {
        Command::new("pre-commit")
            .current_dir(repo.path())
            .args(["try-repo"])
            .arg(this_repo)
            .args(["agent-apply-lint", "--all-files"])
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", home.path())
            .env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml")
            .env("AGENT_APPLY_CACHE_DIR", shared_cache())
            .output()
            .unwrap()
    };
    repo.write("a.py", "x = 1\n<<<<<<< SEARCH\n");
    repo.git(&["add", "a.py"]);
    let out = run();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("a.py:2: "), "{said}");
    repo.write("a.py", "x = 2\n");
    repo.git(&["add", "a.py"]);
    let out = run();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}
