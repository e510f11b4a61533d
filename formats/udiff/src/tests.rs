use super::*;
use agent_apply_sdk::Plugin;
use proptest::prelude::*;

fn parse(reply: &str) -> ParseOutput {
    Plugin::parse(&UnifiedDiff, reply, &[])
}

fn strict() -> Vec<OptionValue> {
    vec![OptionValue { key: "strict".into(), value: "true".into() }]
}

/// Apply a reply to files; `Ok(changes)` or `Err(messages)`.
fn run(reply: &str, files: Vec<File>, options: &[OptionValue]) -> Result<Vec<Change>, String> {
    let parsed = Plugin::parse(&UnifiedDiff, reply, options);
    let errors: Vec<&str> =
        parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let out = Plugin::apply(&UnifiedDiff, files, parsed.edits.clone(), options)?;
    let failed: Vec<String> = out
        .outcomes
        .iter()
        .filter(|o| o.status == EditStatus::Failed)
        .map(|o| format!("{}: {}", o.kind.unwrap().as_str(), o.message))
        .collect();
    if failed.is_empty() { Ok(out.changes) } else { Err(failed.join("\n")) }
}

fn written(changes: &[Change], path: &str) -> String {
    changes
        .iter()
        .find_map(|c| match c {
            Change::Write(f) if f.path == path => Some(f.content.clone()),
            Change::Rename(r) if r.to == path => Some(r.content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not written: {changes:?}"))
}

#[test]
fn header_paths() {
    assert_eq!(parse::header_path("a/src/x.py").as_deref(), Some("a/src/x.py"));
    assert_eq!(parse::header_path("x.py\t2024-01-01 10:00:00 +0000").as_deref(), Some("x.py"));
    assert_eq!(parse::header_path("x.py 2024-01-01 10:00:00.000 +0000").as_deref(), Some("x.py"));
    assert_eq!(parse::header_path("x.py\tMon Jan  1 10:00:00 2024").as_deref(), Some("x.py"));
    assert_eq!(parse::header_path("\"a/sp ace.txt\"").as_deref(), Some("a/sp ace.txt"));
    assert_eq!(parse::header_path("/dev/null"), None);
    assert_eq!(parse::header_path("my file.txt").as_deref(), Some("my file.txt"));
}

#[test]
fn hunk_header_numbers() {
    assert_eq!(parse::hunk_numbers("@@ -1,3 +1,4 @@ fn x()"), Some((1, Some(3), 1, Some(4))));
    assert_eq!(parse::hunk_numbers("@@ -7 +7 @@"), Some((7, None, 7, None)));
    assert_eq!(parse::hunk_numbers("@@ ... @@"), None);
    assert_eq!(parse::hunk_numbers("@@ @@"), None);
    assert_eq!(parse::hunk_numbers("@@ -x,1 +1 @@"), None);
}

#[test]
fn parses_git_rename_and_modes() {
    let reply = "diff --git a/old.rs b/new.rs\nsimilarity index 90%\nrename from old.rs\nrename to new.rs\n";
    let parsed = parse(reply);
    assert_eq!(parsed.edits.len(), 1, "{:?}", parsed.diagnostics);
    assert_eq!(parsed.edits[0].path, "old.rs");
    assert_eq!(parsed.edits[0].related_paths, ["new.rs"]);
    let changes = run(reply, vec![File::new("old.rs", "x\n")], &[]).unwrap();
    assert_eq!(
        changes,
        vec![Change::Rename(Renamed { from: "old.rs".into(), to: "new.rs".into(), content: "x\n".into() })]
    );
    let mode_only = parse("diff --git a/x.sh b/x.sh\nold mode 100644\nnew mode 100755\n");
    assert!(mode_only.edits.is_empty());
    assert!(mode_only.diagnostics.iter().all(|d| d.severity != Severity::Error));
}

#[test]
fn spans_and_reply_lines() {
    let reply = "Intro\n```diff\n--- a/x\n+++ b/x\n@@ @@\n a\n-b\n+c\n```\n";
    let parsed = parse(reply);
    let edit = &parsed.edits[0];
    assert_eq!((edit.span.first_line, edit.span.last_line), (3, 8));
    let files = vec![File::new("x", "q\n")];
    let err = run(reply, files, &[]).unwrap_err();
    assert!(err.contains("reply line 5"), "{err}");
    // A second fenced diff: its lines are counted from where its fence opens.
    let two = format!("{reply}\nThen:\n\n```diff\n--- a/y\n+++ b/y\n@@ @@\n-d\n+e\n```\n");
    let parsed = parse(&two);
    let spans: Vec<(u32, u32)> = parsed.edits.iter().map(|e| (e.span.first_line, e.span.last_line)).collect();
    assert_eq!(spans, [(3, 8), (14, 18)]);
    let err = run(&two, vec![File::new("x", "a\nb\n"), File::new("y", "q\n")], &[]).unwrap_err();
    assert!(err.contains("reply line 16"), "{err}");
}

#[test]
fn malformed_replies_have_clear_errors() {
    let none = parse("Just prose.\n- a bullet\n+ another\n");
    assert!(none.edits.is_empty());
    assert!(none.diagnostics[0].message.contains("no unified diff"));
    let no_path = parse("```diff\n@@ @@\n a\n-b\n+c\n```\n");
    assert!(no_path.diagnostics[0].message.contains("does not name the file"), "{:?}", no_path.diagnostics);
    let empty = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n@@ -3 +3 @@\n a\n");
    assert!(empty.diagnostics.iter().any(|d| d.message.contains("empty")), "{:?}", empty.diagnostics);
    let binary = parse("diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n");
    assert!(binary.diagnostics.iter().any(|d| d.message.contains("binary")));
}

#[test]
fn bare_diff_stops_at_prose() {
    let reply = "--- a/x\n+++ b/x\n@@ @@\n a\n-b\n+c\nThat's it.\n- not part of it\n";
    let changes = run(reply, vec![File::new("x", "a\nb\nd\n")], &[]).unwrap();
    assert_eq!(written(&changes, "x"), "a\nc\nd\n");
}

#[test]
fn hint_picks_only_within_window() {
    let mut content = String::new();
    for i in 0..100 {
        content.push_str(if i % 40 == 5 { "dup\n" } else { "" });
        content.push_str(&format!("line {i}\n"));
    }
    // `dup` sits at lines 6, 47, 88.
    let reply = |n: u32| format!("--- a/f\n+++ b/f\n@@ -{n},1 +{n},1 @@\n-dup\n+DUP\n");
    let ok = run(&reply(50), vec![File::new("f", content.clone())], &[]).unwrap();
    let got = written(&ok, "f");
    assert_eq!(got.lines().position(|l| l == "DUP"), Some(46));
    let err = run(&reply(68), vec![File::new("f", content.clone())], &[]).unwrap_err();
    assert!(err.contains("3 places"), "{err}");
    // Strict: the nearest exact match wins, as with `git apply`.
    let near = run(&reply(66), vec![File::new("f", content)], &strict()).unwrap();
    assert_eq!(written(&near, "f").lines().position(|l| l == "DUP"), Some(46));
}

#[test]
fn bom_crlf_and_no_final_newline_are_kept() {
    let content = "\u{feff}a\r\nb\r\nc";
    let reply = "--- a/f\n+++ b/f\n@@ @@\n a\n-b\n+B\n+B2\n c\n";
    let changes = run(reply, vec![File::new("f", content)], &[]).unwrap();
    assert_eq!(written(&changes, "f"), "\u{feff}a\r\nB\r\nB2\r\nc");
    let append = "--- a/f\n+++ b/f\n@@ @@\n b\n c\n+d\n";
    let changes = run(append, vec![File::new("f", content)], &[]).unwrap();
    assert_eq!(written(&changes, "f"), "\u{feff}a\r\nb\r\nc\r\nd");
}

#[test]
fn crlf_reply_applies_to_lf_file() {
    let reply = "--- a/f\r\n+++ b/f\r\n@@ @@\r\n a\r\n-b\r\n+c\r\n";
    let changes = run(reply, vec![File::new("f", "a\nb\n")], &[]).unwrap();
    assert_eq!(written(&changes, "f"), "a\nc\n");
}

#[test]
fn create_over_existing_and_delete_missing_fail() {
    let create = "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n";
    assert!(run(create, vec![File::new("f", "y\n")], &[]).unwrap_err().contains("already exists"));
    assert!(run(create, vec![File::new("f", "x\n")], &[]).unwrap_err().contains("already-applied"));
    let delete = "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
    assert!(run(delete, vec![], &[]).unwrap_err().contains("does not exist"));
    assert!(run(delete, vec![File::new("f", "other\n")], &[]).unwrap_err().contains("not in the file"));
    assert_eq!(run(delete, vec![File::new("f", "x\n")], &[]).unwrap(), vec![Change::Delete("f".into())]);
}

#[test]
fn two_diffs_of_one_file_apply_in_turn() {
    let reply =
        "```diff\n--- a/f\n+++ b/f\n@@ @@\n a\n-b\n+c\n```\nand\n```diff\n--- a/f\n+++ b/f\n@@ @@\n-c\n+d\n```\n";
    let changes = run(reply, vec![File::new("f", "a\nb\n")], &[]).unwrap();
    assert_eq!(written(&changes, "f"), "a\nd\n");
}

#[test]
fn forgotten_plus_marker_is_refused() {
    // `new_line` is neither in the file nor marked: applying the rest would lose it.
    let reply = "--- a/f\n+++ b/f\n@@ @@\n a\n+x\n```\n";
    let _ = reply;
    let fenced = "```diff\n--- a/f\n+++ b/f\n@@ @@\n a\n+x\nnew_line\n+y\n b\n```\n";
    let err = run(fenced, vec![File::new("f", "a\nb\n")], &[]).unwrap_err();
    assert!(err.contains("new_line"), "{err}");
}

#[test]
fn invalid_strict_value_is_an_error() {
    let reply = "--- a/f\n+++ b/f\n@@ @@\n a\n-b\n+c\n";
    let bad = [OptionValue { key: "strict".into(), value: "maybe".into() }];
    assert!(run(reply, vec![File::new("f", "a\nb\n")], &bad).unwrap_err().contains("strict"));
}

#[test]
fn detect_scores() {
    let diff = "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n";
    assert!((Plugin::detect(&UnifiedDiff, diff) - 0.85).abs() < 0.01);
    let git = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    assert!(Plugin::detect(&UnifiedDiff, git) >= 0.85);
    let editblock = "x.py\n```diff\n<<<<<<< SEARCH\n-a\n=======\n+b\n>>>>>>> REPLACE\n```\n";
    assert!(Plugin::detect(&UnifiedDiff, editblock) < 0.2);
    assert_eq!(Plugin::detect(&UnifiedDiff, "Hello there.\n- a list\n"), 0.0);
}

#[test]
fn lint_finds_stray_diff_lines() {
    let file = File::new("a.py", "x = 1\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\ny = 2\n");
    let found = Plugin::lint(&UnifiedDiff, &file);
    assert_eq!(found.iter().map(|d| d.lines.unwrap().start).collect::<Vec<_>>(), [3, 4]);
    assert!(Plugin::lint(&UnifiedDiff, &File::new("fix.patch", "@@ -1 +1 @@\n")).is_empty());
    let md = File::new("doc.md", "Text\n```diff\n@@ -1 +1 @@\n```\n@@ -3 +3 @@\n");
    assert_eq!(Plugin::lint(&UnifiedDiff, &md).iter().map(|d| d.lines.unwrap().start).collect::<Vec<_>>(), [5]);
    assert!(Plugin::lint(&UnifiedDiff, &File::new("a.py", "x = y @@ z\n-- comment\n")).is_empty());
}

#[test]
fn instructions_example_applies() {
    let info = Plugin::info(&UnifiedDiff);
    let changes = run(&info.example_reply, info.example_files.clone(), &[]).unwrap();
    let out = written(&changes, "src/greet.py");
    assert!(out.contains("def greet(name):") && out.contains("greet(sys.argv[1])"), "{out}");
    assert!(info.instructions.contains("```diff"));
}

#[test]
fn huge_inputs_stay_fast() {
    let content: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    let mut reply = String::from("--- a/f\n+++ b/f\n");
    for i in (100..50_000).step_by(2_500) {
        reply.push_str(&format!("@@ -{i},3 +{i},3 @@\n line {i}\n-line {}\n+LINE {}\n line {}\n", i + 1, i + 1, i + 2));
    }
    let start = std::time::Instant::now();
    let changes = run(&reply, vec![File::new("f", content)], &[]).unwrap();
    assert!(written(&changes, "f").contains("LINE 2601\n"));
    assert!(start.elapsed().as_secs() < 5);
    // A huge junk reply parses without trouble.
    let junk = "@@ @@\n".repeat(20_000) + &"+x\n".repeat(20_000);
    let _ = parse(&junk);
}

proptest! {
    #[test]
    fn parser_never_panics(reply in "(--- a/x\n|\\+\\+\\+ b/x\n|--- /dev/null\n|@@ -1,2 \\+1 @@\n|@@ @@\n|diff --git a/x b/y\n|rename from x\n|rename to y\n|new file mode 1\n|\\\\ No newline\n|```diff\n|```\n|[ +\\-~a-c\"\t]{0,8}\n){0,30}") {
        let parsed = parse(&reply);
        let files = vec![File::new("x", "a\nb\nc\n"), File::new("y", "")];
        let _ = Plugin::apply(&UnifiedDiff, files.clone(), parsed.edits.clone(), &[]);
        let _ = Plugin::apply(&UnifiedDiff, files, parsed.edits.clone(), &strict());
        let _ = Plugin::detect(&UnifiedDiff, &reply);
        let _ = Plugin::lint(&UnifiedDiff, &File::new("x", reply.clone()));
    }

    #[test]
    fn arbitrary_text_never_panics(reply in "\\PC{0,400}") {
        let parsed = parse(&reply);
        let _ = Plugin::apply(&UnifiedDiff, vec![File::new("x", "a\n")], parsed.edits.clone(), &[]);
    }
}

/// `git diff` output for random edits of random files applies to exactly
/// the edited file (what `git apply` produces from it).
mod git_round_trip {
    use super::*;
    use std::process::Command;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static COUNTER: AtomicUsize = AtomicUsize::new(0);

    fn git_diff(old: &str, new: &str) -> Option<String> {
        let dir = std::env::temp_dir().join(format!(
            "udiff-rt-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(dir.join("old"), old).ok()?;
        std::fs::write(dir.join("new"), new).ok()?;
        let out = Command::new("git")
            .args(["diff", "--no-index", "--no-color", "old", "new"])
            .current_dir(&dir)
            .output()
            .ok()?;
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8(out.stdout).ok()?;
        // Point both headers at one path.
        Some(
            text.lines()
                .filter(|l| !l.starts_with("diff --git") && !l.starts_with("index "))
                .map(|l| {
                    if l.starts_with("--- ") {
                        "--- a/f"
                    } else if l.starts_with("+++ ") {
                        "+++ b/f"
                    } else {
                        l
                    }
                })
                .map(|l| format!("{l}\n"))
                .collect(),
        )
    }

    fn edit(lines: &[String], ops: &[(u8, usize, String)]) -> Vec<String> {
        let mut out = lines.to_vec();
        for (op, at, text) in ops {
            let at = if out.is_empty() { 0 } else { at % (out.len() + 1) };
            match op % 3 {
                0 if at < out.len() => {
                    out.remove(at);
                }
                1 if at < out.len() => out[at] = text.clone(),
                _ => out.insert(at, text.clone()),
            }
        }
        out
    }

    fn join(lines: &[String], final_newline: bool) -> String {
        let mut text = lines.join("\n");
        if final_newline && !lines.is_empty() {
            text.push('\n');
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn git_diff_round_trips(
            lines in prop::collection::vec("[a-z]{1,6} [0-9]{1,3}|", 1..60),
            ops in prop::collection::vec((0u8..3, 0usize..100, "[A-Z]{1,5} [0-9]{1,3}"), 1..6),
            old_final in any::<bool>(),
            new_final in any::<bool>(),
        ) {
            let old = join(&lines, old_final);
            let new = join(&edit(&lines, &ops), new_final);
            prop_assume!(old != new && !new.is_empty());
            let Some(diff) = git_diff(&old, &new) else { return Ok(()) };
            prop_assume!(!diff.is_empty());
            for options in [vec![], strict()] {
                match run(&diff, vec![File::new("f", old.clone())], &options) {
                    Ok(changes) => prop_assert_eq!(written(&changes, "f"), new.clone(), "diff:\n{}", diff),
                    Err(e) => prop_assert!(false, "failed: {}\ndiff:\n{}\nold:\n{:?}", e, diff, old),
                }
            }
        }
    }
}

/// The report says how each level of the ladder fared, as for SEARCH/REPLACE.
#[test]
fn outcomes_count_the_candidates_of_each_level() {
    let reply = "--- a/f\n+++ b/f\n@@ @@\n     keep\n-    old\n+    new\n";
    let parsed = Plugin::parse(&UnifiedDiff, reply, &[]);
    let files = vec![File::new("f", "  keep\n  old\nkeep  \n")];
    let out = Plugin::apply(&UnifiedDiff, files, parsed.edits, &[]).unwrap();
    let matched = out.outcomes[0].matched.clone().expect("matched");
    assert_eq!(matched.level, "leading-whitespace");
    let counts: Vec<(&str, u32)> = matched.candidates.iter().map(|c| (c.level.as_str(), c.count)).collect();
    assert_eq!(counts, [("exact", 0), ("trailing-whitespace", 0), ("leading-whitespace", 1)]);
}

proptest! {
    /// The first-character shortcut of `is_block_marker` answers as the rule
    /// written out: a trimmed run of five or more `<` before `SEARCH`, or
    /// of `>` before `REPLACE`, any case.
    #[test]
    fn block_markers_are_told_as_the_rule_says(line in "[ \t\u{a0}]{0,2}(<{3,7}|>{3,7}|={0,7}|x)[<>]?[ ]?(SEARCH|search|REPLACE|Replace|x)?[ \u{3000}]{0,2}") {
        let t = line.trim();
        let run = |ch: char| t.chars().take_while(|&c| c == ch).count() >= 5;
        let rule = (run('<') && t.trim_start_matches('<').trim().eq_ignore_ascii_case("SEARCH"))
            || (run('>') && t.trim_start_matches('>').trim().eq_ignore_ascii_case("REPLACE"));
        prop_assert_eq!(parse::is_block_marker(&line), rule, "{:?}", line);
    }
}

proptest! {
    /// Headers as tools write them are read byte by byte, and give what
    /// the word-by-word reading gives; any other header is left to it.
    #[test]
    fn plain_hunk_headers_read_as_any_header_does(
        header in prop_oneof![
            "@@ -[0-9+]{1,11}(,[0-9]{1,3})?( |  |\t|x )\\+[0-9]{1,11}(,[0-9x]{1,3})?( @@|@@|x|\t@@| @@ fn x|)",
            "@@ ?[-+]{0,2}[0-9]{0,11}(,[0-9+]{0,3})?[ \t]{0,2}[+-]?[0-9]{0,10}(,[0-9]{0,3})?[ \t@x]{0,3}[ a-z@]{0,4}",
        ],
    ) {
        let plain = parse::plain_hunk_numbers(&header);
        if plain.is_some() {
            prop_assert_eq!(plain, parse::any_hunk_numbers(&header), "{:?}", header);
        }
        prop_assert_eq!(parse::hunk_numbers(&header), parse::any_hunk_numbers(&header), "{:?}", header);
    }
}

#[test]
fn tool_written_hunk_headers_take_the_byte_reader() {
    assert_eq!(parse::plain_hunk_numbers("@@ -12,3 +12,4 @@ fn main()"), Some((12, Some(3), 12, Some(4))));
    assert_eq!(parse::plain_hunk_numbers("@@ -1 +1 @@"), Some((1, None, 1, None)));
    assert_eq!(parse::plain_hunk_numbers("@@ -007,2 +8"), Some((7, Some(2), 8, None)));
    assert_eq!(parse::plain_hunk_numbers("@@  -1 +1 @@"), None);
    assert_eq!(parse::plain_hunk_numbers("@@ -1,2 +3,4\t@@"), None);
    assert_eq!(parse::plain_hunk_numbers("@@ -1234567890 +1 @@"), None);
}
