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
/// A reply of megabytes is read in pieces side by side, one a core, and
/// each piece a window at a time, lower-cased into a buffer: proving a
/// format's hints absent means reading every byte, and an automaton that
/// ignores case has no prefilter for this many hints (it read about
/// 450 MB/s here, 15% of an undirected 10 MB `whole` run, #27), while one
/// of lower-case hints over lower-cased text has its SIMD prefilter.
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
        let lowered: Vec<String> = patterns.iter().map(|p| p.to_ascii_lowercase()).collect();
        let Ok(matcher) = AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(&lowered) else {
            // Hints too many for the automaton: every format is asked.
            return vec![true; hints.len()];
        };
        let longest = lowered.iter().map(String::len).max().unwrap_or(0);
        let Some((at, pattern)) = find_lowered(&matcher, reply, from..span.end, longest, WINDOW) else { return may };
        may[owners[pattern]] = true;
        // Another format's hint may start at the same place.
        from = at;
    }
}

/// Bytes of the reply lower-cased and searched at a time.
const WINDOW: usize = 64 << 10;

/// The leftmost match of `matcher` (made of lower-case patterns, the
/// longest `longest` bytes) in `span` of `text` with its ASCII letters
/// lower-cased: where it starts, and which pattern. It is read `size`
/// bytes at a time, lower-cased into a buffer; each window reaches
/// `longest - 1` bytes past the next one's start, so every match that
/// starts in it lies wholly in it. A match found in that overlap may be a
/// shorter hint where a longer one is cut off: the next window decides it.
fn find_lowered(
    matcher: &AhoCorasick,
    text: &[u8],
    span: Range<usize>,
    longest: usize,
    size: usize,
) -> Option<(usize, usize)> {
    let mut window = Vec::with_capacity(size + longest);
    let mut start = span.start;
    loop {
        let end = span.end.min(start + size + longest.saturating_sub(1));
        window.clear();
        window.extend(text[start..end].iter().map(u8::to_ascii_lowercase));
        let last = end == span.end;
        match matcher.find(Input::new(&window)) {
            Some(found) if found.start() < size || last => {
                return Some((start + found.start(), found.pattern().as_usize()));
            }
            _ if last => return None,
            _ => start += size,
        }
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

    #[test]
    fn a_hint_cut_off_by_a_window_is_found_in_the_next() {
        // The first window, "xxxxxab" (four bytes and three of overlap),
        // holds "b" at 6; "abcd" at 5 starts earlier and is the match.
        let matcher = AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(["abcd", "b"]).unwrap();
        assert_eq!(find_lowered(&matcher, b"xxxxxABCD", 0..9, 4, 4), Some((5, 0)));
        assert_eq!(find_lowered(&matcher, b"xxxxxABCD", 0..7, 4, 4), Some((6, 1)), "cut off by the span: not there");
        assert_eq!(find_lowered(&matcher, b"", 0..0, 4, 4), None);
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

        /// Searching lower-cased windows finds what an automaton that
        /// ignores case finds over the whole span: the same place and the
        /// same hint, a longer one cut off by a window's end included.
        #[test]
        fn lower_cased_windows_find_what_ignoring_case_finds(
            text in "[abAB<@`\n ]{0,40}",
            hints in proptest::collection::vec("[abAB<@`]{1,4}", 1..5),
            from in 0usize..40,
            size in 1usize..9,
        ) {
            let span = from.min(text.len())..text.len();
            let lowered: Vec<String> = hints.iter().map(|h| h.to_ascii_lowercase()).collect();
            let longest = lowered.iter().map(String::len).max().unwrap();
            let matcher = AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(&lowered).unwrap();
            let ignoring_case = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .build(&hints)
                .unwrap();
            let expected = ignoring_case
                .find(Input::new(text.as_bytes()).span(span.clone()))
                .map(|m| (m.start(), m.pattern().as_usize()));
            prop_assert_eq!(find_lowered(&matcher, text.as_bytes(), span, longest, size), expected);
        }
    }
}
