//! Unit tests: the grammar, the envelopes and placement, through the contract.

use agent_apply_sdk::testing::{Ran, Tree, run};

use crate::ApplyPatch;

fn tree(files: &[(&str, &str)]) -> Tree {
    files.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
}

fn apply(files: &[(&str, &str)], reply: &str) -> Ran {
    run(&ApplyPatch, &tree(files), reply, &[], &[]).expect("contract")
}

fn applied(files: &[(&str, &str)], reply: &str) -> Tree {
    match apply(files, reply) {
        Ran::Applied(after) => after,
        Ran::Failed(failures) => panic!("failed: {failures:#?}"),
    }
}

fn failed(files: &[(&str, &str)], reply: &str) -> String {
    match apply(files, reply) {
        Ran::Applied(after) => panic!("applied: {after:#?}"),
        Ran::Failed(failures) => failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("\n"),
    }
}

const FILE: &str = "class A:\n    def f(self):\n        return 1\n\n\nclass B:\n    def f(self):\n        return 1\n";

#[test]
fn nested_scopes_pick_the_block() {
    let reply = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n@@     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n";
    let after = applied(&[("m.py", FILE)], reply);
    assert_eq!(
        after["m.py"],
        FILE.replace(
            "        return 1\n\n\nclass B:\n    def f(self):\n        return 1\n",
            "        return 1\n\n\nclass B:\n    def f(self):\n        return 2\n"
        )
    );
}

#[test]
fn ambiguous_hunk_without_scope_fails() {
    let reply = "*** Begin Patch\n*** Update File: m.py\n@@\n     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n";
    let why = failed(&[("m.py", FILE)], reply);
    assert!(why.contains("ambiguous") && why.contains("2 places"), "{why}");
}

#[test]
fn cut_off_patch_is_refused_and_prose_ends_one() {
    let cut = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n-    def f(self):\n";
    assert!(failed(&[("m.py", FILE)], cut).contains("cut off"));
    let prose = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def f(self):\n-        return 1\n+        return 3\n\nThat's all.\n";
    assert!(applied(&[("m.py", FILE)], prose)["m.py"].ends_with("return 3\n"));
}
