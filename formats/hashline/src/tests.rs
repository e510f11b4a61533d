use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;
use agent_apply_sdk::view::merge_ranges;
use proptest::prelude::*;

use super::{Anchor, Hashline, parse_anchor};
use crate::hash::*;

fn opts(pairs: &[(&str, &str)]) -> Vec<OptionValue> {
    pairs.iter().map(|(k, v)| OptionValue { key: k.to_string(), value: v.to_string() }).collect()
}

fn parse(reply: &str) -> ParseOutput {
    Plugin::parse(&Hashline, reply, &[])
}

fn apply_with(files: &[(&str, &str)], reply: &str, options: &[OptionValue]) -> (ParseOutput, ApplyOutput) {
    let parsed = Plugin::parse(&Hashline, reply, options);
    let files = files.iter().map(|(p, c)| File::new(*p, *c)).collect();
    let out = Plugin::apply(&Hashline, files, parsed.edits.clone(), options).unwrap();
    (parsed, out)
}

fn apply(files: &[(&str, &str)], reply: &str) -> (ParseOutput, ApplyOutput) {
    apply_with(files, reply, &[])
}

fn written(out: &ApplyOutput, path: &str) -> String {
    out.changes
        .iter()
        .find_map(|c| match c {
            Change::Write(f) if f.path == path => Some(f.content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{path} not written: {out:?}"))
}

/// The anchor of 1-based `line` of `content`, as a view shows it.
fn anchor(content: &str, line: usize) -> String {
    let text = content.split('\n').nth(line - 1).unwrap();
    format!("{line}:{}", hex(line_hash(text.trim_end_matches('\r')), 2))
}

/// The view's lines, below its `PATH @TAG (N lines)` header.
fn render(content: &str, ranges: &[LineRange]) -> String {
    let view = Plugin::render(&Hashline, &File::new("f", content), ranges, &[]).unwrap();
    let (header, lines) = view.split_once('\n').unwrap();
    assert_eq!(header, agent_apply_sdk::view::view_header("f", content).trim_end());
    lines.to_string()
}

fn failed(out: &ApplyOutput) -> Vec<&Outcome> {
    out.outcomes.iter().filter(|o| o.status == EditStatus::Failed).collect()
}

// ---------------------------------------------------------------- hashing

#[test]
fn xxhash32_known_vectors() {
    use xxhash_rust::xxh32::xxh32;
    assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
    assert_eq!(xxh32(b"a", 0), 0x550D_7456);
    assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
    assert_eq!(xxh32(b"Nobody inspects the spammish repetition", 0), 0xE229_3B2F);
    // The line hash is xxHash32 of the line without any whitespace.
    assert_eq!(line_hash(""), 0x02CC_5D05);
    assert_eq!(line_hash("  a b\tc \r"), 0x32D1_53FF);
    assert_eq!(line_hash("abc\r\n"), 0x32D1_53FF);
    assert_eq!(line_hash("\u{a0}a\u{3000}\u{feff}"), 0x550D_7456);
    // U+0085 is not whitespace to JavaScript's `\s`, so it is hashed.
    assert_ne!(line_hash("a\u{85}"), line_hash("a"));
}

#[test]
fn hex_is_the_hash_modulo_a_power_of_sixteen() {
    let h = 0x32D1_53FF;
    assert_eq!(hex(h, 2), "ff");
    assert_eq!(u32::from_str_radix(&hex(h, 2), 16).unwrap(), h % 256);
    assert_eq!(hex(h, 4), "53ff");
    assert_eq!(hex(h, 8), "32d153ff");
    assert_eq!(hex(0x0000_0005, 2), "05");
    assert!(matches(h, "ff") && matches(h, "153ff") && !matches(h, "fe") && !matches(h, ""));
}

#[test]
fn renders_lines_with_hashes() {
    assert_eq!(view_line(3, "abc", 2), "3:ff|abc");
    assert_eq!(view_line(1, "a", 2), "1:56|a");
    assert_eq!(render("abc\r\n  a\n", &[]), "1:ff|abc\n2:56|  a\n");
    let five = "a\nb\nc\nd\ne\n";
    let view = render(five, &[LineRange::new(4, 4), LineRange::new(1, 1), LineRange::new(2, 2)]);
    let lines: Vec<&str> = view.lines().collect();
    assert_eq!(lines.len(), 5, "{view}");
    assert!(
        lines[0].starts_with("1:") && lines[1].starts_with("2:") && lines[2] == "..." && lines[3].starts_with("4:")
    );
    assert_eq!(lines[4], "...");
    let long = Plugin::render(&Hashline, &File::new("f", "abc\n"), &[], &opts(&[("hash-length", "6")])).unwrap();
    assert_eq!(long.split_once('\n').unwrap().1, "1:d153ff|abc\n");
    assert!(Plugin::render(&Hashline, &File::new("f", "abc\n"), &[], &opts(&[("hash-length", "9")])).is_err());
    assert!(Plugin::render(&Hashline, &File::new("f", "abc\n"), &[], &opts(&[("hash-length", "1")])).is_err());
    // The BOM is not part of line 1.
    assert_eq!(render("\u{feff}abc", &[]), "1:ff|abc\n");
}

#[test]
fn range_merge() {
    let r = LineRange::new;
    // Windows of stale anchors: overlapping or touching ones merge, the rest stay apart.
    assert_eq!(merge_ranges(&[r(42, 58), r(52, 68)], 100), vec![r(42, 68)]);
    assert_eq!(merge_ranges(&[r(1, 9), r(10, 12)], 100), vec![r(1, 12)]);
    assert_eq!(merge_ranges(&[r(80, 96), r(2, 18)], 90), vec![r(2, 18), r(80, 90)]);
    assert_eq!(crate::ranges_text(&[r(2, 18), r(80, 80)]), "2-18, 80");
}

// ---------------------------------------------------------------- anchors

#[test]
fn anchors_are_read_tolerantly() {
    let a = |line, hash: &str| Anchor { line, hash: hash.into() };
    for text in ["11:a3", " 11:a3 ", "11:a3|  copied text", ">>> 11:a3", ">>>11:a3|x", "11 : a3", "11:A3", "L11:a3"] {
        assert_eq!(parse_anchor(text), Ok(a(11, "a3")), "{text}");
    }
    assert_eq!(parse_anchor("0:"), Ok(a(0, "")));
    assert_eq!(parse_anchor("0"), Ok(a(0, "")));
    assert_eq!(parse_anchor("7:0f3c"), Ok(a(7, "0f3c")));
    for bad in ["", "a3", "11", "11:", "11:zz", "11:a3g", "11:123456789", ":a3", "99999999999:aa"] {
        let err = parse_anchor(bad).unwrap_err();
        assert!(err.contains("anchor"), "{bad}: {err}");
    }
}

#[test]
fn copied_prefixes_are_stripped_only_when_most_lines_have_them() {
    let v = |s: &[&str]| s.iter().copied().collect::<crate::NewLines>();
    assert_eq!(strip_copied_prefixes(v(&["3:ab|x", "4:0c|  y", "z"]).iter()), Some(v(&["x", "  y", "z"])));
    assert_eq!(strip_copied_prefixes(v(&[">>> 3:AB|x"]).iter()), Some(v(&["x"])));
    assert_eq!(strip_copied_prefixes(v(&["3:ab|x", "y"]).iter()), None);
    assert_eq!(strip_copied_prefixes(v(&["ratio 3:4", "a|b"]).iter()), None);
    assert_eq!(copied_prefix_len("12:abcd|rest"), Some(8));
    assert_eq!(copied_prefix_len("12:a|rest"), None);
}

// ---------------------------------------------------------------- parsing

#[test]
fn parses_fenced_bare_and_several_objects() {
    let reply = r#"Here:
```json
{"path": "a.py", "edits": [{"set_line": {"anchor": "1:ff", "new_text": "x"}}, {"insert_after": {"anchor": "2:56", "text": "y"}}]}
```
and also {"path": "b.py", "edits": [{"replace": {"old_text": "q", "new_text": "r"}}]} done.
```json
[{"path": "c.py", "edits": [{"op": "replace_lines", "start": "1:00", "end": "2:00", "new_text": ["a", "b"]}]}]
```
```bash
pytest
```
"#;
    let parsed = parse(reply);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let paths: Vec<&str> = parsed.edits.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["a.py", "a.py", "b.py", "c.py"]);
    assert_eq!(parsed.edits[0].span.first_line, 3);
    assert_eq!(parsed.edits[2].span.first_line, 5);
    assert_eq!(parsed.commands.len(), 1);
    let summaries: Vec<&str> = parsed.edits.iter().map(|e| e.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "set line 1:ff (1 line)",
            "insert 1 line after 2:56",
            "replace 1 line of text with 1",
            "replace lines 1:00..2:00 with 2 lines"
        ]
    );
}

#[test]
fn malformed_edits_say_what_and_where() {
    let deep_edits = format!("```json\n{{\"path\": \"a\", \"edits\": {}{}}}\n```\n", "[".repeat(200), "]".repeat(200));
    let cases = [
        ("```json\n{\"path\": \"a\", \"edits\": [{\"set_line\": {\"anchor\": \"x\"}}]}\n```\n", "line number"),
        ("```json\n{\"path\": \"a\", \"edits\": [{\"set_line\": {\"anchor\": \"1:ab\"}}]}\n```\n", "new_text"),
        ("```json\n{\"path\": \"a\", \"edits\": [{\"move\": {}}]}\n```\n", "none of set_line"),
        (
            "```json\n{\"path\": \"a\", \"edits\": [{\"set_line\": {\"anchor\": 5, \"new_text\": \"\"}}]}\n```\n",
            "bare number",
        ),
        ("```json\n{\"path\": \"a\", \"edits\": [\n```\n", "does not parse"),
        ("```json\n{\"edits\": []}\n```\n", "no \"path\""),
        ("{\"path\": \"a\", \"edits\": [}\n", "does not parse"),
        ("```json\n{\"path\": \"a\", \"edits\": 3}\n```\n", "must be a list"),
        // An edit that is no object is quoted as compact JSON, on one line.
        (
            "```json\n{\"path\": \"a\", \"edits\": [[1,\n  2]]}\n```\n",
            "an object with one of set_line, replace_lines, insert_after or replace, not [1,2]",
        ),
        (
            "```json\n{\"path\": \"a\", \"edits\": [{\"set_line\": {\"anchor\": \"1:ab\", \"new_text\": [\"x\", 2]}}]}\n```\n",
            "holds 2 where a line",
        ),
        (
            "```json\n{\"path\": \"a\", \"edits\": [{\"replace\": {\"old_text\": \" \", \"new_text\": \"x\"}}]}\n```\n",
            "empty",
        ),
        ("```json\n[\"x\", 2]\n```\n", "the JSON value is a string, not an edit object"),
        // Nested past what the reader recurses into: refused, and said so.
        (&deep_edits, "recursion limit exceeded"),
    ];
    for (reply, want) in cases {
        let parsed = parse(reply);
        let errors: Vec<&Diagnostic> = parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
        assert!(!errors.is_empty(), "{reply}");
        assert!(errors[0].message.contains(want), "{reply}: {}", errors[0].message);
        assert!(errors[0].message.contains("reply line"), "{}", errors[0].message);
        assert!(errors[0].hint.is_some());
    }
    // Prose with JSON-ish text that is not an edit object is left alone.
    assert!(parse("Use `{\"a\": 1}` and [1, 2].\n```json\n{\"name\": \"x\"}\n```\n").diagnostics.is_empty());
}

#[test]
fn hostile_and_huge_replies() {
    let many_braces = "{\"path\": ".repeat(5000);
    let parsed = parse(&many_braces);
    assert!(parsed.edits.is_empty());
    assert!(parsed.diagnostics.len() <= 66);
    let deep = format!("```json\n{}{}\n```\n", "[".repeat(10_000), "]".repeat(10_000));
    let _ = parse(&deep);
    let lines: String =
        (0..20_000).map(|i| format!("{{\"set_line\": {{\"anchor\": \"{i}:00\", \"new_text\": \"x\"}}}},")).collect();
    let big = format!("```json\n{{\"path\": \"a\", \"edits\": [{}]}}\n```\n", lines.trim_end_matches(','));
    assert_eq!(parse(&big).edits.len(), 20_000);
}

proptest! {
    #[test]
    fn parser_never_panics(reply in "(\\{|\\}|\\[|\\]|\"|:|,|path|edits|set_line|anchor|new_text|```json\n|\n| |1|a3|\\|)*") {
        let _ = parse(&reply);
    }

    #[test]
    fn parser_never_panics_on_any_text(reply in any::<String>()) {
        let _ = parse(&reply);
        let _ = parse_anchor(&reply);
        let _ = copied_prefix_len(&reply);
    }

    #[test]
    fn apply_never_panics(
        content in "([a-c ]{0,3}(\r\n|\n)){0,12}[a-c]{0,2}",
        line in 0u32..16, line2 in 0u32..16, hash in "[0-9a-f]{2}", text in "[a-c\n]{0,6}",
    ) {
        let reply = format!(
            "{{\"path\": \"f\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{line}:{hash}\", \"new_text\": {text:?}}}}}, \
             {{\"replace_lines\": {{\"start_anchor\": \"{line}:{hash}\", \"end_anchor\": \"{line2}:{hash}\", \"new_text\": {text:?}}}}}, \
             {{\"insert_after\": {{\"anchor\": \"{line2}:{hash}\", \"text\": {text:?}}}}}]}}"
        );
        let (_, out) = apply(&[("f", &content)], &reply);
        prop_assert_eq!(out.outcomes.len(), 3);
    }

    #[test]
    fn valid_anchors_always_apply_and_keep_the_style(
        lines in proptest::collection::vec("[a-z ]{0,6}", 1..20), pick in 0usize..100, crlf: bool, final_nl: bool,
    ) {
        prop_assume!(final_nl || !lines[lines.len() - 1].is_empty());
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut content = lines.join(eol);
        if final_nl { content.push_str(eol); }
        let n = pick % lines.len() + 1;
        let a = format!("{n}:{}", hex(line_hash(&lines[n - 1]), 2));
        let reply = format!("{{\"path\": \"f\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{a}\", \"new_text\": \"NEW\"}}}}]}}");
        let (_, out) = apply(&[("f", &content)], &reply);
        prop_assert!(out.outcomes[0].status == EditStatus::Applied, "{:?}", out.outcomes);
        let mut want: Vec<&str> = lines.iter().map(String::as_str).collect();
        want[n - 1] = "NEW";
        let mut expected = want.join(eol);
        if final_nl { expected.push_str(eol); }
        if expected != content {
            prop_assert_eq!(written(&out, "f"), expected);
        }
    }
}

// ---------------------------------------------------------------- applying

fn edit_json(path: &str, edits: &[String]) -> String {
    format!("```json\n{{\"path\": \"{path}\", \"edits\": [{}]}}\n```\n", edits.join(",\n"))
}

fn set(a: &str, text: &str) -> String {
    format!("{{\"set_line\": {{\"anchor\": \"{a}\", \"new_text\": {text:?}}}}}")
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn each_operation() {
    let file = "a\nb\nc\nd\n";
    let reply = edit_json(
        "f",
        &[
            set(&anchor(file, 1), "A"),
            format!(
                "{{\"replace_lines\": {{\"start_anchor\": \"{}\", \"end_anchor\": \"{}\", \"new_text\": \"B\\nC\\nX\"}}}}",
                anchor(file, 2),
                anchor(file, 3)
            ),
            format!("{{\"insert_after\": {{\"anchor\": \"{}\", \"text\": \"after d\"}}}}", anchor(file, 4)),
            "{\"insert_after\": {\"anchor\": \"0:\", \"text\": \"top\"}}".into(),
        ],
    );
    let (parsed, out) = apply(&[("f", file)], &reply);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert_eq!(written(&out, "f"), "top\nA\nB\nC\nX\nd\nafter d\n");
    assert_eq!(out.outcomes[1].lines, Some(LineRange::new(2, 3)));
    let reply = edit_json("f", &["{\"replace\": {\"old_text\": \"b\\nc\", \"new_text\": \"bc\"}}".into()]);
    let (_, out) = apply(&[("f", file)], &reply);
    assert_eq!(written(&out, "f"), "a\nbc\nd\n");
}

#[test]
fn replace_uses_the_ladder_and_needs_a_unique_match() {
    let file = "fn f() {\n    x();\n}\nfn g() {\n    x();\n}\n";
    let reply = edit_json("f", &["{\"replace\": {\"old_text\": \"x();\", \"new_text\": \"y();\"}}".into()]);
    let (_, out) = apply(&[("f", file)], &reply);
    assert_eq!(failed(&out)[0].kind, Some(FailureKind::Ambiguous), "{:?}", out.outcomes);
    let file = "def f():\n    if a:\n        b()\n";
    let reply = edit_json(
        "f",
        &["{\"replace\": {\"old_text\": \"if a:\\n    b()\", \"new_text\": \"if c:\\n    d()\"}}".into()],
    );
    let (_, out) = apply(&[("f", file)], &reply);
    assert_eq!(written(&out, "f"), "def f():\n    if c:\n        d()\n");
    assert!(out.outcomes[0].message.contains("indentation"), "{}", out.outcomes[0].message);
}

#[test]
fn delete_and_line_endings() {
    let file = "a\r\nb\r\nc";
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[set(&anchor(file, 3), "")]));
    assert_eq!(written(&out, "f"), "a\r\nb");
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[set(&anchor(file, 2), "x\ny")]));
    assert_eq!(written(&out, "f"), "a\r\nx\r\ny\r\nc");
    let (_, out) = apply(&[("f", "\u{feff}a\nb\n")], &edit_json("f", &[set("1:56", "z")]));
    assert_eq!(written(&out, "f"), "\u{feff}z\nb\n");
    let (_, out) =
        apply(&[("f", "a")], &edit_json("f", &["{\"insert_after\": {\"anchor\": \"1:56\", \"text\": \"b\"}}".into()]));
    assert_eq!(written(&out, "f"), "a\nb");
}

#[test]
fn stale_anchor_relocates_within_the_window() {
    let file = numbered(30);
    let moved = format!("new 1\nnew 2\n{file}");
    let a = anchor(&file, 10);
    let (_, out) = apply(&[("f", &moved)], &edit_json("f", &[set(&a, "ten")]));
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert!(out.outcomes[0].message.contains("relocated from line 10 to line 12"), "{}", out.outcomes[0].message);
    assert!(written(&out, "f").contains("line 9\nten\nline 11\n"));
}

#[test]
fn stale_anchor_outside_the_window_gives_merged_ranges_and_a_fresh_view() {
    let file = numbered(100);
    let reply = edit_json("f", &[set("50:00", "x"), set("55:00", "y"), set("90:00", "z")]);
    let (_, out) = apply(&[("f", &file)], &reply);
    let f = failed(&out);
    assert_eq!(f.len(), 3);
    assert_eq!(f[0].kind, Some(FailureKind::Stale));
    assert!(f[0].message.contains("42-63, 82-98"), "{}", f[0].message);
    let hint = f[0].hint.as_deref().unwrap();
    assert!(hint.contains(&format!("{}|line 42\n", anchor(&file, 42))), "{hint}");
    assert!(hint.contains(&format!(">>> {}|line 50\n", anchor(&file, 50))), "{hint}");
    assert!(!hint.contains("|line 41\n") && !hint.contains("|line 64\n") && hint.contains("|line 98\n"));
    assert_eq!(hint.matches("...\n").count(), 3, "{hint}");
    assert_eq!(f[0].lines, Some(LineRange::new(42, 63)));
    assert_eq!(f[2].lines, Some(LineRange::new(82, 98)));
    assert!(f[1].hint.is_none() && f[1].message.contains("in the hint of edit 1"), "{}", f[1].message);
    assert!(out.changes.is_empty());
    // A window of 2 lines.
    let (_, out) = apply_with(&[("f", &file)], &edit_json("f", &[set("50:00", "x")]), &opts(&[("window", "2")]));
    assert!(failed(&out)[0].message.contains("lines 48-52 of f"), "{}", failed(&out)[0].message);
}

#[test]
fn ambiguous_relocation_fails() {
    let file = "alpha\nsame\nbeta\ngamma\nsame\ndelta\n";
    let shifted = format!("new\n{file}");
    let a = format!("2:{}", hex(line_hash("same"), 2));
    let (_, out) = apply(&[("f", &shifted)], &edit_json("f", &[set(&a, "q")]));
    let f = failed(&out);
    assert_eq!(f.len(), 1, "{:?}", out.outcomes);
    assert!(f[0].message.contains("2 lines (3, 6)") && f[0].message.contains("cannot be moved"), "{}", f[0].message);
}

#[test]
fn each_anchor_follows_its_unique_hash_even_when_the_range_length_changes() {
    let file = numbered(20);
    let changed = file.replace("line 5\n", "line 5\nextra\n");
    let reply = edit_json(
        "f",
        &[format!(
            "{{\"replace_lines\": {{\"start_anchor\": \"{}\", \"end_anchor\": \"{}\", \"new_text\": \"x\"}}}}",
            anchor(&file, 3),
            anchor(&file, 8)
        )],
    );
    let (_, out) = apply(&[("f", &changed)], &reply);
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert!(out.outcomes[0].message.contains("relocated from line 8 to line 9"), "{}", out.outcomes[0].message);
    let matched = out.outcomes[0].matched.as_ref().expect("placement reported");
    assert!(matched.relocated && matched.stated_line == Some(8) && matched.level == "anchor", "{matched:?}");
    assert!(written(&out, "f").starts_with("line 1\nline 2\nx\nline 9\n"));
    // Both anchors moving by the same amount is fine.
    let changed = format!("top\n{file}");
    let (_, out) = apply(&[("f", &changed)], &reply);
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert!(written(&out, "f").starts_with("top\nline 1\nline 2\nx\nline 9\n"));
}

#[test]
fn overlaps_duplicates_and_no_ops() {
    let file = "a\nb\nc\nd\n";
    let range = |s: usize, e: usize| {
        format!(
            "{{\"replace_lines\": {{\"start_anchor\": \"{}\", \"end_anchor\": \"{}\", \"new_text\": \"r\"}}}}",
            anchor(file, s),
            anchor(file, e)
        )
    };
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[range(1, 3), set(&anchor(file, 2), "x")]));
    let f = failed(&out);
    assert_eq!(f.len(), 2);
    assert!(f.iter().all(|o| o.kind == Some(FailureKind::Overlap)), "{f:?}");
    assert!(f[1].message.contains("overlaps edit 1"), "{}", f[1].message);
    // An insertion inside a replaced range overlaps; one right after it does not.
    let ins = |l: usize| format!("{{\"insert_after\": {{\"anchor\": \"{}\", \"text\": \"i\"}}}}", anchor(file, l));
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[range(1, 3), ins(2)]));
    assert_eq!(failed(&out).len(), 2);
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[range(1, 3), ins(3), ins(3)]));
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert_eq!(written(&out, "f"), "r\ni\nd\n");
    assert!(out.outcomes[2].message.contains("applied once"), "{}", out.outcomes[2].message);
    // Replacing a line and inserting after it compose.
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[ins(2), set(&anchor(file, 2), "B")]));
    assert_eq!(written(&out, "f"), "a\nB\ni\nc\nd\n");
    // A no-op is reported and writes nothing.
    let (_, out) = apply(&[("f", file)], &edit_json("f", &[set(&anchor(file, 2), "b")]));
    assert!(out.changes.is_empty());
    assert!(out.outcomes[0].message.contains("no change"), "{}", out.outcomes[0].message);
}

#[test]
fn hash_length_option_and_short_anchors() {
    let file = "abc\n";
    let o = opts(&[("hash-length", "4")]);
    let (_, out) = apply_with(&[("f", file)], &edit_json("f", &[set("1:53ff", "x")]), &o);
    assert_eq!(written(&out, "f"), "x\n");
    let (_, out) = apply_with(&[("f", file)], &edit_json("f", &[set("1:ff", "x")]), &o);
    assert!(failed(&out)[0].message.contains("hash-length"), "{:?}", out.outcomes);
    let (_, out) = apply_with(&[("f", file)], &edit_json("f", &[set("1:ff", "x")]), &opts(&[("window", "x")]));
    assert!(failed(&out)[0].message.contains("window"));
}

#[test]
fn missing_files_and_creation() {
    let (_, out) =
        apply(&[], &edit_json("new.txt", &["{\"insert_after\": {\"anchor\": \"0:\", \"text\": \"hi\"}}".into()]));
    assert_eq!(written(&out, "new.txt"), "hi\n");
    let (_, out) = apply(&[], &edit_json("nope.txt", &[set("1:00", "x")]));
    assert_eq!(failed(&out)[0].kind, Some(FailureKind::NotFound));
    let (_, out) = apply(&[("f", "a\n")], &edit_json("f", &[set("0:00", "x")]));
    assert_eq!(failed(&out)[0].kind, Some(FailureKind::OutOfRange));
    let (_, out) = apply(&[("f", "a\n")], &edit_json("f", &[set("40:00", "x")]));
    assert_eq!(failed(&out)[0].kind, Some(FailureKind::OutOfRange));
    assert!(failed(&out)[0].hint.as_deref().unwrap().contains("1:56|a"));
}

#[test]
fn lint_finds_leftover_tags() {
    let file =
        File::new("x.py", "ok\n12:ab|pasted\n13:0c|pasted\nfine\n>>> 40:ff|z\n  ratio 3:4|x\nurl http://a:80|b\n");
    let found = Plugin::lint(&Hashline, &file);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].lines, Some(LineRange::new(2, 3)));
    assert_eq!(found[1].lines, Some(LineRange::new(5, 5)));
    assert!(found[0].message.contains("leftover"));
    assert!(Plugin::lint(&Hashline, &File::new("y", "fn main() {}\n")).is_empty());
}

#[test]
fn example_reply_applies_to_example_files() {
    let info = Plugin::info(&Hashline);
    let parsed = parse(&info.example_reply);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let out = Plugin::apply(&Hashline, info.example_files.clone(), parsed.edits.clone(), &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied), "{:?}", out.outcomes);
    assert_eq!(written(&out, "src/greet.py"), "def greet(name):\n    print(f\"Hello, {name}!\")\n");
    assert!(Plugin::detect(&Hashline, &info.example_reply) > 0.9);
    assert_eq!(Plugin::detect(&Hashline, "<<<<<<< SEARCH\n"), 0.0);
}

#[test]
fn many_edits_on_a_big_file() {
    let file = numbered(20_000);
    let tag = |l: usize, len: usize| format!("{l}:{}", hex(line_hash(&format!("line {l}")), len));
    let edits: Vec<String> = (1..=20_000).step_by(4).map(|l| set(&tag(l, 2), "x")).collect();
    let (_, out) = apply(&[("f", &file)], &edit_json("f", &edits));
    assert!(failed(&out).is_empty());
    let after = written(&out, "f");
    assert_eq!(after.lines().count(), 20_000);
    assert_eq!(after.lines().filter(|l| *l == "x").count(), 5_000);
    // A hundred stale anchors (8-digit hashes, so none relocates by chance): one merged range.
    let edits: Vec<String> = (1..=400).step_by(4).map(|l| set(&tag(l, 8), "x")).collect();
    let shifted = file.replace("line ", "row ");
    let (_, out) = apply_with(&[("f", &shifted)], &edit_json("f", &edits), &opts(&[("hash-length", "8")]));
    assert_eq!(failed(&out).len(), 100);
    assert!(failed(&out)[0].message.contains("Fresh lines 1-405 of f"), "{}", failed(&out)[0].message);
    assert_eq!(failed(&out)[0].hint.as_deref().unwrap().lines().count(), 1 + 405 + 1);
}

// ------------------------------------------------------------- file tag

fn tagged(tag: &str, anchor: &str) -> String {
    format!(
        "```json\n{{\"path\": \"f\", \"tag\": \"{tag}\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{anchor}\", \"new_text\": \"X\"}}}}]}}\n```\n"
    )
}

#[test]
fn the_view_starts_with_the_file_tag_and_a_tagged_edit_of_that_version_applies() {
    let content = "a\nb\nc\n";
    let view = Plugin::render(&Hashline, &File::new("f", content), &[], &[]).unwrap();
    let tag = agent_apply_sdk::view::version_tag(content);
    assert!(view.starts_with(&format!("f @{tag} (3 lines)\n")), "{view}");
    let (_, out) = apply(&[("f", content)], &tagged(&format!("@{tag}"), &anchor(content, 2)));
    assert!(failed(&out).is_empty(), "{:?}", out.outcomes);
    assert_eq!(written(&out, "f"), "a\nX\nc\n");
}

#[test]
fn a_tag_of_another_version_is_stale_even_where_the_anchors_still_match() {
    // The user appended a line: line 2's anchor still matches, but the
    // anchors were read from the old version, which the host rebases from.
    let old = "a\nb\nc\n";
    let now = "a\nb\nc\nd\n";
    let tag = agent_apply_sdk::view::version_tag(old);
    let (_, out) = apply(&[("f", now)], &tagged(&tag, &anchor(old, 2)));
    let f = failed(&out);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, Some(FailureKind::Stale));
    let fresh = agent_apply_sdk::view::version_tag(now);
    assert!(f[0].message.contains(&format!("@{tag}")) && f[0].message.contains(&fresh), "{}", f[0].message);
    assert!(f[0].hint.as_deref().unwrap().contains(&format!("f @{fresh} (4 lines)")));
    assert!(out.changes.is_empty());
}

#[test]
fn new_lines_keep_each_line_and_serialize_as_the_list() {
    let lines: crate::NewLines = ["a", "", "b\nc", "d"].into_iter().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines.iter().collect::<Vec<_>>(), ["a", "", "b\nc", "d"]);
    let json = serde_json::to_string(&lines).unwrap();
    assert_eq!(json, r#"["a","","b\nc","d"]"#);
    assert_eq!(serde_json::from_str::<crate::NewLines>(&json).unwrap(), lines);
    assert!(crate::NewLines::default().iter().next().is_none());
}

#[test]
fn a_new_text_kept_as_its_json_string_applies_unescaped() {
    let content = "a\nb\nc\n";
    let (a, b) = (anchor(content, 1), anchor(content, 2));
    let reply = format!(
        "```json\n{{\"path\": \"f\", \"edits\": [\
         {{\"set_line\": {{\"anchor\": \"{a}\", \"new_text\": \"\\tx \\\"q\\\" \\u00e9\\r\\ny\"}}}},\
         {{\"insert_after\": {{\"anchor\": \"{b}\", \"text\": \"plain\"}}}}]}}\n```\n"
    );
    let (parsed, out) = apply(&[("f", content)], &reply);
    assert!(failed(&out).is_empty(), "{out:?}");
    assert_eq!(parsed.edits[0].summary, format!("set line {a} (2 lines)"));
    assert_eq!(written(&out, "f"), "\tx \"q\" \u{e9}\ny\nb\nplain\nc\n");
    // A payload whose JSON string was altered fails its edit, saying why.
    let mut edits = parsed.edits.clone();
    edits[0].payload = edits[0].payload.replace("\\\"\\\\tx", "\\\"\\\\z");
    let out = Plugin::apply(&Hashline, vec![File::new("f", content)], edits, &[]).unwrap();
    assert!(out.outcomes[0].message.contains("cannot be read"), "{:?}", out.outcomes[0]);
}

/// The operation-key check as first written: each line that is no diff
/// line, each name's matches in it.
fn has_op_key_by_line(reply: &str) -> bool {
    agent_apply_sdk::text::lines_with_endings(reply).filter(|l| !l.starts_with(['+', '-'])).any(|line| {
        super::OPS
            .iter()
            .any(|op| line.match_indices(op).any(|(at, _)| line[at + op.len()..].trim_start().starts_with(':')))
    })
}

proptest! {
    #[test]
    fn the_operation_key_is_found_in_the_whole_reply_as_line_by_line(
        pieces in proptest::collection::vec(
            prop::sample::select(vec!["\"set_line\"", "\"insert_after\"", "\"replace_lines\"", ":", " ", "\t", "\n", "\r\n", "+", "-", "x", "{", "\""]),
            0..24,
        )
    ) {
        let reply: String = pieces.concat();
        prop_assert_eq!(super::has_op_key(&reply), has_op_key_by_line(&reply));
    }
}

proptest! {
    /// A kept JSON text's lines are its unescaped text's lines, whether they
    /// are read in place (only `\n` escapes) or from an unescaped copy.
    #[test]
    fn kept_json_text_reads_as_its_unescaped_lines(text in "[a\n\r\"é]{0,12}") {
        let raw = serde_json::to_string(&text).expect("a string");
        let json = agent_apply_sdk::json::JsonString::from_raw(&raw).expect("a JSON string");
        let lines = json.line_count() as u32;
        let kept = super::NewText::Json { json, lines };
        let expected = super::NewLines::of_text(&text);
        let got = kept.lines().expect("readable");
        prop_assert_eq!(got.iter().collect::<Vec<_>>(), expected.iter().collect::<Vec<_>>());
    }
}
