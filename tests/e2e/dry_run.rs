//! Checks without a commit leave the repository's `.git` alone (issue #20,
//! item 5): under `--dry-run` byte for byte, nothing at all written; under
//! `--no-commit`, no sandbox worktree, object or filter store. They run in
//! a scratch repository in the temporary directory, gone when the run ends.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::report_json;
use crate::repo::TestRepo;

/// What a path under `.git` is: its mode and modification time, and a
/// file's bytes (`None` for a directory or a symlink's target).
type Entry = (u32, std::time::SystemTime, Option<Vec<u8>>);

/// Every path under `dir`, directories included, with its [`Entry`].
fn listing(dir: &Path) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, all: &mut BTreeMap<String, Entry>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = meta.is_file().then(|| std::fs::read(&path).unwrap());
            let name = path.strip_prefix(root).unwrap().display().to_string();
            all.insert(name, (mode(&meta), meta.modified().unwrap(), bytes));
            if meta.is_dir() {
                walk(root, &path, all);
            }
        }
    }
    let mut all = BTreeMap::new();
    walk(dir, dir, &mut all);
    all
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
}

#[cfg(not(unix))]
fn mode(meta: &std::fs::Metadata) -> u32 {
    meta.permissions().readonly() as u32
}

/// The paths whose entry differs between two listings, for the message.
fn differences(before: &BTreeMap<String, Entry>, after: &BTreeMap<String, Entry>) -> Vec<String> {
    let paths: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    paths.into_iter().filter(|p| before.get(*p) != after.get(*p)).cloned().collect()
}

/// A repository whose `.dat` files go through a clean filter that, as Git
/// LFS does, keeps the content in a store under the git directory it runs
/// for (here: appends it to one file) and stores a pointer in the blob.
fn repo_with_a_storing_filter() -> TestRepo {
    let repo = TestRepo::with(&[("util.py", "x = 1\n")]);
    let clean = r#"sh -c 'd="$(git rev-parse --git-dir)/lfs"; mkdir -p "$d"; cat >> "$d/stored"; echo pointer'"#;
    repo.git(&["config", "filter.store.clean", clean]);
    repo.git(&["config", "filter.store.smudge", "cat"]);
    repo.write(".gitattributes", "*.dat filter=store\n");
    repo.write("data.dat", "old\n");
    repo.write("src/lib/more.dat", "old\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "data"]);
    repo.git(&["tag", "v1"]);
    // What the filter stored for the commit is the user's; none of the run's.
    assert!(stored(&repo).contains("old"));
    repo
}

/// What the filter has stored for the repository.
fn stored(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.path().join(".git/lfs/stored")).unwrap()
}

/// Both files' new blobs are the filter's pointer again, so the new tree,
/// `src/` and `src/lib/` included, is one the repository already has: the
/// case where writing an object would touch (freshen) the repository's own.
const EDIT: &str = "data.dat\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n\n\
                    src/lib/more.dat\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n";

/// The check proves where it ran: the filter stored the new content in the
/// checked repository's own git directory, the blob is its pointer, and the
/// repository's tags are there for `git describe`.
const CHECK: &str = r#"test "$(git show :data.dat)" = pointer && grep -q new "$(git rev-parse --git-dir)/lfs/stored" && git describe --tags"#;

/// Apply [`EDIT`] with `args`, temporary files going to `tmp`.
fn run(repo: &TestRepo, tmp: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = repo.apply().args(args).args(["--json", "-"]).env("TMPDIR", tmp).write_stdin(EDIT).output().unwrap();
    (out.status.code().unwrap(), report_json(&out.stdout))
}

#[test]
fn a_dry_run_with_checks_leaves_dot_git_byte_for_byte() {
    let repo = repo_with_a_storing_filter();
    let tmp = tempfile::tempdir().unwrap();
    let git_dir = repo.path().join(".git");
    for (check, code, status) in [(CHECK, 0, "applied"), ("false", 3, "checks-failed")] {
        let before = listing(&git_dir);
        let (exit, report) = run(&repo, tmp.path(), &["--dry-run", "--check", check]);
        let after = listing(&git_dir);
        assert_eq!((exit, report["status"].as_str()), (code, Some(status)), "{report:#}");
        assert_eq!(differences(&before, &after), Vec::<String>::new(), "the dry run wrote under .git");
        // The scratch repository went with the run.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "left in the temporary directory");
        if code == 0 {
            assert_eq!(report["checks"][0]["output"], "v1", "{report:#}");
        }
    }
    assert_eq!(std::fs::read_to_string(repo.path().join("data.dat")).unwrap(), "old\n");
}

#[test]
fn checks_before_a_no_commit_write_leave_no_sandbox_behind() {
    let repo = repo_with_a_storing_filter();
    let tmp = tempfile::tempdir().unwrap();
    let objects = |repo: &TestRepo| repo.git(&["count-objects", "-v"]);
    let before = (objects(&repo), stored(&repo));
    let (exit, report) = run(&repo, tmp.path(), &["--no-commit", "--check", CHECK]);
    assert_eq!(exit, 0, "{report:#}");
    assert_eq!(report["checks"][0]["passed"], true, "{report:#}");
    assert_eq!(std::fs::read_to_string(repo.path().join("data.dat")).unwrap(), "new\n");
    let git_dir = repo.path().join(".git");
    for left in ["worktrees", "agent-apply/sandbox", "agent-apply/sandbox.lock"] {
        assert!(!git_dir.join(left).exists(), ".git/{left} is left behind");
    }
    assert_eq!((objects(&repo), stored(&repo)), before, "--no-commit's checks wrote objects or stored content");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "left in the temporary directory");
}
