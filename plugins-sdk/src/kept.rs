//! Edits kept in the instance between `parse` and `apply`.
//!
//! A payload crosses the contract as text, JSON by default: encoded in
//! `parse`, copied to the host, copied back and decoded in `apply`. On a
//! large reply that is most of the plugin's time and three copies of the
//! reply in memory. When the host says it will give the edits back to the
//! same instance (the [`KEEP_PAYLOADS`] option), the parsed edits stay here
//! and each edit's payload is a short reference to one of them; a host of
//! contract 0.2 names them by index instead (`apply-kept`). Only the latest
//! `parse`'s are kept; a reference to an older one is an error naming the
//! edit, never a wrong edit.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;

use crate::format::{ParsedEdit, PathNumbers};
use crate::types::{Edit, Span};

/// The option a host sets on `parse` when it will call `apply` of the same
/// instance with the edits it returns.
pub const KEEP_PAYLOADS: &str = "keep-payloads";

/// The [`KEEP_PAYLOADS`] value of a host that gives the edits back by index
/// alone (contract 0.2's `apply-kept`): their payloads are then left empty,
/// sparing a large reply a string an edit each way.
pub const KEEP_BY_INDEX: &str = "by-index";

/// How a kept payload's reference starts; JSON never starts so.
pub(crate) const PREFIX: &str = "kept:";

/// The edits of the latest `parse`, in its order, as one [`KeptEdits`] of
/// the format's own type (a box per edit cost a reply of 20,000 edits
/// 20,000 allocations, and the instance their memory for good).
#[derive(Default)]
pub(crate) struct Kept {
    generation: u64,
    /// A [`KeptEdits`] of the format's `Op`.
    edits: Option<Box<dyn Any>>,
}

/// Each parsed edit, by field, each kept as small as it goes: a path once
/// per file, related paths and summaries only where there are any. The
/// contract's copies of a large reply's edits are beside them when `parse`
/// returns, its instance's high-water mark, which grows by 2 MiB steps.
struct KeptEdits<Op> {
    paths: Vec<String>,
    /// Each edit's path, as an index into `paths`.
    path_of: Vec<u32>,
    spans: Vec<Span>,
    /// Each edit's summary; none kept for a format whose `apply` reads none.
    summaries: Vec<String>,
    /// The related paths of the edits that have any.
    related: HashMap<u32, Vec<String>>,
    /// Each edit's payload; `None` while `apply` has it.
    ops: Vec<Option<Op>>,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::default();
}

/// Runs `f` with this instance's kept edits.
pub(crate) fn with<R>(f: impl FnOnce(&mut Kept) -> R) -> R {
    KEPT.with(|kept| f(&mut kept.borrow_mut()))
}

impl Kept {
    /// Keep `parsed` in place of any kept before, their summaries only if
    /// `summaries` ([`crate::Format::apply_reads_summaries`]); returns the
    /// contract's edits, with their summaries if `shown`
    /// ([`crate::format::SUMMARIES`]), each payload a reference to its kept
    /// edit if `references`, else empty.
    pub(crate) fn keep<Op: 'static>(
        &mut self,
        parsed: Vec<ParsedEdit<Op>>,
        summaries: bool,
        shown: bool,
        references: bool,
    ) -> Vec<Edit> {
        self.forget();
        let count = parsed.len();
        let mut kept = KeptEdits {
            paths: Vec::new(),
            path_of: Vec::with_capacity(count),
            spans: Vec::with_capacity(count),
            summaries: Vec::with_capacity(if summaries { count } else { 0 }),
            related: HashMap::new(),
            ops: Vec::with_capacity(count),
        };
        // One `format!` a reference cost a reply of 20,000 edits a thousand
        // instructions an edit: the prefix is written once.
        let prefix = format!("{PREFIX}{}:", self.generation);
        // Numbered while the edits are read; only the paths are kept.
        let mut numbers = PathNumbers::default();
        let edits = parsed
            .into_iter()
            .enumerate()
            .map(|(index, ParsedEdit { path, related_paths, span, summary, op })| {
                kept.path_of.push(numbers.number(&path));
                kept.spans.push(span);
                let summary = match (summaries, shown) {
                    (true, true) => {
                        kept.summaries.push(summary.clone());
                        summary
                    }
                    (true, false) => {
                        kept.summaries.push(summary);
                        String::new()
                    }
                    (false, true) => summary,
                    (false, false) => String::new(),
                };
                if !related_paths.is_empty() {
                    kept.related.insert(index as u32, related_paths.clone());
                }
                kept.ops.push(Some(op));
                let payload = if references { crate::message!(prefix, index) } else { String::new() };
                Edit { path, related_paths, span, summary, payload }
            })
            .collect();
        kept.paths = numbers.into_paths();
        self.edits = Some(Box::new(kept));
        edits
    }

    /// Keep nothing: a `parse` that keeps no payloads makes those of the
    /// one before it stale, to `apply` as to `apply-kept`.
    pub(crate) fn forget(&mut self) {
        self.generation += 1;
        self.edits = None;
    }

    /// The index of the kept edit `payload` refers to; `None` when
    /// `payload` is no reference (JSON, say).
    pub(crate) fn index_of(&self, payload: &str) -> Option<Result<u32, String>> {
        let reference = payload.strip_prefix(PREFIX)?;
        let parsed = reference.split_once(':').and_then(|(g, i)| Some((g.parse::<u64>().ok()?, i.parse().ok()?)));
        let Some((generation, index)) = parsed else {
            return Some(Err(format!("the payload reference {payload:?} is malformed")));
        };
        if generation != self.generation {
            return Some(Err(format!(
                "the payload reference {payload:?} is of an earlier parse than this instance holds (parse {})",
                self.generation
            )));
        }
        Some(Ok(index))
    }

    /// `f` of the kept edits at `indexes`, in that order; kept again after.
    /// An error names the first index that is past the kept edits or given
    /// twice, and takes nothing.
    pub(crate) fn with_selected<Op: 'static, R>(
        &mut self,
        indexes: &[u32],
        f: impl FnOnce(&[ParsedEdit<Op>]) -> R,
    ) -> Result<R, String> {
        let Some(kept) = self.edits.as_mut() else {
            return Err("this instance keeps no edits: no parse with the keep-payloads option came first".into());
        };
        let Some(kept) = kept.downcast_mut::<KeptEdits<Op>>() else {
            return Err("the kept edits are of another type".into());
        };
        let mut selected = Vec::with_capacity(indexes.len());
        for (position, &index) in indexes.iter().enumerate() {
            let refused = match kept.ops.get_mut(index as usize).map(Option::take) {
                None => "names no kept edit",
                Some(None) => "is given twice",
                Some(Some(op)) => {
                    selected.push(kept.edit(index as usize, op));
                    continue;
                }
            };
            kept.put_back(indexes, selected);
            return Err(format!("edit {position} (index {index}) {refused}"));
        }
        let result = f(&selected);
        kept.put_back(indexes, selected);
        Ok(result)
    }
}

impl<Op> KeptEdits<Op> {
    /// Edit `index` whole again, with its payload `op`, its summary and
    /// related paths taken out until [`KeptEdits::put_back`].
    fn edit(&mut self, index: usize, op: Op) -> ParsedEdit<Op> {
        ParsedEdit {
            path: self.paths[self.path_of[index] as usize].clone(),
            related_paths: self.related.remove(&(index as u32)).unwrap_or_default(),
            span: self.spans[index],
            summary: self.summaries.get_mut(index).map(std::mem::take).unwrap_or_default(),
            op,
        }
    }

    fn put_back(&mut self, indexes: &[u32], selected: Vec<ParsedEdit<Op>>) {
        for (&index, edit) in indexes.iter().zip(selected) {
            if let Some(summary) = self.summaries.get_mut(index as usize) {
                *summary = edit.summary;
            }
            if !edit.related_paths.is_empty() {
                self.related.insert(index, edit.related_paths);
            }
            self.ops[index as usize] = Some(edit.op);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Edits of two files, each its word as its payload, at its own span;
    /// every fourth also moves its file (a related path).
    fn parsed(words: &[&str]) -> Vec<ParsedEdit<String>> {
        let path = |i: usize| if i % 3 == 2 { "b.py" } else { "a.py" };
        let edit = |(i, w): (usize, &&str)| {
            let span = Span { start: i as u32, end: i as u32 + 1, first_line: 1, last_line: 1 };
            let mut edit = ParsedEdit::new(path(i), span, format!("edit {w}"), w.to_string());
            if i % 4 == 3 {
                edit.related_paths = vec![format!("moved/{w}.py")];
            }
            edit
        };
        words.iter().enumerate().map(edit).collect()
    }

    fn kept_of(words: &[&str]) -> (Kept, Vec<String>) {
        let mut kept = Kept::default();
        let edits = kept.keep(parsed(words), true, true, true);
        (kept, edits.into_iter().map(|edit| edit.payload).collect())
    }

    /// The payloads of a selection, checked against each one's path.
    fn selected(kept: &mut Kept, indexes: &[u32]) -> Result<Vec<String>, String> {
        kept.with_selected::<String, _>(indexes, |edits| {
            let related =
                |e: &ParsedEdit<String>| e.related_paths.iter().map(|p| format!(" -> {p}")).collect::<String>();
            edits
                .iter()
                .map(|e| format!("{}@{}:{}{} ({})", e.op, e.path, e.span.start, related(e), e.summary))
                .collect()
        })
    }

    #[test]
    fn the_contract_edits_keep_their_paths_and_summaries_and_refer_to_the_kept_ones_if_asked() {
        let cases =
            [(true, true, true), (false, true, true), (true, true, false), (true, false, true), (false, false, false)];
        for (summaries, shown, references) in cases {
            let mut kept = Kept::default();
            let edits = kept.keep(parsed(&["a", "b", "c"]), summaries, shown, references);
            let seen: Vec<_> =
                edits.iter().map(|e| (e.path.as_str(), e.summary.as_str(), e.payload.as_str())).collect();
            let reference = |r: &'static str| if references { r } else { "" };
            let summary = |s: &'static str| if shown { s } else { "" };
            let expected = [
                ("a.py", summary("edit a"), reference("kept:1:0")),
                ("a.py", summary("edit b"), reference("kept:1:1")),
                ("b.py", summary("edit c"), reference("kept:1:2")),
            ];
            assert_eq!(seen, expected);
            let selected = selected(&mut kept, &[2]).unwrap();
            assert_eq!(selected, [if summaries { "c@b.py:2 (edit c)" } else { "c@b.py:2 ()" }]);
        }
    }

    #[test]
    fn nothing_is_selected_before_a_parse_kept_something() {
        assert!(selected(&mut Kept::default(), &[0]).unwrap_err().contains("keeps no edits"));
    }

    #[test]
    fn a_reference_names_its_index_only_of_the_latest_parse() {
        let (mut kept, first) = kept_of(&["a", "b"]);
        assert_eq!(first, ["kept:1:0", "kept:1:1"]);
        assert_eq!(kept.index_of("{\"json\": 1}"), None);
        assert_eq!(kept.index_of(&first[1]), Some(Ok(1)));
        assert!(kept.index_of("kept:x").unwrap().unwrap_err().contains("malformed"));
        let second = kept.keep(parsed(&["c"]), true, true, true);
        assert!(kept.index_of(&first[0]).unwrap().unwrap_err().contains("earlier parse"));
        assert_eq!(kept.index_of(&second[0].payload), Some(Ok(0)));
        kept.forget();
        assert!(kept.index_of(&second[0].payload).unwrap().unwrap_err().contains("earlier parse"));
        assert!(selected(&mut kept, &[0]).unwrap_err().contains("keeps no edits"));
    }

    #[test]
    fn a_selection_past_the_kept_edits_or_with_an_index_twice_is_refused_whole() {
        let (mut kept, _) = kept_of(&["a", "b", "c"]);
        assert_eq!(selected(&mut kept, &[0, 3]).unwrap_err(), "edit 1 (index 3) names no kept edit");
        assert_eq!(selected(&mut kept, &[2, 1, 2]).unwrap_err(), "edit 2 (index 2) is given twice");
        assert!(kept.with_selected::<u32, _>(&[0], |_| ()).unwrap_err().contains("another type"));
        assert_eq!(
            selected(&mut kept, &[2, 0, 1]).unwrap(),
            ["c@b.py:2 (edit c)", "a@a.py:0 (edit a)", "b@a.py:1 (edit b)"]
        );
    }

    proptest! {
        /// Any selection gives the edits at its indexes in its order, each
        /// with its own path and summary, and keeps every edit for the next one.
        #[test]
        fn a_selection_gives_its_edits_in_order_and_keeps_every_edit(
            len in 0usize..40,
            picks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..40),
        ) {
            let words: Vec<String> = (0..len).map(|i| format!("e{i}")).collect();
            let mut kept = Kept::default();
            let edits = kept.keep(parsed(&words.iter().map(String::as_str).collect::<Vec<_>>()), true, true, true);
            let related = |e: &Edit| e.related_paths.iter().map(|p| format!(" -> {p}")).collect::<String>();
            let words: Vec<String> = edits
                .iter()
                .zip(&words)
                .map(|(e, w)| format!("{w}@{}:{}{} ({})", e.path, e.span.start, related(e), e.summary))
                .collect();
            let mut indexes: Vec<u32> = Vec::new();
            if len > 0 {
                for pick in picks {
                    let index = pick.index(len) as u32;
                    if !indexes.contains(&index) {
                        indexes.push(index);
                    }
                }
            }
            let expected: Vec<String> = indexes.iter().map(|&i| words[i as usize].clone()).collect();
            prop_assert_eq!(selected(&mut kept, &indexes).unwrap(), expected);
            let all: Vec<u32> = (0..len as u32).collect();
            prop_assert_eq!(selected(&mut kept, &all).unwrap(), words);
        }
    }
}
