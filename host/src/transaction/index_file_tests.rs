//! The direct index patch against git itself: the same repository states
//! staged by `git add` and by [`IndexFile::patched`] must give git the same
//! tree, clean stat data, and entries; what it does not cover it refuses.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args);
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn git_output(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

/// A repository of a few files in nested directories, committed (so the
/// index has a full cache tree), with its index files an hour old.
fn repo(setup: &[&[&str]]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    for (path, body) in
        [("a.txt", "a\n"), ("src/lib.rs", "fn a() {}\n"), ("src/deep/mod.rs", "mod x;\n"), ("z/z.txt", "z\n")]
    {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), body).unwrap();
    }
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "base"]);
    for args in setup {
        git(root, args);
    }
    age(root);
    dir
}

/// Every file an hour older and the index refreshed after: no entry is
/// racily clean.
fn age(root: &Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for path in ["a.txt", "src/lib.rs", "src/deep/mod.rs", "z/z.txt"] {
        if let Ok(file) = std::fs::File::options().write(true).open(root.join(path)) {
            file.set_modified(hour_ago).unwrap();
        }
    }
    // Exit 1 when a path needs merging; the others are refreshed all the same.
    git_output(root, &["update-index", "-q", "--refresh"]);
}

fn index_path(root: &Path) -> PathBuf {
    root.join(".git/index")
}

/// Write `body` to `path` and stage it with the direct patch.
fn stage_directly(root: &Path, path: &str, body: &str) -> Result<(), Unsupported> {
    std::fs::write(root.join(path), body).unwrap();
    let id = Oid::hash_object(git2::ObjectType::Blob, body.as_bytes()).unwrap();
    git2::Repository::open(root).unwrap().blob(body.as_bytes()).unwrap();
    let meta = std::fs::symlink_metadata(root.join(path)).unwrap();
    let index = IndexFile::read(&index_path(root))?.expect("an index");
    let bytes = index.patched(&[EntryUpdate::from_stat(path, id, false, &meta)], &[])?;
    std::fs::write(index_path(root), bytes).unwrap();
    Ok(())
}

/// The same change staged by `git add` in a copy made before it, and by
/// the direct patch: git must see the same tree and entries, and the
/// patched file clean.
fn same_as_git_add(setup: &[&[&str]], path: &str) {
    let ours = repo(setup);
    let theirs = repo(setup);
    let before = git(ours.path(), &["write-tree"]);
    std::fs::write(theirs.path().join(path), "changed\n").unwrap();
    git(theirs.path(), &["add", path]);
    stage_directly(ours.path(), path, "changed\n").unwrap();
    let tree = git(ours.path(), &["write-tree"]);
    assert_ne!(tree, before, "the cache tree was invalidated along {path}");
    assert_eq!(tree, git(theirs.path(), &["write-tree"]));
    assert_eq!(git(ours.path(), &["ls-files", "-s"]), git(theirs.path(), &["ls-files", "-s"]));
    // Clean by stat data or content, without a refresh first.
    git(ours.path(), &["diff-files", "--quiet"]);
    assert_eq!(git(ours.path(), &["status", "--porcelain"]), git(theirs.path(), &["status", "--porcelain"]));
    assert_eq!(git(ours.path(), &["diff", "--cached"]), git(theirs.path(), &["diff", "--cached"]));
}

#[test]
fn a_patched_entry_stages_the_change_as_git_add_does() {
    for path in ["a.txt", "src/lib.rs", "src/deep/mod.rs", "z/z.txt"] {
        same_as_git_add(&[], path);
    }
}

#[test]
fn every_index_version_is_patched_alike() {
    for version in ["2", "3", "4"] {
        same_as_git_add(&[&["update-index", "--index-version", version]], "src/deep/mod.rs");
    }
}

#[test]
fn an_index_with_flagged_entries_elsewhere_is_patched() {
    // `git add -N` makes a version 3 index with an intent-to-add entry.
    let setup: &[&[&str]] = &[&["update-index", "--index-version", "3"]];
    let dir = repo(setup);
    std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
    git(dir.path(), &["add", "-N", "new.txt"]);
    age(dir.path());
    stage_directly(dir.path(), "a.txt", "changed\n").unwrap();
    assert!(git(dir.path(), &["ls-files", "--debug", "new.txt"]).contains("new.txt"));
    git(dir.path(), &["diff-files", "--quiet", "a.txt"]);
    // The flagged entry itself is left to libgit2.
    assert_eq!(stage_directly(dir.path(), "new.txt", "x\n"), Err(Unsupported("a flagged entry")));
}

#[test]
fn entries_read_as_libgit2_reads_them() {
    for version in ["2", "4"] {
        let dir = repo(&[&["update-index", "--index-version", version], &["update-index", "--chmod=+x", "a.txt"]]);
        let ours = IndexFile::read(&index_path(dir.path())).unwrap().unwrap();
        let theirs = git2::Index::open(&index_path(dir.path())).unwrap();
        for entry in theirs.iter() {
            let path = std::str::from_utf8(&entry.path).unwrap();
            let info = ours.entry(path).unwrap();
            assert_eq!(info.id, entry.id);
            assert_eq!(info.mode, entry.mode);
            assert_eq!(info.size, entry.file_size);
            assert_eq!(info.mtime, (entry.mtime.seconds() as u32, entry.mtime.nanoseconds()));
            assert_eq!(info.ctime, (entry.ctime.seconds() as u32, entry.ctime.nanoseconds()));
            assert_eq!(info.ino, entry.ino);
        }
        assert_eq!(ours.entry("src"), None);
        assert_eq!(ours.entry("missing.txt"), None);
        assert!(ours.conflicted_paths().is_empty());
    }
}

#[test]
fn optional_caches_are_dropped_and_git_reads_the_result() {
    let dir = repo(&[&["config", "core.untrackedCache", "true"]]);
    git(dir.path(), &["status", "--porcelain"]);
    age(dir.path());
    let bytes = std::fs::read(index_path(dir.path())).unwrap();
    assert!(bytes.windows(4).any(|w| w == b"UNTR"), "git wrote an untracked cache");
    stage_directly(dir.path(), "z/z.txt", "changed\n").unwrap();
    let bytes = std::fs::read(index_path(dir.path())).unwrap();
    assert!(!bytes.windows(4).any(|w| w == b"UNTR"));
    git(dir.path(), &["diff-files", "--quiet"]);
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "M  z/z.txt\n");
}

#[test]
fn what_it_does_not_cover_is_refused_and_left_as_it_was() {
    let refused = |setup: &[&[&str]], path: &str, reason: &'static str| {
        let dir = repo(setup);
        let before = std::fs::read(index_path(dir.path())).unwrap();
        let result = match IndexFile::read(&index_path(dir.path())) {
            Err(e) => Err(e),
            Ok(_) => stage_directly(dir.path(), path, "changed\n"),
        };
        assert_eq!(result, Err(Unsupported(reason)), "{setup:?}");
        assert_eq!(std::fs::read(index_path(dir.path())).unwrap(), before);
    };
    refused(&[], "new.txt", "a path the index does not hold");
    // Its entries (names kept in the shared index) fail the order check first.
    refused(&[&["update-index", "--split-index"]], "a.txt", "entries out of order");
    refused(
        &[&["sparse-checkout", "set", "--cone", "--sparse-index", "src"]],
        "src/lib.rs",
        "an extension git requires (split or sparse index)",
    );
    refused(
        &[&["update-index", "--add", "--cacheinfo", "120000,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,l"]],
        "l",
        "not a regular file's entry",
    );
    refused(&[&["update-index", "--assume-unchanged", "a.txt"]], "a.txt", "a flagged entry");
}

#[test]
fn a_conflicted_path_is_listed_and_refused() {
    let dir = repo(&[]);
    let root = dir.path();
    git(root, &["checkout", "-q", "-b", "other"]);
    std::fs::write(root.join("a.txt"), "theirs\n").unwrap();
    git(root, &["commit", "-q", "-am", "theirs"]);
    git(root, &["checkout", "-q", "main"]);
    std::fs::write(root.join("a.txt"), "ours\n").unwrap();
    git(root, &["commit", "-q", "-am", "ours"]);
    assert!(!git_output(root, &["merge", "-q", "other"]).status.success());
    age(root);
    let index = IndexFile::read(&index_path(root)).unwrap().unwrap();
    assert_eq!(index.conflicted_paths(), ["a.txt"]);
    assert_eq!(index.entry("a.txt"), None);
    assert_eq!(stage_directly(root, "a.txt", "x\n"), Err(Unsupported("a conflicted path")));
}

#[test]
fn a_corrupt_index_is_refused() {
    let dir = repo(&[]);
    let path = index_path(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(IndexFile::read(&path).err(), Some(Unsupported("checksum mismatch")));
}

/// Entries as new as the index are listed; a smudged one is one git sees
/// as changed until it looks at the content, as git's own smudging does.
#[test]
fn racy_entries_are_listed_and_smudged_ones_are_seen_as_changed() {
    let dir = repo(&[]);
    let root = dir.path();
    let path = index_path(root);
    let index = IndexFile::read(&path).unwrap().unwrap();
    assert!(index.racy_entries().is_empty());
    // Written a day ago, older than its entries: all are racily clean.
    let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86400);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(day_ago).unwrap();
    let index = IndexFile::read(&path).unwrap().unwrap();
    let racy: Vec<&str> = index.racy_entries().iter().map(|(p, _)| *p).collect();
    assert_eq!(racy, ["a.txt", "src/deep/mod.rs", "src/lib.rs", "z/z.txt"]);
    std::fs::write(root.join("z/z.txt"), "changed\n").unwrap();
    std::fs::write(&path, index.patched(&[], &["z/z.txt"]).unwrap()).unwrap();
    assert_eq!(git(root, &["diff-files", "--name-only"]), "z/z.txt\n");
    assert_eq!(git(root, &["status", "--porcelain"]), " M z/z.txt\n");
}

#[test]
fn no_index_file_reads_as_none() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    assert!(IndexFile::read(&index_path(dir.path())).unwrap().is_none());
}
