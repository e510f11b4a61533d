//! The report says how each edit was placed (issue #20, item 9) for V4A
//! patches and tool calls too: which level of the matching ladder placed
//! it and how many places each level found, so a harness can audit a
//! match that bent.

use serde_json::{Value, json};

use crate::common::report_json as json_of;
use crate::repo::TestRepo;

const UTIL: &str = "def helper():\n    return 1\n";
/// Trailing spaces after its `def` line.
const LOAD: &str = "def load():   \n    return 0\n";
/// A method: its body is indented twice.
const CLASS: &str = "class A:\n    def f(self):\n        return 1\n";

fn repo() -> TestRepo {
    TestRepo::with(&[("util.py", UTIL), ("load.py", LOAD), ("a.py", CLASS), ("twice.py", "x = 1\ny = 1\n")])
}

/// The `matched` object of the only edit, once `reply` applied in `format`.
fn matched(repo: &TestRepo, format: &str, reply: &str) -> Value {
    let out = repo.apply().args(["--format", format, "--json", "-"]).write_stdin(reply.to_string()).output().unwrap();
    let report = json_of(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["edits"].as_array().unwrap().len(), 1, "{report:#}");
    report["edits"][0]["matched"].clone()
}

/// `matched` as the report prints it for a ladder level and its counts.
fn ladder(level: &str, counts: &[(&str, u32)]) -> Value {
    let candidates: Vec<Value> = counts.iter().map(|(l, c)| json!({"level": l, "count": c})).collect();
    json!({"level": level, "relocated": false, "stated_line": null, "retried": false, "candidates": candidates})
}

fn patch(path: &str, hunk: &str) -> String {
    format!("*** Begin Patch\n*** Update File: {path}\n@@\n{hunk}*** End Patch\n")
}

#[test]
fn an_apply_patch_hunk_reports_its_ladder_level_and_candidates() {
    let repo = repo();
    let exact = patch("util.py", " def helper():\n-    return 1\n+    return 2\n");
    assert_eq!(matched(&repo, "apply-patch", &exact), ladder("exact", &[("exact", 1)]));
    assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 2\n");
    // The file has trailing spaces the patch's context lacks.
    let trailing = patch("load.py", " def load():\n-    return 0\n+    return 5\n");
    let want = ladder("trailing-whitespace", &[("exact", 0), ("trailing-whitespace", 1)]);
    assert_eq!(matched(&repo, "apply-patch", &trailing), want);
    assert_eq!(repo.committed("load.py").unwrap(), "def load():   \n    return 5\n");
    // Indented less than the file: placed ignoring indentation, re-indented.
    let shallow = patch("a.py", "-    return 1\n+    return 2\n");
    let want = ladder("leading-whitespace", &[("exact", 0), ("trailing-whitespace", 0), ("leading-whitespace", 1)]);
    assert_eq!(matched(&repo, "apply-patch", &shallow), want);
    assert_eq!(repo.committed("a.py").unwrap(), CLASS.replace("return 1", "return 2"));
}

#[test]
fn a_tool_call_reports_its_ladder_level_and_candidates() {
    let repo = repo();
    let call = |path: &str, old: &str, new: &str| {
        json!({"type": "tool_use", "id": "t1", "name": "Edit",
               "input": {"file_path": path, "old_string": old, "new_string": new}})
        .to_string()
    };
    let exact = call("util.py", "    return 1", "    return 2");
    assert_eq!(matched(&repo, "tool-calls", &exact), ladder("exact", &[("exact", 1)]));
    assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 2\n");
    // Indented deeper than the file: placed ignoring indentation, re-indented.
    let deep = call("util.py", "        return 2\n", "        return 3\n");
    let want = ladder("leading-whitespace", &[("exact", 0), ("trailing-whitespace", 0), ("leading-whitespace", 1)]);
    assert_eq!(matched(&repo, "tool-calls", &deep), want);
    assert_eq!(repo.committed("util.py").unwrap(), "def helper():\n    return 3\n");
    // Stray trailing spaces in old_string: placed ignoring them, none written.
    let trailing = call("a.py", "        return 1   \n", "        return 9   \n");
    let want = ladder("trailing-whitespace", &[("exact", 0), ("trailing-whitespace", 1)]);
    assert_eq!(matched(&repo, "tool-calls", &trailing), want);
    assert_eq!(repo.committed("a.py").unwrap(), CLASS.replace("return 1", "return 9"));
    // replace_all: the exact level's count is every place it replaced.
    let all = json!({"file_path": "twice.py", "old_string": " = 1", "new_string": " = 2", "replace_all": true});
    assert_eq!(matched(&repo, "tool-calls", &all.to_string()), ladder("exact", &[("exact", 2)]));
    assert_eq!(repo.committed("twice.py").unwrap(), "x = 2\ny = 2\n");
}
