//! Unit tests: the grammar, the envelopes and placement, through the contract.

use agent_apply_sdk::testing::{Ran, Tree, run};

use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::File;

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

#[test]
fn fuzz_regressions_replay_natively() {
    use agent_apply_sdk::fuzzing::{apply_bytes, parse_bytes, replay};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let parsed = replay(&ApplyPatch, &dir.join("parse_apply_patch"), parse_bytes).unwrap();
    let applied = replay(&ApplyPatch, &dir.join("apply_apply_patch"), apply_bytes).unwrap();
    assert!(parsed + applied >= 5, "{parsed} + {applied} regressions");
}

proptest::proptest! {
    #[test]
    fn any_mix_of_patch_pieces_parses_and_applies_without_panicking(
        pieces in proptest::collection::vec(proptest::sample::select(&[
            "*** Begin Patch\n", "*** End Patch\n", "*** Update File: f\n", "*** Add File: f\n",
            "*** Delete File: f\n", "*** Move to: g\n", "@@\n", "@@ a\n", "@@ -1,2 +1,2 @@\n", " a\n", "-a\n",
            "+b\n", "\n", "\r\n", "*** End of File\n", "```\n", "apply_patch <<'EOF'\n", "EOF\n", "cd .. && ",
            "{\"input\": \"", "\\n", "\"}", "prose\n", "    a\n", "\u{201c}a\u{201d}\n",
        ][..]), 0..24),
        content in "(a|b| a|\t|\n|\r\n){0,12}",
    ) {
        let reply: String = pieces.concat();
        let data = agent_apply_sdk::fuzzing::join_apply_input(&content, &reply);
        proptest::prop_assert!(agent_apply_sdk::fuzzing::parse_bytes(&ApplyPatch, reply.as_bytes()).is_ok());
        proptest::prop_assert!(agent_apply_sdk::fuzzing::apply_bytes(&ApplyPatch, &data).is_ok());
    }
}

#[test]
fn blank_lines_without_plus_inside_an_added_file_are_kept() {
    let reply = "*** Begin Patch\n*** Add File: a.md\n+# A\n\n\n+text\n\n*** End Patch\n";
    assert_eq!(applied(&[], reply)["a.md"], "# A\n\n\ntext\n");
}

#[test]
fn added_lines_only_go_right_after_the_scope_line() {
    let reply = "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n+    x = 0\n*** End Patch\n";
    let after = applied(&[("m.py", FILE)], reply);
    assert!(after["m.py"].contains("class B:\n    x = 0\n    def f(self):"), "{}", after["m.py"]);
}

#[test]
fn sections_without_begin_patch_and_heredocs_without_end_patch() {
    let bare = "*** Update File: m.py\n@@ class A:\n-    def f(self):\n+    def g(self):\n*** End Patch\n";
    assert!(applied(&[("m.py", FILE)], bare)["m.py"].starts_with("class A:\n    def g(self):"));
    let heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: m.py\nEOF\n";
    assert!(!applied(&[("m.py", FILE)], heredoc).contains_key("m.py"));
}

#[test]
fn fenced_json_tool_calls_and_shell_commands() {
    use agent_apply_sdk::Plugin;
    let reply = "```json\n{\"patch\": \"*** Begin Patch\\n*** Delete File: m.py\\n*** End Patch\"}\n```\n\n```bash\npytest -q\n```\n";
    let parsed = ApplyPatch.parse(reply, &[]);
    assert_eq!(parsed.edits.len(), 1, "{:?}", parsed.diagnostics);
    assert_eq!(parsed.edits[0].summary, "delete m.py");
    assert_eq!(parsed.commands[0].command, "pytest -q");
}

#[test]
fn a_stray_line_before_more_hunks_is_not_taken_for_prose() {
    let reply = "*** Begin Patch\n*** Update File: m.py\n@@ class A:\n-    def f(self):\n+    def g(self):\noops\n@@ class B:\n-    def f(self):\n+    def h(self):\n";
    assert!(failed(&[("m.py", FILE)], reply).contains("is not part of a V4A patch"));
}

#[test]
fn the_prompt_example_applies_to_its_files() {
    use agent_apply_sdk::Plugin;
    let info = ApplyPatch.info();
    let files: Vec<(&str, &str)> = info.example_files.iter().map(|f| (f.path.as_str(), f.content.as_str())).collect();
    let after = applied(&files, &info.example_reply);
    assert!(after["src/cart.py"].contains("            if item.active:\n"));
    assert!(after.contains_key("tests/test_cart.py"));
}

/// How each hunk was placed, as udiff and SEARCH/REPLACE report it.
fn placed(files: &[(&str, &str)], reply: &str) -> (String, Vec<(String, u32)>) {
    let parsed = Plugin::parse(&ApplyPatch, reply, &[]);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&ApplyPatch, files, parsed.edits, &[]).unwrap();
    let matched = out.outcomes[0].matched.clone().expect("matched");
    (matched.level, matched.candidates.into_iter().map(|c| (c.level, c.count)).collect())
}

#[test]
fn outcomes_say_which_level_placed_the_hunks_and_what_each_level_found() {
    let exact = "*** Begin Patch\n*** Update File: m.py\n@@\n def g():\n-    return 1\n+    return 2\n*** End Patch\n";
    let file = [("m.py", "def g():\n    return 1\n")];
    assert_eq!(placed(&file, exact), ("exact".into(), vec![("exact".into(), 1)]));
    // The file's line has trailing spaces the patch lacks.
    let loose = [("m.py", "def g():   \n    return 1\n")];
    let counts = vec![("exact".into(), 0), ("trailing-whitespace".into(), 1)];
    assert_eq!(placed(&loose, exact), ("trailing-whitespace".into(), counts));
    // Of two hunks, the one that bent is reported.
    let two = "*** Begin Patch\n*** Update File: m.py\n@@\n-a = 1\n+a = 2\n@@\n-        b = 1\n+        b = 2\n*** End Patch\n";
    let (level, _) = placed(&[("m.py", "a = 1\nb = 1\n")], two);
    assert_eq!(level, "leading-whitespace");
    // Added lines only: placed by the scope line or at the end of the file.
    let add = "*** Begin Patch\n*** Update File: m.py\n@@ def g():\n+    \"\"\"Doc.\"\"\"\n*** End Patch\n";
    assert_eq!(placed(&file, add).0, "scope-line");
    let added = "*** Begin Patch\n*** Add File: n.py\n+x = 1\n*** End Patch\n";
    assert_eq!(placed(&[], added).0, "whole-file");
    let deleted = "*** Begin Patch\n*** Delete File: m.py\n*** End Patch\n";
    assert_eq!(placed(&file, deleted).0, "whole-file");
}
