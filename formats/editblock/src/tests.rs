use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;
use proptest::prelude::*;

use super::EditBlock;
use crate::parse::{Marker, marker};

fn parse(reply: &str) -> ParseOutput {
    Plugin::parse(&EditBlock, reply, &[])
}

fn apply(files: &[(&str, &str)], reply: &str) -> (ParseOutput, ApplyOutput) {
    let parsed = parse(reply);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&EditBlock, files, parsed.edits.clone(), &[]).unwrap();
    (parsed, out)
}

fn written(out: &ApplyOutput, path: &str) -> String {
    out.changes
        .iter()
        .find_map(|c| match c {
            Change::Write(f) if f.path == path => Some(f.content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not written: {:?}", out))
}

fn block(path: &str, search: &str, replace: &str) -> String {
    format!("{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n")
}

#[test]
fn applies_a_fenced_block() {
    let (parsed, out) = apply(&[("a.py", "x = 1\ny = 2\n")], &block("a.py", "y = 2\n", "y = 3\n"));
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.edits[0].summary, "replace 1 line with 1");
    assert_eq!(written(&out, "a.py"), "x = 1\ny = 3\n");
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
    assert_eq!(out.outcomes[0].lines, Some(LineRange::new(2, 2)));
}

#[test]
fn path_decorations_and_carry_over() {
    for before in ["a/b.py", "**a/b.py**", "### `a/b.py`", "`a/b.py`:", "File: a/b.py", "```python a/b.py"] {
        let reply = if before.starts_with("```") {
            format!("{before}\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n")
        } else {
            format!("{before}\n\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n")
        };
        let parsed = parse(&reply);
        assert_eq!(parsed.edits.len(), 1, "{before}: {:?}", parsed.diagnostics);
        assert_eq!(parsed.edits[0].path, "a/b.py", "{before}");
    }
    let reply =
        "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n";
    let parsed = parse(reply);
    assert_eq!(parsed.edits.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["a.py", "a.py"]);
}

#[test]
fn marker_variants() {
    for (s, d, r) in [
        ("<<<<< SEARCH", "=====", ">>>>> REPLACE"),
        ("<<<<<<<<< SEARCH", "=========", ">>>>>>>>> REPLACE"),
        ("<<<<<<< SEARCH>", "=======  ", ">>>>>>> REPLACE   "),
        ("------- SEARCH", "=======", "+++++++ REPLACE"),
    ] {
        let reply = format!("a.py\n{s}\nx\n{d}\ny\n{r}\n");
        let parsed = parse(&reply);
        assert_eq!(parsed.edits.len(), 1, "{s}: {:?}", parsed.diagnostics);
    }
    assert!(parse("a.py\n<<<< SEARCH\nx\n====\ny\n>>>> REPLACE\n").edits.is_empty());
    // Each marker as the instructions write it, whatever its line ending,
    // and what is one character off it.
    for ending in ["", "\n", "\r\n"] {
        assert_eq!(marker(&format!("<<<<<<< SEARCH{ending}")), Some(Marker::Search));
        assert_eq!(marker(&format!("  ======={ending}")), Some(Marker::Divider));
        assert_eq!(marker(&format!(">>>>>>> REPLACE{ending}")), Some(Marker::Replace));
        assert_eq!(marker(&format!("<<<<<<< SEARCHED{ending}")), None);
        assert_eq!(marker(&format!("=======x{ending}")), None);
        assert_eq!(marker(&format!(">>>>>>> replace {ending}")), Some(Marker::Replace));
    }
}

#[test]
fn shell_blocks_are_commands() {
    let reply = format!("{}\nThen run:\n```bash\npytest -q\n```\n", block("a.py", "x\n", "y\n"));
    let parsed = parse(&reply);
    assert_eq!(parsed.edits.len(), 1);
    assert_eq!(parsed.commands.len(), 1);
    assert_eq!(parsed.commands[0].command, "pytest -q");
}

#[test]
fn unterminated_and_missing_divider_are_malformed_with_reply_lines() {
    let parsed = parse("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n");
    assert!(parsed.edits.is_empty());
    let message = &parsed.diagnostics[0].message;
    assert!(message.contains("reply line 2") && message.contains(">>>>>>> REPLACE"), "{message}");
    let parsed = parse("a.py\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n");
    assert!(parsed.diagnostics[0].message.contains("`=======`"), "{:?}", parsed.diagnostics);
    let parsed = parse("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n");
    assert!(parsed.diagnostics[0].message.contains("names no file"));
    let parsed = parse("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n");
    assert_eq!(parsed.edits.len(), 1);
    assert!(parsed.diagnostics[0].message.contains("next SEARCH marker at reply line 6"), "{:?}", parsed.diagnostics);
}

#[test]
fn divider_line_inside_content() {
    let file = "Title\n=======\n\ntext\n";
    let reply = "README.md\n<<<<<<< SEARCH\nTitle\n=======\n=======\nBetter title\n=============\n>>>>>>> REPLACE\n";
    let (parsed, out) = apply(&[("README.md", file)], reply);
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(written(&out, "README.md"), "Better title\n=============\n\ntext\n");
    let reply = "README.md\n<<<<<<< SEARCH\nTitle\n=======\n=======\nTitle\n=======\nmore\n>>>>>>> REPLACE\n";
    let (_, out) = apply(&[("README.md", file)], reply);
    assert_eq!(written(&out, "README.md"), "Title\n=======\nmore\n\ntext\n");
}

#[test]
fn empty_search_creates_and_appends() {
    let reply = block("new.txt", "", "hello\n");
    let (_, out) = apply(&[], &reply);
    assert_eq!(written(&out, "new.txt"), "hello\n");
    let (_, out) = apply(&[("new.txt", "a\r\nb")], &reply);
    assert_eq!(written(&out, "new.txt"), "a\r\nb\r\nhello");
    // A short line may legitimately repeat; a substantial one is a resend.
    let (_, out) = apply(&[("new.txt", "x\nhello\n")], &reply);
    assert_eq!(written(&out, "new.txt"), "x\nhello\nhello\n");
    let reply = block("new.txt", "", "hello, world\n");
    let (_, out) = apply(&[("new.txt", "x\nhello, world\n")], &reply);
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::AlreadyApplied));
}

#[test]
fn blocks_apply_in_order() {
    let reply = format!("{}{}", block("a.py", "x = 1\n", "x = 2\n"), block("a.py", "x = 2\n", "x = 3\n"));
    let (_, out) = apply(&[("a.py", "x = 1\n")], &reply);
    assert_eq!(written(&out, "a.py"), "x = 3\n");
}

#[test]
fn ambiguous_and_missing_blocks_fail_with_hints() {
    let (_, out) = apply(&[("a.py", "f()\ng()\nf()\n")], &block("a.py", "f()\n", "h()\n"));
    assert_eq!(out.outcomes[0].kind, Some(FailureKind::Ambiguous));
    assert!(out.outcomes[0].message.contains("lines 1, 3"), "{}", out.outcomes[0].message);
    assert!(out.changes.is_empty());
    let (_, out) = apply(&[("a.py", "def f():\n    return 1\n")], &block("a.py", "def f():\n    return 2\n", "x\n"));
    let outcome = &out.outcomes[0];
    assert_eq!(outcome.kind, Some(FailureKind::NotFound));
    assert!(outcome.message.starts_with("block 1 (reply line 3, `def f():`) on a.py"), "{}", outcome.message);
    assert!(outcome.hint.as_deref().unwrap().contains("1| def f():"), "{:?}", outcome.hint);
}

#[test]
fn retries_on_the_one_other_file_that_matches() {
    let files = [("a.py", "nothing here\n"), ("b.py", "target = 1\n"), ("c.py", "other = 2\n")];
    let (_, out) = apply(&files, &block("a.py", "target = 1\n", "target = 2\n"));
    assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{:?}", out.outcomes[0]);
    assert_eq!(out.outcomes[0].applied_path.as_deref(), Some("b.py"));
    assert_eq!(written(&out, "b.py"), "target = 2\n");
    let files = [("a.py", "nothing\n"), ("b.py", "t\n"), ("c.py", "t\n")];
    let (_, out) = apply(&files, &block("a.py", "t\n", "u\n"));
    assert_eq!(out.outcomes[0].status, EditStatus::Failed);
}

#[test]
fn detect_scores_blocks_even_in_diff_fences() {
    let reply = "a.py\n```diff\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n";
    assert!((Plugin::detect(&EditBlock, reply) - 0.9).abs() < 1e-6);
    assert_eq!(Plugin::detect(&EditBlock, "```diff\n-a\n+b\n```\n"), 0.0);
}

#[test]
fn lint_finds_leftover_markers() {
    let file = File::new("a.py", "x\n<<<<<<< SEARCH\ny\n=======\nz\n>>>>>>> REPLACE\n");
    let found = Plugin::lint(&EditBlock, &file);
    assert_eq!(found.iter().map(|d| d.lines.unwrap().start).collect::<Vec<_>>(), [2, 4, 6]);
    assert!(Plugin::lint(&EditBlock, &File::new("r.md", "Title\n=======\n")).is_empty());
}

#[test]
fn instructions_example_applies() {
    let info = Plugin::info(&EditBlock);
    let parsed = parse(&info.example_reply);
    let out = Plugin::apply(&EditBlock, info.example_files.clone(), parsed.edits.clone(), &[]).unwrap();
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
    assert!(written(&out, "src/greet.py").contains("def greet(name):"));
}

#[test]
fn fuzzy_is_an_option() {
    let reply = block("a.py", "alpha = compute(1, 3)\nbeta = other(3)\n", "z\n");
    let parsed = parse(&reply);
    let files = vec![File::new("a.py", "alpha = compute(1, 2)\nbeta = other(3)\n")];
    let off = Plugin::apply(&EditBlock, files.clone(), parsed.edits.clone(), &[]).unwrap();
    assert_eq!(off.outcomes[0].status, EditStatus::Failed);
    let on = OptionValue { key: "fuzzy".into(), value: "0.8".into() };
    let out = Plugin::apply(&EditBlock, files, parsed.edits.clone(), &[on]).unwrap();
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
}

proptest! {
    #[test]
    fn parser_never_panics(reply in "(<<<<<<< SEARCH\n|=======\n|>>>>>>> REPLACE\n|```\n|```bash\n|a\\.py\n|[a-z =<>`\n]{0,12}){0,30}") {
        let parsed = parse(&reply);
        let files = vec![File::new("a.py", "a\nb\n")];
        let _ = Plugin::apply(&EditBlock, files, parsed.edits.clone(), &[]);
        let _ = Plugin::detect(&EditBlock, &reply);
    }

    #[test]
    fn parser_never_panics_on_any_text(reply in "\\PC{0,200}") {
        let _ = parse(&reply);
    }

    #[test]
    fn unique_substring_applies_exactly(
        lines in proptest::collection::vec("[a-e(){} ]{0,6}", 1..30),
        start in 0usize..30, len in 1usize..4,
    ) {
        let start = start % lines.len();
        let end = (start + len).min(lines.len());
        let content = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let needle = lines[start..end].iter().map(|l| format!("{l}\n")).collect::<String>();
        // Unique as a block of whole lines.
        let all: Vec<&str> = lines.iter().map(|s| s.as_str()).collect();
        let count = (0..=all.len() - (end - start)).filter(|&i| all[i..i + end - start] == all[start..end]).count();
        prop_assume!(count == 1);
        prop_assume!(lines[start..end].iter().any(|l| !l.trim().is_empty()));
        let (parsed, out) = apply(&[("f.txt", &content)], &block("f.txt", &needle, "NEW LINE\n"));
        prop_assert_eq!(parsed.edits.len(), 1);
        let mut want: Vec<String> = lines[..start].to_vec();
        want.push("NEW LINE".into());
        want.extend(lines[end..].iter().cloned());
        let want = want.iter().map(|l| format!("{l}\n")).collect::<String>();
        prop_assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{:?}", out.outcomes[0]);
        prop_assert_eq!(written(&out, "f.txt"), want);
    }
}

#[test]
fn crlf_replies_parse_like_lf_ones() {
    let reply = "a.py\r\n```python\r\n<<<<<<< SEARCH\r\nx = 1\r\n=======\r\nx = 2\r\n>>>>>>> REPLACE\r\n```\r\n";
    let (parsed, out) = apply(&[("a.py", "x = 1\n")], reply);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(written(&out, "a.py"), "x = 2\n");
}

#[test]
fn spans_point_at_the_block_in_the_reply() {
    let reply = format!("Intro.\n\n{}", block("a.py", "x\n", "y\n"));
    let parsed = parse(&reply);
    let span = parsed.edits[0].span;
    assert_eq!((span.first_line, span.last_line), (5, 9));
    assert!(reply[span.start as usize..span.end as usize].starts_with("<<<<<<< SEARCH"));
    assert!(reply[span.start as usize..span.end as usize].ends_with(">>>>>>> REPLACE\n"));
}

#[test]
fn applied_blocks_say_which_and_where() {
    let reply = format!("{}{}", block("a.py", "a\n", "A\n"), block("a.py", "missing\n", "B\n"));
    let (_, out) = apply(&[("a.py", "a\nb\n")], &reply);
    assert_eq!(out.outcomes[0].status, EditStatus::Applied);
    assert!(
        out.outcomes[0].message.starts_with("block 1 (reply line 3, `a`): replaced lines 1-1 of a.py"),
        "{}",
        out.outcomes[0].message
    );
    assert_eq!(out.outcomes[1].status, EditStatus::Failed);
    assert!(
        out.outcomes[1].message.starts_with("block 2 (reply line 11, `missing`) on a.py"),
        "{}",
        out.outcomes[1].message
    );
}

proptest! {
    #[test]
    fn indentation_drift_applies_at_the_right_place(
        rows in proptest::collection::vec((1usize..4, "[a-z]{2,4}"), 2..30),
        start in 0usize..30, len in 1usize..4,
    ) {
        use agent_apply_sdk::matching::{Haystack, Level};
        let start = start % rows.len();
        let end = (start + len).min(rows.len());
        let lines: Vec<String> = rows.iter().map(|(lvl, w)| format!("{}{w}", "    ".repeat(*lvl))).collect();
        let content: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let base = rows[start..end].iter().map(|r| r.0).min().unwrap();
        prop_assume!(base > 0);
        let dedented: Vec<String> = rows[start..end].iter().map(|(lvl, w)| format!("{}{w}", "    ".repeat(lvl - base))).collect();
        let hay = Haystack::of(&content);
        let needle: Vec<&str> = dedented.iter().map(|s| s.as_str()).collect();
        prop_assume!(hay.find_all(&needle, Level::Exact, 0..hay.len(), 1).is_empty());
        prop_assume!(hay.find_all(&needle, Level::TrailingWhitespace, 0..hay.len(), 1).is_empty());
        prop_assume!(hay.find_all(&needle, Level::LeadingWhitespace, 0..hay.len(), 2).len() == 1);
        let search: String = dedented.iter().map(|l| format!("{l}\n")).collect();
        let replace = format!("{search}NEWLINE\n");
        let (_, out) = apply(&[("f.txt", &content)], &block("f.txt", &search, &replace));
        prop_assert_eq!(out.outcomes[0].status, EditStatus::Applied, "{:?}", out.outcomes[0]);
        let mut want: Vec<String> = lines[..end].to_vec();
        want.push(format!("{}NEWLINE", "    ".repeat(base)));
        want.extend(lines[end..].iter().cloned());
        let want: String = want.iter().map(|l| format!("{l}\n")).collect();
        prop_assert_eq!(written(&out, "f.txt"), want);
    }
}

#[test]
fn the_edits_are_sized_by_the_search_marker_lines_and_no_more_than_the_lines_allow() {
    use agent_apply_sdk::source::IndexedLines;
    let at_most = |reply: &str| crate::parse::blocks_at_most(&IndexedLines::new(reply), reply);
    let block = "a.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n";
    let prose = "SEARCH for the line, then:\n";
    assert_eq!(at_most(&format!("{block}{prose}{block}")), 2);
    // A lowercase marker's block is not counted; the vector grows for it.
    assert_eq!(at_most(&block.replace("SEARCH", "search")), 0);
    // Markers alone: a block needs three lines at least.
    assert_eq!(at_most(&"<<<<<<< SEARCH\n".repeat(30)), 10);
}

proptest! {
    #[test]
    fn the_markers_found_are_those_of_the_lines_read_one_by_one(lines in proptest::collection::vec(
        proptest::sample::select(vec![
            "<<<<<<< SEARCH\n", "======= \n", ">>>>>>> REPLACE\n", "------- SEARCH\r\n", "+++++++ REPLACE\n",
            "  <<<<<<< SEARCH>\n", "<<<< SEARCH\n", "x <<<<<<< SEARCH\n", "==========\n", "=====x\n", "---------- \n",
            "+++++ replace", "code\n", "\n",
        ]),
        0..8,
    )) {
        let reply = lines.concat();
        let mut one_by_one = (false, false, false);
        for line in agent_apply_sdk::text::lines_with_endings(&reply) {
            match crate::parse::marker(line) {
                Some(crate::parse::Marker::Search) => one_by_one.0 = true,
                Some(crate::parse::Marker::Divider) => one_by_one.1 = true,
                Some(crate::parse::Marker::Replace) => one_by_one.2 = true,
                None => {}
            }
        }
        prop_assert_eq!(crate::parse::markers_in(&reply), one_by_one);
    }
}

#[test]
fn a_quoted_search_line_is_cut_at_sixty_characters_not_bytes() {
    for (line, kept, cut) in [
        ("x".repeat(60), 60, false),
        ("x".repeat(61), 60, true),
        ("é".repeat(30), 30, false),
        ("é".repeat(60), 60, false),
        ("é".repeat(61), 60, true),
    ] {
        let padded = format!("  {line}  ");
        let (quoted, was_cut) = super::quote(&padded);
        assert_eq!((quoted.chars().count(), was_cut), (kept, cut), "{line:?}");
    }
}
