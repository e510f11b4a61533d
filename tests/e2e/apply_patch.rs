//! The `apply-patch` format end to end: the real binary, the real component,
//! a real repository and its transaction.

use crate::repo::TestRepo;

const APP: &str = "def total(items):\n    return sum(items)\n";

#[test]
fn a_later_file_that_fails_leaves_every_file_and_the_branch_as_they_were() {
    let repo = TestRepo::with(&[("app.py", APP), ("README.md", "# App\n")]);
    let before = repo.state();
    // The first section applies and the second moves a file, but the
    // second's hunk is not in the file: nothing at all may change.
    let reply = "*** Begin Patch\n*** Update File: README.md\n@@\n-# App\n+# The app\n*** Update File: app.py\n\
                 *** Move to: lib/app.py\n@@\n-    return sum(items) + 0\n+    return 0\n*** End Patch\n";
    let out = repo.apply().args(["--format", "apply-patch", "-"]).write_stdin(reply).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(repo.state(), before);
}

#[test]
fn a_heredoc_after_cd_commits_moves_and_adds_under_that_directory() {
    let repo = TestRepo::with(&[("web/app.py", APP)]);
    let reply = "```bash\ncd web && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: app.py\n*** Move to: main.py\n\
                 @@ def total(items):\n-    return sum(items)\n+    return sum(items, 0)\n*** Add File: util.py\n+X = 1\n\
                 *** End Patch\nEOF\n```\n";
    let out = repo.apply().args(["-"]).write_stdin(reply).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(repo.committed("web/main.py").as_deref(), Some("def total(items):\n    return sum(items, 0)\n"));
    assert_eq!(repo.committed("web/app.py"), None);
    assert_eq!(repo.committed("web/util.py").as_deref(), Some("X = 1\n"));
    assert_eq!(repo.status(), "");
}
