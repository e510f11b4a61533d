use super::*;
use crate::format::EditFailure;
use proptest::prelude::*;

fn rep(content: &str, search: &str, replace: &str) -> Result<Replaced, EditFailure> {
    replace_block(content, search, replace, &LadderOptions::default())
}

#[test]
fn exact_match_keeps_crlf_and_missing_final_newline() {
    let out = rep("a\r\nb\r\nc", "b\n", "B\nB2\n").unwrap();
    assert_eq!(out.content, "a\r\nB\r\nB2\r\nc");
    assert_eq!(out.level, Level::Exact);
    assert_eq!(out.lines, LineRange::new(2, 2));
    let out = rep("\u{feff}a\nb", "b\n", "c\n").unwrap();
    assert_eq!(out.content, "\u{feff}a\nc");
    let out = rep("a\nb", "b", "").unwrap();
    assert_eq!(out.content, "a");
}

#[test]
fn trailing_whitespace_drift_keeps_context_bytes() {
    let out = rep("x = 1   \ny = 2\n", "x = 1\ny = 2\n", "x = 1\ny = 3\n").unwrap();
    assert_eq!(out.level, Level::TrailingWhitespace);
    assert_eq!(out.content, "x = 1   \ny = 3\n");
}

#[test]
fn indentation_drift_reindents_the_replacement() {
    let file = "class A:\n    def f(self):\n        return 1\n";
    let out = rep(file, "def f(self):\n    return 1\n", "def f(self):\n    if x:\n        return 2\n").unwrap();
    assert_eq!(out.level, Level::LeadingWhitespace);
    assert_eq!(out.content, "class A:\n    def f(self):\n        if x:\n            return 2\n");
    let tabs = "fn a() {\n\tif x {\n\t\ty();\n\t}\n}\n";
    let out =
        rep(tabs, "    if x {\n        y();\n    }\n", "    if x {\n        y();\n        z();\n    }\n").unwrap();
    assert_eq!(out.content, "fn a() {\n\tif x {\n\t\ty();\n\t\tz();\n\t}\n}\n");
}

#[test]
fn ambiguity_is_an_error_at_every_level() {
    let err = rep("a\nx\nb\nx\n", "x\n", "y\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::Ambiguous);
    assert!(err.message.contains("lines 2, 4"), "{}", err.message);
    let err = rep("  x\n    x\n", "x\n", "y\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::Ambiguous);
    let err = rep("a \u{2014} b\na - b \n", "a -- b\n", "c\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::NotFound);
}

#[test]
fn elision_pieces_are_found_in_order() {
    let file = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n";
    let out = rep(file, "def f():\n    ...\n    return a\n", "def f():\n    ...\n    return a + c\n").unwrap();
    assert_eq!(out.level, Level::Elision);
    assert_eq!(out.content, "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + c\n");
    let out = rep(file, "def f():\n    # ...\n    return a\n", "def g():\n    return 0\n").unwrap();
    assert_eq!(out.content, "def g():\n    return 0\n");
}

#[test]
fn a_replacement_that_leaves_code_out_is_refused() {
    let err = rep("a\nb\nc\n", "a\nb\n", "a2\n# ... rest unchanged ...\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::Forbidden);
    // The same placeholder on both sides is the elision level, not a loss.
    let out = rep("a\nb\nc\n", "a\n# ...\nc\n", "A\n# ...\nc\n").unwrap();
    assert_eq!(out.content, "A\nb\nc\n");
    // A Python stub body is code.
    let out = rep("x\n", "x\n", "def f():\n    ...\n").unwrap();
    assert_eq!(out.content, "def f():\n    ...\n");
}

#[test]
fn lookalikes_are_folded() {
    let file = "msg = \u{201c}it\u{2019}s \u{2014} ok\u{201d}\nx\u{a0}= 1\n";
    let out = rep(file, "msg = \"it's - ok\"\n", "msg = \"fine\"\n").unwrap();
    assert_eq!(out.level, Level::Unicode);
    assert_eq!(out.content, "msg = \"fine\"\nx\u{a0}= 1\n");
}

#[test]
fn not_found_hints_the_closest_lines_and_stray_lines() {
    let file = "one\ntwo\nthree\nfour\n";
    let err = rep(file, "two\nthree and a half\n", "x\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::NotFound);
    let hint = err.hint.unwrap();
    assert!(hint.contains("2| two"), "{hint}");
    assert!(hint.contains("three and a half"), "{hint}");
}

#[test]
fn blank_lines_around_the_block_are_forgiven() {
    let out = rep("a\nb\nc", "\nb\n\n", "\nB\n\n").unwrap();
    assert_eq!(out.content, "a\nB\nc");
}

#[test]
fn already_applied_is_detected() {
    let err = rep("a\nfresh = 1\nc\n", "stale = 1\n", "fresh = 1\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::AlreadyApplied);
    let err = rep("a\nB\nc\n", "b\n", "B\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::NotFound);
    let err = rep("import os\nimport sys\n\nx\n", "import os\n", "import os\nimport sys\n").unwrap_err();
    assert_eq!(err.kind, FailureKind::AlreadyApplied);
}

#[test]
fn fuzzy_needs_a_clear_margin() {
    let file = "alpha = compute(1, 2)\nbeta = other(3)\ngamma = 9\n";
    let options = LadderOptions { fuzzy: Some(0.8), ..LadderOptions::default() };
    let out = replace_block(file, "alpha = compute(1, 3)\nbeta = other(3)\n", "z\n", &options).unwrap();
    assert_eq!(out.level, Level::Fuzzy);
    assert_eq!(out.content, "z\ngamma = 9\n");
    assert!(rep(file, "alpha = compute(1, 3)\nbeta = other(3)\n", "z\n").is_err());
    let twice = "f(a, 1)\ng()\nf(a, 2)\ng()\n";
    let err = replace_block(twice, "f(a, 3)\ng()\n", "z\n", &options).unwrap_err();
    assert_eq!(err.kind, FailureKind::Ambiguous);
}

#[test]
fn a_found_block_reports_the_levels_before_it_as_empty() {
    let counts = |m: &MatchInfo| m.candidates.iter().map(|c| (c.level.clone(), c.count)).collect::<Vec<_>>();
    let hay = Haystack::of("def f():\n    return 1   \n");
    let found = find_block(&hay, &["    return 1"], 0..2, &LadderOptions::default()).unwrap();
    let matched = found.match_info();
    assert_eq!(matched.level, "trailing-whitespace");
    assert_eq!(counts(&matched), [("exact".into(), 0), ("trailing-whitespace".into(), 1)]);
    let found = find_block(&hay, &["def f():"], 0..2, &LadderOptions::default()).unwrap();
    assert_eq!(counts(&found.match_info()), [("exact".into(), 1)]);
    // The same as the ladder itself reports for the block.
    let replaced = rep("def f():\n    return 1   \n", "    return 1\n", "    return 2\n").unwrap();
    assert_eq!(replaced.match_info(), found_at(&hay, "    return 1"));
}

fn found_at(hay: &Haystack<'_>, line: &str) -> MatchInfo {
    find_block(hay, &[line], 0..hay.len(), &LadderOptions::default()).unwrap().match_info()
}

#[test]
fn several_blocks_report_the_first_that_bent_and_the_first_relocation() {
    let exact = MatchInfo::at("exact");
    let loose = ladder_match(Level::LeadingWhitespace, &[(Level::Exact, 0), (Level::LeadingWhitespace, 1)]);
    let merged = merge_matches(Some(exact.clone()), loose.clone());
    assert_eq!(merged, loose);
    let merged = merge_matches(Some(merged), MatchInfo::at("trailing-whitespace").relocated_from(9));
    assert_eq!((merged.level.as_str(), merged.relocated, merged.stated_line), ("leading-whitespace", true, Some(9)));
    assert_eq!(merge_matches(None, exact.clone()), exact);
}

#[test]
fn rolling_hash_finds_all_places() {
    let lines: Vec<&str> = "a b a b a".split(' ').collect();
    let hay = Haystack::new(lines);
    assert_eq!(hay.find_all(&["a", "b"], Level::Exact, 0..5, 10), vec![0, 2]);
    assert_eq!(hay.find_all(&["b", "a"], Level::Exact, 2..5, 10), vec![3]);
    assert_eq!(hay.find_all(&["a"], Level::Exact, 0..5, 2), vec![0, 2]);
}

#[test]
fn blocks_at_once_report_lines_as_each_block_saw_the_file() {
    let content = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
    let blocks = [("b\n", "B1\nB2\nB3\n"), ("    h\n", "H\n"), ("k\n", "")];
    let (out, outcomes) = replace_blocks_at_once(content, &blocks, &LadderOptions::default()).expect("one pass");
    assert_eq!(out, "a\nB1\nB2\nB3\nc\nd\ne\nf\ng\nH\ni\nj\nl\n");
    let lines: Vec<(u32, u32)> = outcomes.iter().map(|(_, l, _)| (l.start, l.end)).collect();
    assert_eq!(lines, [(2, 2), (10, 10), (13, 13)], "line 11 is line 13 once block 1 added two lines");
    assert_eq!(outcomes[1].0, Level::LeadingWhitespace);
    // A block whose text an earlier block writes is left to the one-by-one path.
    let chained = [("b\n", "x\n"), ("x\n", "y\n")];
    assert_eq!(replace_blocks_at_once(content, &chained, &LadderOptions::default()), None);
    // A deletion joins the lines around it: without `  fd`, lines 4-5 are a
    // second `eb`/`c`, and the second block is ambiguous one by one.
    let joined = "eb\nc\nx\neb\n  fd\nc\n";
    let deleting = [("  fd\n", ""), ("eb\nc\n", "z\n")];
    assert_eq!(replace_blocks_at_once(joined, &deleting, &LadderOptions::default()), None);
    assert_eq!(replace_block(joined, "  fd\n", "", &LadderOptions::default()).unwrap().content, "eb\nc\nx\neb\nc\n");
}

proptest! {
    /// The ASCII fast paths see a line as `str::trim` and `trim_start` do,
    /// Unicode white space included.
    #[test]
    fn fast_trims_agree_with_the_standard_ones(line in "[ \t\u{b}\u{c}\r\u{a0}\u{3000}\u{85}xé]{0,8}") {
        prop_assert_eq!(leading_ws(&line), &line[..line.len() - line.trim_start().len()]);
        prop_assert_eq!(crate::text::trim_start(&line), line.trim_start());
        for level in [Level::LeadingWhitespace, Level::Unicode] {
            let fast = normalize(&line, level);
            let slow = match level {
                Level::LeadingWhitespace => line.trim().to_string(),
                _ => fold_lookalikes(line.trim()).trim().to_string(),
            };
            prop_assert_eq!(fast.as_ref(), slow.as_str());
        }
    }

    /// A line's key at each level is the hash of the line as that level
    /// sees it, whichever way the key is made.
    #[test]
    fn line_keys_hash_the_normalized_line(line in "[ \t\u{a0}\u{2019}\u{2026}'x.é]{0,24}") {
        for level in [Level::Exact, Level::TrailingWhitespace, Level::LeadingWhitespace, Level::Unicode, Level::Fuzzy] {
            prop_assert_eq!(index::line_key(&line, level), index::hash_str(&normalize(&line, level)));
        }
    }
}

proptest! {
    #[test]
    fn blocks_at_once_equal_blocks_one_by_one(
        lines in proptest::collection::vec("(  )?[a-f]{1,2}", 4..40),
        picks in proptest::collection::vec((0usize..40, 1usize..4, proptest::collection::vec("(  )?[a-h]{1,2}", 0..4), any::<bool>()), 1..6),
        crlf: bool,
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let content: String = lines.iter().map(|l| format!("{l}{eol}")).collect();
        let mut blocks: Vec<(String, String)> = Vec::new();
        for (at, len, replace, drift) in picks {
            let at = at % lines.len();
            let end = (at + len).min(lines.len());
            let search: String = lines[at..end]
                .iter()
                .map(|l| if drift { format!("  {l}\n") } else { format!("{l}\n") })
                .collect();
            blocks.push((search, replace.iter().map(|l| format!("{l}\n")).collect()));
        }
        let pairs: Vec<(&str, &str)> = blocks.iter().map(|(s, r)| (s.as_str(), r.as_str())).collect();
        let options = LadderOptions::default();
        if let Some((at_once, outcomes)) = replace_blocks_at_once(&content, &pairs, &options) {
            let mut current = content.clone();
            for ((search, replace), (level, lines, _)) in pairs.iter().zip(&outcomes) {
                let done = replace_block(&current, search, replace, &options);
                prop_assert!(done.is_ok(), "one by one failed where one pass applied: {:?}", done);
                let done = done.unwrap();
                prop_assert_eq!((done.level, done.lines), (*level, *lines));
                current = done.content;
            }
            prop_assert_eq!(at_once, current);
        }
    }

    #[test]
    fn find_all_agrees_with_a_plain_scan(
        lines in proptest::collection::vec("[ab]{0,2}[ \t]{0,1}", 0..150),
        needle in proptest::collection::vec("[ab]{0,2}", 1..4),
        from in 0usize..150, to in 0usize..160, limit in 1usize..6,
    ) {
        // Few distinct lines: the anchored lookup, the rolling scan and the
        // direct comparison of a small window all run. The second haystack
        // has every level indexed, so its small windows take the index too.
        let hay = Haystack::new(lines.iter().map(String::as_str).collect());
        let indexed = Haystack::new(lines.iter().map(String::as_str).collect());
        let needle: Vec<&str> = needle.iter().map(String::as_str).collect();
        for level in LINE_LEVELS {
            indexed.keys(level);
            let want: Vec<usize> = (from..to.min(lines.len()))
                .filter(|&s| s + needle.len() <= to.min(lines.len()))
                .filter(|&s| (0..needle.len()).all(|j| normalize(&lines[s + j], level) == normalize(needle[j], level)))
                .take(limit)
                .collect();
            prop_assert_eq!(hay.find_all(&needle, level, from..to, limit), want.clone(), "{:?}", level);
            prop_assert_eq!(indexed.find_all(&needle, level, from..to, limit), want, "{:?} indexed", level);
        }
    }

    #[test]
    fn already_applied_around_agrees_with_its_definition(
        lines in proptest::collection::vec("[ab]{0,2}", 1..30),
        start in 0usize..30, len in 1usize..6,
        copied in 0usize..30, jitter in proptest::collection::vec(0u8..6, 1..9),
    ) {
        // The definition: the replacement, at either whitespace level,
        // somewhere that covers the matched lines (from `start`, `len` long;
        // an elision match may be longer than its block, so the block is
        // sometimes shorter than the range). The replacement is copied from
        // the file with white space added, and sometimes a line changed.
        let start = start % lines.len();
        let end = (start + len).min(lines.len());
        let hay = Haystack::new(lines.iter().map(String::as_str).collect());
        let replace: Vec<String> = jitter
            .iter()
            .zip(lines.iter().cycle().skip(copied % lines.len()))
            .map(|(j, line)| match j {
                0 => format!(" {line}"),
                1 => format!("{line}\t"),
                2 => "c".to_string(),
                _ => line.clone(),
            })
            .collect();
        let r: Vec<&str> = replace.iter().map(String::as_str).collect();
        let s: Vec<&str> = hay.lines()[start..end].iter().copied().take(1 + len % 3).collect();
        let covers = |level: Level| {
            (0..hay.len()).filter(|&at| at <= start && at + r.len() >= end && at + r.len() <= hay.len()).find(|&at| {
                (0..r.len()).all(|j| normalize(hay.lines()[at + j], level) == normalize(r[j], level))
            })
        };
        let want = if r.len() <= s.len() || same_lines(&s, &r) {
            None
        } else {
            covers(Level::TrailingWhitespace).or_else(|| covers(Level::LeadingWhitespace))
        };
        let got = already_applied_around(&hay, &s, &r, LineRange::new(start as u32 + 1, end as u32));
        prop_assert_eq!(got.and_then(|f| f.lines).map(|l| l.start as usize - 1), want);
    }

    #[test]
    fn unique_block_replaces_exactly(
        lines in proptest::collection::vec("[a-d ]{0,4}", 1..40),
        start in 0usize..40, len in 1usize..5, crlf: bool, final_nl: bool,
    ) {
        // Without a final newline, a last empty line is not a line at all.
        prop_assume!(final_nl || !lines[lines.len() - 1].is_empty());
        let start = start % lines.len();
        let end = (start + len).min(lines.len());
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut content = lines.join(eol);
        if final_nl { content.push_str(eol); }
        let hay = Haystack::of(&content);
        let needle: Vec<&str> = lines[start..end].iter().map(|s| s.as_str()).collect();
        prop_assume!(hay.find_all(&needle, Level::Exact, 0..lines.len(), 2).len() == 1);
        let search = needle.join("\n") + "\n";
        let result = rep(&content, &search, "NEW\n");
        if let Ok(out) = result {
            let mut expected: Vec<&str> = lines[..start].iter().map(|s| s.as_str()).collect();
            expected.push("NEW");
            expected.extend(lines[end..].iter().map(|s| s.as_str()));
            let mut want = expected.join(eol);
            if final_nl { want.push_str(eol); }
            prop_assert_eq!(out.content, want);
            prop_assert_eq!(out.level, Level::Exact);
        } else {
            // Only a replacement already present may refuse.
            prop_assert_eq!(result.unwrap_err().kind, FailureKind::AlreadyApplied);
        }
    }

    #[test]
    fn never_panics(content in "[a-c \t.\r\n\u{201c}]{0,60}", search in "[a-c \t.\n]{1,20}", replace in "[a-c \t.\n]{0,20}") {
        let _ = replace_block(&content, &search, &replace, &LadderOptions { fuzzy: Some(0.5), ..Default::default() });
    }
}

/// Two-space indents written for a four-space file scale to it, tabs kept
/// where the file uses them.
#[test]
fn reindent_scales_a_consistent_ratio_of_indentation() {
    let scale = Reindent::infer([("  a", "    a"), ("    b", "        b"), ("c", "c")]);
    assert_eq!(scale, Reindent::Scale { num: 2, den: 1, use_tabs: false });
    assert_eq!(scale.apply("      deep"), "            deep");
    let tabs = Reindent::infer([("  a", "\ta"), ("    b", "\t\tb")]);
    assert_eq!(tabs.apply("      c"), "\t\t\tc");
}

proptest! {
    /// Every byte of a line counts in its hash, whatever its length: the
    /// tail is read in overlapping loads, so a byte missed there would let
    /// lines that differ share a key.
    #[test]
    fn a_changed_byte_changes_the_line_hash(line in "[a-c]{1,20}", at in any::<prop::sample::Index>(), to in b'd'..=b'z') {
        let mut changed = line.clone().into_bytes();
        changed[at.index(line.len())] = to;
        let changed = String::from_utf8(changed).unwrap();
        prop_assert_ne!(index::hash_str(&line), index::hash_str(&changed));
    }
}
