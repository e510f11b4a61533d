//! Payloads kept in the instance between `parse` and `apply`.
//!
//! A payload crosses the contract as text, JSON by default: encoded in
//! `parse`, copied to the host, copied back and decoded in `apply`. On a
//! large reply that is most of the plugin's time and three copies of the
//! reply in memory. When the host says it will give the edits back to the
//! same instance (the [`KEEP_PAYLOADS`] option), the typed payloads stay
//! here and each edit's payload is a short reference to one of them.
//! Only the latest `parse`'s are kept; a reference to an older one is an
//! error naming the edit, never a wrong edit.

use std::any::Any;
use std::cell::RefCell;

/// The option a host sets on `parse` when it will call `apply` of the same
/// instance with the edits it returns.
pub const KEEP_PAYLOADS: &str = "keep-payloads";

/// How a kept payload's reference starts; JSON never starts so.
const PREFIX: &str = "kept:";

/// The typed payloads of the latest `parse`, by index: one vector of the
/// format's own type (a box per payload cost a reply of 20,000 edits
/// 20,000 allocations, and the instance their memory for good).
#[derive(Default)]
pub(crate) struct Kept {
    generation: u64,
    /// A `Vec<Option<Op>>` of the format's `Op`.
    ops: Option<Box<dyn Any>>,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::default();
}

/// Runs `f` with this instance's kept payloads.
pub(crate) fn with<R>(f: impl FnOnce(&mut Kept) -> R) -> R {
    KEPT.with(|kept| f(&mut kept.borrow_mut()))
}

impl Kept {
    /// Keep `ops` in place of any kept before; returns their references.
    pub(crate) fn keep<Op: 'static>(&mut self, ops: impl IntoIterator<Item = Op>) -> Vec<String> {
        self.forget();
        let ops: Vec<Option<Op>> = ops.into_iter().map(Some).collect();
        // One `format!` a reference cost a reply of 20,000 edits a thousand
        // instructions an edit: the prefix is written once.
        let prefix = format!("{PREFIX}{}:", self.generation);
        let references = (0..ops.len()).map(|index| crate::message!(prefix, index)).collect();
        self.ops = Some(Box::new(ops));
        references
    }

    /// Keep nothing: a `parse` that keeps no payloads makes those of the
    /// one before it stale, to `apply` as to `apply-kept`.
    pub(crate) fn forget(&mut self) {
        self.generation += 1;
        self.ops = None;
    }

    /// The payload `payload` refers to, taken out until [`Kept::put_back`];
    /// `None` when `payload` is no reference (JSON, say).
    pub(crate) fn take<Op: 'static>(&mut self, payload: &str) -> Option<Result<(usize, Op), String>> {
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
        let taken = self.take_at(index).map_err(|why| format!("the payload reference {payload:?} {why}"));
        Some(taken.map(|op| (index, op)))
    }

    /// The payloads at `indexes` of the latest `parse`, in that order, taken
    /// out until [`Kept::put_back`]. An error names the first index that
    /// has none (and takes nothing).
    pub(crate) fn take_all<Op: 'static>(&mut self, indexes: &[u32]) -> Result<Vec<Op>, String> {
        if self.ops.is_none() {
            return Err("this instance keeps no edits: no parse with the keep-payloads option came first".into());
        }
        let mut taken = Vec::with_capacity(indexes.len());
        for (position, &index) in indexes.iter().enumerate() {
            match self.take_at(index as usize) {
                Ok(op) => taken.push(op),
                Err(why) => {
                    indexes.iter().zip(taken).for_each(|(&at, op)| self.put_back(at as usize, op));
                    return Err(format!("edit {position} (index {index}) {why}"));
                }
            }
        }
        Ok(taken)
    }

    fn take_at<Op: 'static>(&mut self, index: usize) -> Result<Op, &'static str> {
        let Some(ops) = self.ops.as_mut().and_then(|ops| ops.downcast_mut::<Vec<Option<Op>>>()) else {
            return Err("is of another type");
        };
        ops.get_mut(index).and_then(Option::take).ok_or("names no payload, or one given twice")
    }

    /// Keep `op` again at `index`, for the next `apply` of the same edits.
    pub(crate) fn put_back<Op: 'static>(&mut self, index: usize, op: Op) {
        let ops = self.ops.as_mut().and_then(|ops| ops.downcast_mut::<Vec<Option<Op>>>());
        if let Some(slot) = ops.and_then(|ops| ops.get_mut(index)) {
            *slot = Some(op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_taken_before_a_parse_kept_something() {
        assert!(Kept::default().take_all::<String>(&[0]).unwrap_err().contains("keeps no edits"));
    }

    #[test]
    fn a_reference_gives_its_payload_once_until_put_back_and_only_of_the_latest_parse() {
        let mut kept = Kept::default();
        let first = kept.keep(vec!["a".to_string(), "b".to_string()]);
        assert_eq!(first, ["kept:1:0", "kept:1:1"]);
        assert_eq!(kept.take::<String>("{\"json\": 1}"), None);
        assert_eq!(kept.take::<String>(&first[1]), Some(Ok((1, "b".to_string()))));
        assert!(kept.take::<String>(&first[1]).unwrap().unwrap_err().contains("given twice"));
        kept.put_back(1, "b".to_string());
        assert_eq!(kept.take::<String>(&first[1]), Some(Ok((1, "b".to_string()))));
        assert!(kept.take::<u32>(&first[0]).unwrap().unwrap_err().contains("another type"));
        kept.put_back(1, "b".to_string());
        assert_eq!(kept.take_all::<String>(&[1, 0]), Ok(vec!["b".to_string(), "a".to_string()]));
        assert!(kept.take_all::<String>(&[1]).unwrap_err().contains("given twice"));
        kept.put_back(0, "a".to_string());
        kept.put_back(1, "b".to_string());
        let refused = kept.take_all::<String>(&[0, 2]).unwrap_err();
        assert!(refused.starts_with("edit 1 (index 2) names no payload"), "{refused}");
        assert_eq!(kept.take_all::<String>(&[0]), Ok(vec!["a".to_string()]), "a refused request takes nothing");
        let second = kept.keep(vec!["c".to_string()]);
        assert!(kept.take::<String>(&first[0]).unwrap().unwrap_err().contains("earlier parse"));
        assert!(kept.take::<String>("kept:x").unwrap().unwrap_err().contains("malformed"));
        assert_eq!(kept.take::<String>(&second[0]), Some(Ok((0, "c".to_string()))));
    }
}
