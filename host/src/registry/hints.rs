//! Which formats a reply may be in, by their detect hints: the contract
//! lets the host skip a format's `detect` for a reply that holds none of
//! its hints. Each skipped format is an instance not made and a copy of
//! the reply not lowered into it: on a reply of megabytes, most of what an
//! undirected run cost beside the format that reads it.

use std::ops::Range;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::side_by_side::side_by_side;

/// For each format (its hints, `None` when not known), whether `reply`
/// holds one of them, ignoring ASCII case: more than the contract asks
/// (a reply that holds a hint exactly holds it so too), and it covers the
/// formats that read a word in any case (a ```` ```Diff ```` fence).
/// A format with no hints, or unknown ones, may always be in it.
///
/// The search looks for the leftmost hint of the formats not yet found,
/// and goes on from there without the format it found: a hint as common as
/// `:` is dropped at its first place, and the rest of a large reply is
/// scanned for the rare hints alone.
///
/// A reply of megabytes is read in pieces side by side, one a core: the
/// automaton reads about 450 MB/s here (it ignores case, so it has no
/// prefilter for this many hints), and proving a format's hints absent
/// means reading every byte: 15% of an undirected 10 MB `whole` run (#27).
pub fn may_hold(reply: &str, hints: &[Option<&[&str]>]) -> Vec<bool> {
    let pieces = if reply.len() < PIECES_FROM_BYTES {
        1
    } else {
        std::thread::available_parallelism().map_or(1, usize::from).min(MOST_PIECES)
    };
    may_hold_in(reply.as_bytes(), hints, pieces)
}

/// A reply this long is read in pieces side by side.
const PIECES_FROM_BYTES: usize = 1 << 20;
/// At most this many pieces (threads).
const MOST_PIECES: usize = 4;

/// [`may_hold`], reading `reply` in `pieces` pieces side by side. Pieces
/// overlap by a hint's length less one, so every place a hint is at lies
/// wholly in one of them.
fn may_hold_in(reply: &[u8], hints: &[Option<&[&str]>], pieces: usize) -> Vec<bool> {
    let longest = hints.iter().flatten().flat_map(|h| h.iter()).map(|hint| hint.len()).max().unwrap_or(0);
    let size = reply.len().div_ceil(pieces.max(1)).max(1);
    // An empty reply is one empty piece.
    let spans: Vec<Range<usize>> = (0..reply.len().max(1))
        .step_by(size)
        .map(|start| start..reply.len().min(start + size + longest.saturating_sub(1)))
        .collect();
    let found = side_by_side(spans.len(), spans.len(), |at| may_hold_within(reply, hints, spans[at].clone()));
    let reduced = found.into_iter().reduce(|mut may, theirs| {
        may.iter_mut().zip(theirs).for_each(|(may, theirs)| *may |= theirs);
        may
    });
    reduced.expect("a reply is one piece at least")
}

/// [`may_hold`] for the hints that lie wholly within `span` of `reply`.
fn may_hold_within(reply: &[u8], hints: &[Option<&[&str]>], span: Range<usize>) -> Vec<bool> {
    let mut may: Vec<bool> = hints.iter().map(|h| h.is_none_or(|h| h.is_empty())).collect();
    let mut from = span.start;
    loop {
        let (patterns, owners): (Vec<&str>, Vec<usize>) = hints
            .iter()
            .enumerate()
            .filter(|(at, _)| !may[*at])
            .flat_map(|(at, h)| h.unwrap_or_default().iter().map(move |hint| (*hint, at)))
            .unzip();
        if patterns.is_empty() {
            return may;
        }
        let built =
            AhoCorasick::builder().ascii_case_insensitive(true).match_kind(MatchKind::LeftmostFirst).build(&patterns);
        let Ok(matcher) = built else {
            // Hints too many for the automaton: every format is asked.
            return vec![true; hints.len()];
        };
        let Some(found) = matcher.find(Input::new(reply).span(from..span.end)) else { return may };
        may[owners[found.pattern().as_usize()]] = true;
        // Another format's hint may start at the same place.
        from = found.start();
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Whether `text` holds `hint`, ignoring ASCII case: [`may_hold`] for
    /// one hint, as plainly as it can be said.
    fn holds(text: &str, hint: &str) -> bool {
        text.to_ascii_lowercase().contains(&hint.to_ascii_lowercase())
    }

    #[test]
    fn formats_without_hints_are_always_asked() {
        assert_eq!(may_hold("anything", &[None, Some(&[]), Some(&["zzz"])]), [true, true, false]);
        assert_eq!(may_hold("", &[Some(&["a"])]), [false]);
    }

    #[test]
    fn hints_match_in_any_ascii_case() {
        let hints: [Option<&[&str]>; 3] = [Some(&["diff", "@@"]), Some(&["<<<<<"]), Some(&["```", "~~~"])];
        assert_eq!(may_hold("```DIFF\n", &hints), [true, false, true]);
        assert_eq!(may_hold("~~~\n<<<<<<< SEARCH", &hints), [false, true, true]);
    }

    proptest! {
        /// One pass for every format says what asking each hint in turn says.
        #[test]
        fn one_pass_is_each_hint_asked_in_turn(
            reply in "[abAB<@`\n ]{0,40}",
            hints in proptest::collection::vec(proptest::option::of(proptest::collection::vec("[abAB<@`]{1,3}", 0..3)), 0..5),
        ) {
            let as_str: Vec<Vec<&str>> = hints.iter().map(|h| h.iter().flatten().map(String::as_str).collect()).collect();
            let given: Vec<Option<&[&str]>> =
                hints.iter().zip(&as_str).map(|(h, s)| h.as_ref().map(|_| s.as_slice())).collect();
            let each: Vec<bool> = given
                .iter()
                .map(|h| h.is_none_or(|h| h.is_empty() || h.iter().any(|hint| holds(&reply, hint))))
                .collect();
            prop_assert_eq!(may_hold(&reply, &given), each.clone());
            // Hints across the places where one piece of the reply ends.
            for pieces in 2..8 {
                prop_assert_eq!(may_hold_in(reply.as_bytes(), &given, pieces), each.clone(), "{} pieces", pieces);
            }
        }
    }
}
