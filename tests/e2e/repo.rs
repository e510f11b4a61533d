//! Temporary git repositories for end-to-end tests, driven with the real
//! `git` binary and inspected with git2.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::bin_process;

pub struct TestRepo {
    pub dir: tempfile::TempDir,
}

impl TestRepo {
    /// A repository with `files` committed.
    pub fn with(files: &[(&str, &str)]) -> TestRepo {
        let repo = TestRepo { dir: tempfile::tempdir().unwrap() };
        repo.git(&["init", "-q", "-b", "main"]);
        for (path, content) in files {
            repo.write(path, content);
        }
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-qm", "initial", "--allow-empty"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub fn read(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path().join(path)).ok()
    }

    /// Run git and return its stdout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .current_dir(self.path())
            .args(["-c", "user.name=Tester", "-c", "user.email=tester@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// `bash script` in this repository, with the environment `git` gets
    /// here (and local submodules allowed).
    pub fn shell(&self, script: &Path) -> Command {
        let mut command = Command::new("bash");
        command.arg(script).current_dir(self.path()).env("GIT_CONFIG_NOSYSTEM", "1").env("HOME", self.path());
        command.env("GIT_AUTHOR_NAME", "Tester").env("GIT_AUTHOR_EMAIL", "t@example.com");
        command.env("GIT_COMMITTER_NAME", "Tester").env("GIT_COMMITTER_EMAIL", "t@example.com");
        command.env("GIT_CONFIG_COUNT", "1").env("GIT_CONFIG_KEY_0", "protocol.file.allow");
        command.env("GIT_CONFIG_VALUE_0", "always");
        command
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Everything a failed or dry run must leave as it was: HEAD, the
    /// index, the working tree (status and bytes), the reachable objects,
    /// and the number of objects in the database.
    pub fn state(&self) -> RepoState {
        let mut files = Vec::new();
        collect(self.path(), self.path(), &mut files);
        RepoState {
            head: self.git(&["rev-parse", "HEAD"]),
            index: std::fs::read(self.path().join(".git/index")).unwrap(),
            // No optional locks: a plain `git status` refreshes the index's
            // stat cache, so comparing two states would see its own write.
            status: self.git(&["--no-optional-locks", "status", "--porcelain=v2", "--untracked-files=all"]),
            reachable: self.git(&["rev-list", "--objects", "--all"]),
            objects: self.git(&["count-objects", "-v"]).lines().take(2).collect::<Vec<_>>().join("\n"),
            files,
        }
    }

    /// The binary, run in this repository.
    pub fn apply(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.apply_process())
    }

    /// The same as a plain process, for tests that spawn, race or kill it.
    pub fn apply_process(&self) -> Command {
        let mut cmd = bin_process();
        cmd.current_dir(self.path()).env("HOME", self.path()).env("GIT_CONFIG_NOSYSTEM", "1");
        cmd.env("GIT_AUTHOR_NAME", "Tester").env("GIT_AUTHOR_EMAIL", "t@example.com");
        cmd.env("GIT_COMMITTER_NAME", "Tester").env("GIT_COMMITTER_EMAIL", "t@example.com");
        cmd
    }

    /// The tree of HEAD as path → content.
    pub fn committed(&self, path: &str) -> Option<String> {
        let out =
            Command::new("git").current_dir(self.path()).args(["show", &format!("HEAD:{path}")]).output().unwrap();
        out.status.success().then(|| String::from_utf8(out.stdout).unwrap())
    }

    /// Paths whose working tree or index differs from HEAD.
    pub fn status(&self) -> String {
        self.git(&["status", "--porcelain", "--untracked-files=all"])
    }

    pub fn fsck(&self) {
        self.git(&["fsck", "--no-progress", "--strict"]);
    }
}

#[derive(Debug, PartialEq)]
pub struct RepoState {
    pub head: String,
    pub index: Vec<u8>,
    pub status: String,
    pub reachable: String,
    pub objects: String,
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        let meta = path.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            files
                .push((path.strip_prefix(root).unwrap().to_path_buf(), target.as_os_str().as_encoded_bytes().to_vec()));
        } else if meta.is_dir() {
            collect(root, &path, files);
        } else {
            files.push((path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap()));
        }
    }
}

/// A whole-format reply writing each (path, content).
pub fn whole_reply(files: &[(&str, &str)]) -> String {
    files.iter().map(|(path, content)| format!("{path}\n```\n{content}```\n\n")).collect()
}
