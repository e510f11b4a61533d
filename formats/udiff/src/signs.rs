//! What in a reply reads as a unified diff, for `detect`: asked of every
//! reply, in every run that names no format.

use agent_apply_sdk::text::{lines_holding, strip_ending};

use crate::parse::{is_block_marker, is_numbered_hunk_header};

/// The signs of a diff in a reply, each from some line of it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signs {
    /// A SEARCH/REPLACE marker: the reply is editblock's, even in a ```diff fence.
    pub block_marker: bool,
    /// A `diff --git ` line.
    pub git: bool,
    /// An `@@ -a,b +c,d @@` hunk header with its numbers.
    pub numbered: bool,
    /// An `@@` line without them.
    pub bare_hunk: bool,
    /// A `+++ ` line right after a `--- ` line.
    pub headers: bool,
}

impl Signs {
    /// The signs of `reply`. Every sign's line holds a fixed text (a marker
    /// a run of five `<` or `>`, the others start with theirs), so only the
    /// lines around those are read, not every line of a megabyte reply.
    pub fn of(reply: &str) -> Signs {
        let starting = |prefix: &'static str| {
            lines_holding(reply, prefix)
                .map(|(start, line)| (start, strip_ending(line)))
                .filter(move |(_, line)| line.starts_with(prefix))
        };
        let mut signs = Signs {
            block_marker: ["<<<<<", ">>>>>"]
                .into_iter()
                .any(|run| lines_holding(reply, run).any(|(_, line)| is_block_marker(strip_ending(line)))),
            git: starting("diff --git ").next().is_some(),
            headers: starting("+++ ").any(|(start, _)| line_before(reply, start).starts_with("--- ")),
            ..Signs::default()
        };
        for (_, line) in starting("@@") {
            if is_numbered_hunk_header(line) {
                signs.numbered = true;
            } else {
                signs.bare_hunk = true;
            }
        }
        signs
    }
}

/// The line before the one starting at `start` (empty for the first).
fn line_before(text: &str, start: usize) -> &str {
    let before = &text[..start.saturating_sub(1)];
    &text[before.rfind('\n').map_or(0, |i| i + 1)..start]
}

#[cfg(test)]
mod tests {
    use agent_apply_sdk::text::lines_with_endings;
    use proptest::prelude::*;

    use super::*;

    /// The signs by definition: every line read in turn.
    fn signs_line_by_line(reply: &str) -> Signs {
        let mut signs = Signs::default();
        let mut minus = false;
        for line in lines_with_endings(reply).map(strip_ending) {
            signs.block_marker |= is_block_marker(line);
            if line.starts_with("diff --git ") {
                signs.git = true;
            } else if is_numbered_hunk_header(line) {
                signs.numbered = true;
            } else if line.starts_with("@@") {
                signs.bare_hunk = true;
            } else if line.starts_with("+++ ") && minus {
                signs.headers = true;
            }
            minus = line.starts_with("--- ");
        }
        signs
    }

    proptest! {
        #[test]
        fn the_signs_are_those_of_the_lines_read_one_by_one(lines in prop::collection::vec(prop::sample::select(vec![
            "diff --git a/x b/x\n", "--- a/x\n", "--- x\r\n", "+++ b/x\n", "+++ x\r\n", "+++ y", "@@ -1,2 +1,2 @@\n",
            "@@ -1 +1 @@ f\n", "@@ x\n", "@@\n", " x\n", "+x\n", "-x\n", "<<<<<<< SEARCH\n", ">>>>>>> REPLACE\n",
            "  <<<<<<< SEARCH\n", "x <<<<<<< SEARCH\n", "<<<<< x\n", "```diff\n", "text\n", "\n", "a diff --git x\n",
            "x @@ -1 +1 @@\n", "a --- b\n", "---\n",
        ]), 0..10)) {
            let reply = lines.concat();
            prop_assert_eq!(Signs::of(&reply), signs_line_by_line(&reply));
        }
    }
}
