//! Nothing the model wrote is silently dropped, misread, or refused for
//! nothing (issue #20): each item through the real binary.

use serde_json::Value;

use crate::common::report_json as json;
use crate::repo::TestRepo;

/// Apply `reply` with `args` in `repo`; the exit code and the JSON report.
fn run(repo: &TestRepo, args: &[&str], reply: &str) -> (i32, Value) {
    let out = repo.apply().args(args).arg("--json").write_stdin(reply.to_string()).output().unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

const APP: &str = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef main():\n    print(load('x'))\n";
const UTIL: &str = "def helper():\n    return 1\n";

const SEARCH_REPLACE: &str =
    "app.py\n```python\n<<<<<<< SEARCH\nimport os\n=======\nimport os\nimport sys\n>>>>>>> REPLACE\n```\n";
const DIFF: &str =
    "```diff\n--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,2 @@\n def helper():\n-    return 1\n+    return 2\n```\n";

#[test]
fn a_reply_mixing_formats_applies_every_part_in_its_own_format() {
    for reply in [format!("{SEARCH_REPLACE}\nAnd:\n\n{DIFF}"), format!("{DIFF}\nAnd:\n\n{SEARCH_REPLACE}")] {
        let repo = TestRepo::with(&[("app.py", APP), ("util.py", UTIL)]);
        let (code, report) = run(&repo, &[], &reply);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(report["status"], "applied");
        assert_eq!(report["edits"].as_array().unwrap().len(), 2, "{report:#}");
        assert_eq!(report["format"]["also"].as_array().unwrap().len(), 1, "{report:#}");
        assert!(repo.committed("app.py").unwrap().contains("import sys"));
        assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 2\n");
        // `parse` reads the same two edits.
        let out = repo.apply().args(["parse", "--json", "-"]).write_stdin(reply.clone()).output().unwrap();
        assert_eq!(json(&out.stdout)["edits"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn a_mixed_reply_is_all_or_nothing_and_unread_markers_are_named() {
    // The diff's hunk does not apply: the SEARCH/REPLACE part is not applied either.
    let broken_diff = DIFF.replace("-    return 1", "-    return 7");
    let repo = TestRepo::with(&[("app.py", APP), ("util.py", UTIL)]);
    let before = repo.state();
    let (code, report) = run(&repo, &["--format", "editblock"], &format!("{SEARCH_REPLACE}\n{broken_diff}"));
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["status"], "failed");
    assert_eq!(repo.state(), before);
    // Markers no format can read: refused, naming their reply lines.
    // A diff with headers but no hunk: no format reads an edit there.
    let stray = format!("{SEARCH_REPLACE}\nthen\n\n--- a/util.py\n+++ b/util.py\n");
    let (code, report) = run(&repo, &[], &stray);
    assert_eq!(code, 1, "{report:#}");
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("reply lines 13, 14 hold edit markers"), "{message}");
    assert!(!report["reflection"].as_str().unwrap().is_empty());
    assert_eq!(repo.state(), before);
}

#[test]
fn whole_refuses_a_snippet_and_other_formats_markers() {
    let body = "import os\nimport sys\n\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, text):\n    with open(path, 'w') as f:\n        f.write(text)\n\n\ndef main():\n    print(load(sys.argv[1]))\n    return 0\n";
    let snippet = "src/app.py\n```python\ndef main():\n    print(load(sys.argv[1]))\n```\n";
    let repo = TestRepo::with(&[("src/app.py", body)]);
    let before = repo.state();
    // `auto` does not read it as a whole file: the reply holds no edit (the
    // status and exit of any such reply), and the model is told why.
    let (code, report) = run(&repo, &[], snippet);
    assert_eq!((code, report["status"].as_str()), (1, Some("failed")), "{report:#}");
    assert_ne!(report["format"]["name"], "whole", "{report:#}");
    assert!(report["edits"].as_array().unwrap().is_empty(), "{report:#}");
    let reflection = report["reflection"].as_str().unwrap();
    assert!(reflection.contains("is a snippet of that file (2 of its 11 lines), not the whole file"), "{reflection}");
    assert!(reflection.contains("send the complete file under its path, or the change as SEARCH/REPLACE"));
    assert_eq!(repo.state(), before);
    let out = repo.apply().args(["parse", "--json", "-"]).write_stdin(snippet).output().unwrap();
    let parsed = json(&out.stdout);
    assert!(parsed["edits"].as_array().unwrap().is_empty() && parsed["format"]["name"] != "whole", "{parsed:#}");
    // A whole file beside it: the reply is whole files, and the snippet is refused as a fragment.
    let (code, report) = run(
        &repo,
        &[],
        &format!(
            "{snippet}
src/new.py
```python
print(1)
```
"
        ),
    );
    assert_eq!((code, report["format"]["name"].as_str()), (1, Some("whole")), "{report:#}");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("fragment"), "{report:#}");
    assert_eq!(repo.state(), before);
    // Naming the format says the file really shrinks.
    let (code, report) = run(&repo, &["--format", "whole"], snippet);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(repo.committed("src/app.py").unwrap(), "def main():\n    print(load(sys.argv[1]))\n");
    // Markers of another format are never written, even when named.
    let (code, report) = run(&repo, &["--format", "whole"], &SEARCH_REPLACE.replace("app.py", "src/app.py"));
    assert_eq!(code, 1, "{report:#}");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("editblock edit marker"), "{report:#}");
}

#[test]
fn placeholders_are_refused_and_placeholder_looking_content_is_not() {
    let handlers: String = (0..30).map(|i| format!("def handler_{i}(event):\n    return {i}\n\n\n")).collect();
    let repo = TestRepo::with(&[
        ("handlers.py", &handlers),
        ("store.pyi", "class Store:\n    def get(self) -> bytes:\n        \"\"\"Read.\"\"\"\n        ...\n"),
    ]);
    for placeholder in [
        "# … (unchanged)",
        "# [snip]",
        "# remaining functions omitted for brevity",
        "# <rest of code>",
        "# Keep everything else the same",
    ] {
        let reply = format!("handlers.py\n```python\ndef handler_0(event):\n    return 100\n\n\n{placeholder}\n```\n");
        let (code, report) = run(&repo, &[], &reply);
        assert_eq!(code, 1, "{placeholder}: {report:#}");
        assert!(report["edits"][0]["message"].as_str().unwrap().contains("leave code out"), "{report:#}");
    }
    let genuine = format!(
        "{handlers}# Same as above, but for batches.\ndef handler_all(events):\n    return [handler_0(e) for e in events]\n"
    );
    let (code, report) = run(&repo, &[], &format!("handlers.py\n```python\n{genuine}```\n"));
    assert_eq!(code, 0, "{report:#}");
    let stub = "store.pyi\n```python\n<<<<<<< SEARCH\n        ...\n=======\n        ...\n\n    def put(self, value: bytes) -> None:\n        \"\"\"Write.\"\"\"\n        ...\n>>>>>>> REPLACE\n```\n";
    let (code, report) = run(&repo, &[], stub);
    assert_eq!(code, 0, "{report:#}");
    assert!(repo.committed("store.pyi").unwrap().contains("def put"));
}

#[test]
fn an_explicit_format_that_finds_no_edit_names_the_format_that_fits() {
    let repo = TestRepo::with(&[("util.py", UTIL)]);
    let before = repo.state();
    // aider's `diff` is SEARCH/REPLACE; people holding a unified diff type it.
    let (code, report) = run(&repo, &["--format", "diff"], DIFF);
    assert_eq!(code, 2, "{report:#}");
    assert!(report["error"]["message"].as_str().unwrap().contains("format 'udiff' reads edits"), "{report:#}");
    assert!(!report["reflection"].as_str().unwrap().is_empty());
    assert_eq!(repo.state(), before);
    // A reply with no edit at all: one status and exit code, however the format was chosen.
    let prose = "I looked at util.py and it seems fine as it is.\n";
    for args in [&[][..], &["--format", "editblock"], &["--format", "udiff"], &["--format", "whole"]] {
        let (code, report) = run(&repo, args, prose);
        assert_eq!((code, report["status"].as_str()), (1, Some("failed")), "{args:?}: {report:#}");
        assert!(!report["reflection"].as_str().unwrap().is_empty(), "{args:?}");
    }
    assert_eq!(repo.state(), before);
}

#[test]
fn a_retried_reply_is_unchanged_and_a_mix_is_reported_edit_by_edit() {
    let repo = TestRepo::with(&[("app.py", APP), ("util.py", UTIL)]);
    let (code, _) = run(&repo, &[], SEARCH_REPLACE);
    assert_eq!(code, 0);
    let head = repo.head();
    let (code, report) = run(&repo, &[], SEARCH_REPLACE);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["status"], "unchanged");
    assert_eq!(report["edits"][0]["status"], "already-applied");
    assert!(!report["reflection"].as_str().unwrap().is_empty());
    assert_eq!(repo.head(), head);
    // One edit already there, one new: the new one is committed.
    let util = "util.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    return 3\n>>>>>>> REPLACE\n```\n";
    let (code, report) = run(&repo, &[], &format!("{SEARCH_REPLACE}\n{util}"));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["status"], "applied");
    let statuses: Vec<&str> =
        report["edits"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["already-applied", "applied"]);
    assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 3\n");
}

#[test]
fn a_cut_off_reply_is_refused_whole_even_with_partial() {
    let repo = TestRepo::with(&[("app.py", APP), ("util.py", UTIL)]);
    let before = repo.state();
    let cut = format!("{SEARCH_REPLACE}\nutil.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    retu");
    for args in [&[][..], &["--partial"]] {
        let (code, report) = run(&repo, args, &cut);
        assert_eq!(code, 1, "{report:#}");
        assert_eq!(report["status"], "failed");
        let reflection = report["reflection"].as_str().unwrap();
        assert!(reflection.contains("cut off: inside block 2 for util.py (reply line 13)"), "{reflection}");
        assert!(reflection.contains("from that edit on"), "{reflection}");
        assert_eq!(repo.state(), before);
    }
}

#[test]
fn every_cut_off_corpus_reply_is_refused_as_cut_off_through_the_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut cases = 0;
    for format in ["apply-patch", "compact", "editblock", "hashline", "tool-calls", "udiff", "whole"] {
        let mut dirs: Vec<_> = std::fs::read_dir(root.join(format)).unwrap().map(|e| e.unwrap().path()).collect();
        dirs.retain(|d| d.file_name().unwrap().to_string_lossy().starts_with("truncated"));
        dirs.sort();
        // Both cut kinds, per format (apply-patch names its line-break one `truncated-patch`).
        let kind = |cut: &str| dirs.iter().any(|d| d.file_name().unwrap().to_string_lossy().contains(cut));
        assert!(kind("mid-line") && (kind("line-break") || kind("truncated-patch")), "{format}: {dirs:?}");
        for case in dirs {
            let input = crate::corpus::read_tree(&case.join("input"));
            let files: Vec<(&str, &str)> =
                input.iter().map(|(p, c)| (p.as_str(), std::str::from_utf8(c).unwrap())).collect();
            let repo = TestRepo::with(&files);
            let before = repo.state();
            let reply = std::fs::read_dir(&case)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("reply."))
                .unwrap();
            let reply = std::fs::read_to_string(reply).unwrap();
            for args in [&["--format", format, "--partial"][..], &[]] {
                let (code, report) = run(&repo, args, &reply);
                let reflection = report["reflection"].as_str().unwrap_or_default();
                assert!(
                    code == 1 && reflection.contains("cut off"),
                    "{} {args:?}: exit {code}: {report:#}",
                    case.display()
                );
                assert_eq!(repo.state(), before, "{}", case.display());
            }
            cases += 1;
        }
    }
    assert!(cases >= 25, "only {cases} cut-off cases");
}

#[test]
fn a_slightly_wrong_path_applies_to_the_one_file_it_means_and_says_so() {
    let sample = "hello\nthis is a sample\nof three lines\n";
    let repo = TestRepo::with(&[("sample.txt", sample), ("src/app.py", APP), ("tests/app.py", "x = 1\n")]);
    let rewrite = "path/to/sample.txt\n```\nhello, world\nthis is a sample\nof three lines\n```\n";
    let (code, report) = run(&repo, &[], rewrite);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(repo.committed("sample.txt").unwrap(), "hello, world\nthis is a sample\nof three lines\n");
    assert!(repo.committed("path/to/sample.txt").is_none());
    assert!(report["diagnostics"][0]["message"].as_str().unwrap().contains("applied to sample.txt"), "{report:#}");
    // Two files it could mean: a did-you-mean, and the new file is what was asked for.
    let (code, report) = run(&repo, &[], "app.py\n```python\nprint(1)\n```\n");
    assert_eq!(code, 0, "{report:#}");
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("did you mean src/app.py or tests/app.py"), "{message}");
    // An extensionless file named clearly, and a usage example after a whole file.
    let repo = TestRepo::with(&[("Taskfile", "run: make\n"), ("util.py", UTIL)]);
    let reply = "`Taskfile`:\n```\nrun: make all\n```\n\nThen run it:\n\n```python\nprint(helper())\n```\n";
    let (code, report) = run(&repo, &["--format", "whole"], reply);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(repo.committed("Taskfile").unwrap(), "run: make all\n");
    assert_eq!(report["diagnostics"][0]["severity"], "warning", "{report:#}");
}

#[test]
fn a_rewrite_of_a_file_of_a_line_or_two_is_never_a_stray_new_file() {
    let files = [("sample.txt", "hello\n"), ("config/version.txt", "version = 1\n"), ("notes.txt", "todo\n")];
    let repo = TestRepo::with(&files);
    // It shares the file's text: applied to that file, said so.
    for (reply, tracked, content) in [
        ("path/to/sample.txt\n```\nhello, world\n```\n", "sample.txt", "hello, world\n"),
        ("version.txt\n```\nversion = 2\n```\n", "config/version.txt", "version = 2\n"),
    ] {
        let (code, report) = run(&repo, &[], reply);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(
            (report["files"][0]["path"].as_str(), report["files"][0]["action"].as_str()),
            (Some(tracked), Some("modified"))
        );
        assert_eq!(repo.committed(tracked).unwrap(), content);
        let note = report["diagnostics"][0]["message"].as_str().unwrap();
        assert!(note.contains(&format!("applied to {tracked}")), "{note}");
    }
    assert!(repo.committed("path/to/sample.txt").is_none() && repo.committed("version.txt").is_none());
    // Too little of it to tell a rewrite from a new file: refused with a did-you-mean.
    let before = repo.state();
    let (code, report) = run(&repo, &[], "docs/notes.txt\n```\nfn main() {}\n```\n");
    assert_eq!((code, report["edits"][0]["kind"].as_str()), (1, Some("ambiguous")), "{report:#}");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("did you mean notes.txt"), "{report:#}");
    assert!(report["reflection"].as_str().unwrap().contains("notes.txt"), "{report:#}");
    assert_eq!(repo.state(), before);
    // Sent as a new file (an Add File never overwrites): created beside it, said so.
    let add = "*** Begin Patch\n*** Add File: docs/notes.txt\n+fn main() {}\n*** End Patch\n";
    let (code, report) = run(&repo, &[], add);
    assert_eq!((code, report["files"][0]["action"].as_str()), (0, Some("created")), "{report:#}");
    assert!(report["diagnostics"][0]["message"].as_str().unwrap().contains("created as a new file"), "{report:#}");
    assert_eq!(repo.committed("notes.txt").unwrap(), "todo\n");
}

#[test]
fn a_new_file_named_like_a_tracked_one_is_created_and_an_edit_of_it_is_redirected() {
    let utils =
        "import os\n\n\ndef make_fixture():\n    return {'a': 1}\n\n\ndef cleanup(path):\n    os.remove(path)\n";
    let readme = "# Project\n\nWhat it does.\nHow to build it.\n";
    let repo = TestRepo::with(&[("pkg/test_utils.py", utils), ("README.md", readme)]);
    // New content under a name a tracked file ends with: a new file, said so.
    let new_helper = "test_utils.py\n```python\ndef assert_close(a, b):\n    assert abs(a - b) < 1e-9\n```\n";
    let docs = "docs/README.md\n```markdown\n# Docs\n\nHow to build the docs.\n```\n";
    for (reply, created, tracked) in
        [(new_helper, "test_utils.py", "pkg/test_utils.py"), (docs, "docs/README.md", "README.md")]
    {
        let (code, report) = run(&repo, &[], reply);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(report["files"][0]["path"], created, "{report:#}");
        assert_eq!(report["files"][0]["action"], "created", "{report:#}");
        let note = report["diagnostics"][0]["message"].as_str().unwrap();
        assert!(note.contains(&format!("created as a new file beside the tracked {tracked}")), "{note}");
    }
    assert_eq!(
        (repo.committed("pkg/test_utils.py").unwrap(), repo.committed("README.md").unwrap()),
        (utils.into(), readme.into())
    );
    // Text found only in the tracked file, or a rewrite keeping most of it: that file, said so.
    let repo = TestRepo::with(&[("pkg/test_utils.py", utils), ("README.md", readme)]);
    let search = "test_utils.py\n```python\n<<<<<<< SEARCH\n    os.remove(path)\n=======\n    os.unlink(path)\n>>>>>>> REPLACE\n```\n";
    let rewrite =
        format!("docs/README.md\n```markdown\n{}```\n", readme.replace("What it does.", "What it does, briefly."));
    for (reply, tracked) in [(search.to_string(), "pkg/test_utils.py"), (rewrite, "README.md")] {
        let (code, report) = run(&repo, &[], &reply);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(
            (report["files"][0]["path"].as_str(), report["files"][0]["action"].as_str()),
            (Some(tracked), Some("modified")),
            "{report:#}"
        );
        let note = report["diagnostics"][0]["message"].as_str().unwrap();
        assert!(note.contains(&format!("its edit was applied to {tracked}")), "{note}");
    }
    assert!(repo.committed("pkg/test_utils.py").unwrap().contains("os.unlink"));
    assert!(repo.committed("README.md").unwrap().contains("briefly"));
    assert!(repo.committed("test_utils.py").is_none() && repo.committed("docs/README.md").is_none());
    // A file moved to the path its own name ends with: moved, not sent back onto itself.
    let moved = "*** Begin Patch\n*** Update File: pkg/test_utils.py\n*** Move to: test_utils.py\n*** End Patch\n";
    let (code, report) = run(&repo, &[], moved);
    assert_eq!((code, report["files"][0]["action"].as_str()), (0, Some("renamed")), "{report:#}");
    assert!(report["diagnostics"].as_array().unwrap().is_empty(), "{report:#}");
    assert!(repo.committed("test_utils.py").unwrap().contains("os.unlink"));
}

#[test]
fn the_report_says_how_each_edit_was_placed() {
    let repo = TestRepo::with(&[("app.py", APP), ("util.py", UTIL)]);
    // The SEARCH text has stray trailing spaces: placed ignoring trailing whitespace.
    let reply = "util.py\n```python\n<<<<<<< SEARCH\ndef helper():  \n    return 1\n=======\ndef helper():  \n    return 2  \n>>>>>>> REPLACE\n```\n";
    let (code, report) = run(&repo, &[], reply);
    assert_eq!(code, 0, "{report:#}");
    let matched = &report["edits"][0]["matched"];
    assert_eq!(matched["level"], "trailing-whitespace", "{report:#}");
    assert_eq!(matched["candidates"][0], serde_json::json!({"level": "exact", "count": 0}));
    assert_eq!(matched["candidates"][1], serde_json::json!({"level": "trailing-whitespace", "count": 1}));
    // Item 8: the stray trailing whitespace of the REPLACE lines is not written.
    assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 2\n");
    // A hunk placed away from its header's line is reported as relocated.
    let diff = "```diff\n--- a/app.py\n+++ b/app.py\n@@ -12,2 +12,2 @@\n def main():\n-    print(load('x'))\n+    print(load('y'))\n```\n";
    let (code, report) = run(&repo, &[], diff);
    assert_eq!(code, 0, "{report:#}");
    let matched = &report["edits"][0]["matched"];
    assert_eq!((matched["relocated"].as_bool(), matched["stated_line"].as_u64()), (Some(true), Some(12)), "{report:#}");
}

#[test]
fn a_hashline_anchor_that_moved_follows_its_unique_hash() {
    let big: String = (1..=70).map(|i| format!("line {i}\n")).collect();
    let input = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/hashline/relocation-follows-each-anchor/input/big.py"
    ))
    .unwrap();
    let reply = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/hashline/relocation-follows-each-anchor/reply.md"
    ))
    .unwrap();
    let repo = TestRepo::with(&[("big.py", &input), ("other.txt", &big)]);
    let (code, report) = run(&repo, &["--format", "hashline"], &reply);
    assert_eq!(code, 0, "{report:#}");
    let matched = &report["edits"][0]["matched"];
    assert_eq!((matched["level"].as_str(), matched["stated_line"].as_u64()), (Some("anchor"), Some(60)), "{report:#}");
    assert!(report["edits"][0]["message"].as_str().unwrap().contains("relocated from line 60 to line 61"));
}

#[test]
fn checks_run_under_no_commit_and_dry_run_against_the_new_tree() {
    let repo = TestRepo::with(&[("util.py", UTIL)]);
    // The checked tree's objects go to a private object directory: nothing
    // of the repository changes, its object database included.
    let untouched = |repo: &TestRepo| (repo.state(), repo.git(&["fsck", "--unreachable", "--no-reflogs"]));
    let before = untouched(&repo);
    assert!(before.1.is_empty(), "{}", before.1);
    let check = "grep -q 'return 2' util.py";
    // --dry-run: a "would it pass" answer, nothing written.
    let (code, report) = run(&repo, &["--dry-run", "--check", check], DIFF);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["checks"][0]["passed"], true, "{report:#}");
    assert_eq!(untouched(&repo), before);
    let (code, report) = run(&repo, &["--dry-run", "--check", "false"], DIFF);
    assert_eq!((code, report["status"].as_str()), (3, Some("checks-failed")), "{report:#}");
    assert_eq!(untouched(&repo), before);
    // --no-commit: a failing check leaves the working tree alone.
    let (code, _) = run(&repo, &["--no-commit", "--check", "false"], DIFF);
    assert_eq!(code, 3);
    assert_eq!(untouched(&repo), before);
    let (code, report) = run(&repo, &["--no-commit", "--check", check], DIFF);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["checks"].as_array().unwrap().len(), 1);
    assert_eq!(String::from_utf8(repo.read("util.py").unwrap()).unwrap(), "def helper():\n    return 2\n");
    assert_eq!(repo.head(), before.0.head.trim());
    assert_eq!(repo.state().objects, before.0.objects, "--no-commit's checks wrote objects");
}

#[test]
fn checks_without_a_commit_leave_the_repository_whole() {
    // An unborn branch: the checks' base is an empty commit only the trial holds.
    let repo = TestRepo { dir: tempfile::tempdir().unwrap() };
    repo.git(&["init", "-q", "-b", "main"]);
    let (code, report) = run(
        &repo,
        &["--dry-run", "--check", "test -f new.py && git status --short"],
        "new.py\n```python\nprint(1)\n```\n",
    );
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["checks"][0]["output"], "A  new.py", "{report:#}");
    assert_eq!(repo.git(&["count-objects", "-v"]).lines().next(), Some("count: 0"));
    // The sandbox keeps no pointer to an object that is gone: git fsck is clean.
    let repo = TestRepo::with(&[("util.py", UTIL)]);
    let (code, report) = run(&repo, &["--dry-run", "--check", "git diff --cached --stat"], DIFF);
    assert_eq!(code, 0, "{report:#}");
    assert!(report["checks"][0]["output"].as_str().unwrap().contains("util.py | 2 +-"), "{report:#}");
    repo.git(&["fsck", "--strict"]);
    // A commit's checks still run in the same sandbox afterwards.
    let (code, report) = run(&repo, &["--check", "grep -q 'return 2' util.py"], DIFF);
    assert_eq!(code, 0, "{report:#}");
    repo.git(&["fsck", "--strict"]);
}
