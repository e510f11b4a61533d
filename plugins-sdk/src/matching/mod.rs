//! The matching ladder: find where a block of old lines sits in a file, and
//! replace it, tolerating the drift models introduce, but never guessing.
//!
//! Levels, tried in order:
//! exact → ignoring trailing whitespace → ignoring leading whitespace (the
//! replacement is re-indented by the same offset) → `...` elision lines (each
//! piece found once, in order) → Unicode look-alikes folded (curly quotes,
//! dashes, non-breaking spaces) → optional fuzzy similarity with a clear
//! margin over the runner-up.
//!
//! **At every level the match must be unique.** Two or more places is an
//! `ambiguous` failure naming their line numbers; the first hit is never
//! edited silently.
//!
//! Cost is linear in the file: each level hashes every line once (lazily,
//! only when the level is reached) and chains the line hashes into an index.
//! A search starts from the block's rarest line and verifies only the places
//! that line occurs, so a reply with thousands of blocks costs thousands of
//! lookups, not thousands of scans; a block made only of common lines (blank
//! lines, braces) slides a rolling hash over the file instead.
//!
//! [`replace_block`] is the one-call entry point. [`Haystack`] and

mod index;
mod reindent;
mod replace;
mod similar;
mod splice;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

pub use index::*;
pub use reindent::*;
pub use replace::*;
pub use similar::*;
pub use splice::*;
// The parts use each other's crate-private items through `super::*`.
#[allow(unused_imports)]
use {index::*, reindent::*, replace::*, similar::*, splice::*};

use crate::types::{FailureKind, LevelCount, LineRange, MatchInfo};

/// How far a match had to bend to be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Byte for byte (line endings aside).
    Exact,
    /// Ignoring whitespace at the ends of lines.
    TrailingWhitespace,
    /// Ignoring indentation; the replacement is re-indented to match.
    LeadingWhitespace,
    /// Pieces between `...` lines, each found once, in order.
    Elision,
    /// Curly quotes, dashes and non-breaking spaces folded to ASCII.
    Unicode,
    /// Similar enough, with a clear margin over the runner-up (opt-in).
    Fuzzy,
}

impl Level {
    /// A short machine name: `exact`, `trailing-whitespace`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::TrailingWhitespace => "trailing-whitespace",
            Level::LeadingWhitespace => "leading-whitespace",
            Level::Elision => "elision",
            Level::Unicode => "unicode",
            Level::Fuzzy => "fuzzy",
        }
    }

    /// How the match was made, for messages: "ignoring indentation".
    pub fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWhitespace => "ignoring trailing whitespace",
            Level::LeadingWhitespace => "ignoring indentation",
            Level::Elision => "around `...` elision lines",
            Level::Unicode => "ignoring look-alike characters (quotes, dashes, spaces)",
            Level::Fuzzy => "by fuzzy similarity",
        }
    }

    fn key_slot(self) -> usize {
        match self {
            Level::Exact => 0,
            Level::TrailingWhitespace => 1,
            Level::LeadingWhitespace | Level::Elision => 2,
            Level::Unicode | Level::Fuzzy => 3,
        }
    }
}

/// The line levels [`find_block`] tries, in order (elision and fuzzy are
/// handled separately).
pub const LINE_LEVELS: [Level; 4] = [Level::Exact, Level::TrailingWhitespace, Level::LeadingWhitespace, Level::Unicode];

/// Knobs of the ladder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LadderOptions {
    /// Enable the fuzzy level: the minimum mean line similarity (0.0–1.0) a
    /// window needs. `None` (the default) disables it.
    pub fuzzy: Option<f32>,
    /// How much better than the runner-up the best fuzzy window must score.
    pub fuzzy_margin: f32,
    /// Try the `...` elision level.
    pub elision: bool,
}

impl Default for LadderOptions {
    fn default() -> Self {
        LadderOptions { fuzzy: None, fuzzy_margin: 0.1, elision: true }
    }
}

/// Fold Unicode look-alikes to ASCII: curly quotes and primes to `'`/`"`,
/// dashes and minus signs to `-`, exotic spaces to a space, `…` to `...`;
/// zero-width characters are dropped.
pub fn fold_lookalikes(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}' | '\u{FF07}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}' | '\u{FF02}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => out.push('-'),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => out.push(' '),
            '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
            '\u{2026}' => out.push_str("..."),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line as a level compares it.
pub fn normalize(line: &str, level: Level) -> Cow<'_, str> {
    match level {
        Level::Exact => Cow::Borrowed(line),
        Level::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
        Level::LeadingWhitespace | Level::Elision => Cow::Borrowed(crate::text::trim(line)),
        Level::Unicode | Level::Fuzzy => match fold_lookalikes(crate::text::trim(line)) {
            Cow::Borrowed(s) => Cow::Borrowed(s),
            Cow::Owned(s) => Cow::Owned(s.trim().to_string()),
        },
    }
}
