//! Payload text that may be a slice of the reply instead of a copy.
//!
//! A large reply's payloads are mostly its own text: a file's new contents,
//! a hunk's lines, a block's SEARCH text. When the host keeps the payloads
//! in the instance (see [`crate::KEEP_PAYLOADS`]), `parse` keeps the reply
//! too, and a [`ReplyText`] made from a slice of it holds only where the
//! slice is, not its bytes: the instance then holds the reply once instead
//! of the reply and a copy of nearly all of it. Anywhere else (JSON
//! payloads, a native plugin, text the format built) it is an owned string.

use std::cell::RefCell;
use std::fmt;
use std::ops::{Deref, Range};
use std::rc::Rc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

thread_local! {
    /// The reply of the `parse` running now, when its payloads are kept.
    static READING: RefCell<Option<Rc<String>>> = const { RefCell::new(None) };
}

/// Text of a payload: a slice of the kept reply, or its own string. It
/// reads as a `&str`, and serializes as one.
#[derive(Clone)]
pub struct ReplyText(Repr);

#[derive(Clone)]
enum Repr {
    Owned(String),
    InReply { reply: Rc<String>, start: u32, end: u32 },
}

impl ReplyText {
    /// `text` as payload text: where it lies when it is a slice of the
    /// reply being parsed with kept payloads, else a copy.
    ///
    /// Inlined, with the copy out of line: formats make one for each line
    /// of a hunk, and the call and the copy's setup were most of its cost.
    #[inline]
    pub fn new(text: &str) -> Self {
        let within = READING.with(|reading| {
            let reading = reading.borrow();
            let reply = reading.as_ref()?;
            let offset = (text.as_ptr() as usize).wrapping_sub(reply.as_ptr() as usize);
            // A text before the reply wraps around to an offset past it.
            (offset <= reply.len() && text.len() <= reply.len() - offset).then(|| {
                ReplyText(Repr::InReply {
                    reply: Rc::clone(reply),
                    start: offset as u32,
                    end: (offset + text.len()) as u32,
                })
            })
        });
        within.unwrap_or_else(|| Self::copied(text))
    }

    #[cold]
    #[inline(never)]
    fn copied(text: &str) -> Self {
        ReplyText(Repr::Owned(text.to_string()))
    }

    /// `lines`, each ended by a newline ([`crate::text::joined_lines`]):
    /// the slice of the reply they are when they follow each other there,
    /// each ended by `\n`, else a copy.
    pub fn joined<L: AsRef<str>>(lines: &[L]) -> Self {
        let within = READING.with(|reading| {
            let reading = reading.borrow();
            let reply = reading.as_ref()?;
            let (base, bytes) = (reply.as_ptr() as usize, reply.as_bytes());
            let mut range: Option<Range<usize>> = None;
            for line in lines {
                let line = line.as_ref();
                let offset = (line.as_ptr() as usize).checked_sub(base)?;
                if range.as_ref().is_some_and(|range| range.end != offset) {
                    return None;
                }
                let stop = offset.checked_add(line.len())?;
                // A line of the reply is followed by its `\n` there.
                (bytes.get(stop) == Some(&b'\n')).then_some(())?;
                range = Some(range.map_or(offset, |range| range.start)..stop + 1);
            }
            range.map(|range| (Rc::clone(reply), range))
        });
        match within {
            Some((reply, Range { start, end })) => {
                ReplyText(Repr::InReply { reply, start: start as u32, end: end as u32 })
            }
            None => ReplyText(Repr::Owned(crate::text::joined_lines(lines))),
        }
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(text) => text,
            // SAFETY: `start..end` was taken from a `&str` within this reply
            // (`new`), or runs from one's start to just past a `\n` (`joined`):
            // both ends are char boundaries, and the reply never changes.
            // Payload text is read line by line; the checks of `&reply[..]`
            // were a share of reading a 10 MB reply's hunks.
            Repr::InReply { reply, start, end } => unsafe { reply.get_unchecked(*start as usize..*end as usize) },
        }
    }

    /// Whether the text is a slice of a kept reply (for tests of formats).
    pub fn is_in_reply(&self) -> bool {
        matches!(self.0, Repr::InReply { .. })
    }
}

/// Runs `parse` with `reply` as the reply [`ReplyText::new`] slices (the
/// host keeps payloads; replies over 4 GiB are copied as before).
pub(crate) fn reading<R>(reply: Rc<String>, parse: impl FnOnce(&str) -> R) -> R {
    let text = Rc::clone(&reply);
    if u32::try_from(reply.len()).is_ok() {
        READING.with(|reading| *reading.borrow_mut() = Some(reply));
    }
    let result = parse(&text);
    READING.with(|reading| *reading.borrow_mut() = None);
    result
}

impl Deref for ReplyText {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ReplyText {
    #[inline]
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for ReplyText {
    fn from(text: String) -> Self {
        ReplyText(Repr::Owned(text))
    }
}

impl From<&str> for ReplyText {
    fn from(text: &str) -> Self {
        ReplyText::new(text)
    }
}

impl PartialEq for ReplyText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ReplyText {}

impl PartialEq<str> for ReplyText {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ReplyText {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for ReplyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ReplyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ReplyText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReplyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ReplyText::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_of_the_reply_being_read_is_kept_as_where_it_lies() {
        let reply = Rc::new("a\nbcd\ne\n".to_string());
        let (inside, outside) = reading(Rc::clone(&reply), |text| {
            (ReplyText::new(&text[2..6]), ReplyText::new(&format!("{}x", &text[2..6])))
        });
        assert!(inside.is_in_reply() && inside == "bcd\n");
        assert!(!outside.is_in_reply() && outside == "bcd\nx");
        // Once parse is over, a slice of the same text is a copy: nothing
        // of a later parse is mistaken for a slice of this reply.
        assert!(!ReplyText::new(&reply[2..6]).is_in_reply());
        assert_eq!(serde_json::to_string(&inside).unwrap(), "\"bcd\\n\"");
        let back: ReplyText = serde_json::from_str("\"bcd\\n\"").unwrap();
        assert!(!back.is_in_reply() && back == inside);
    }

    #[test]
    fn lines_that_follow_each_other_in_the_reply_join_as_its_slice() {
        let reply = Rc::new("a\nbc\n\nd\r\ne".to_string());
        reading(reply, |text| {
            let lines: Vec<&str> = text.split('\n').collect();
            let joined = |lines: &[&str]| {
                let text = ReplyText::joined(lines);
                assert_eq!(text.as_str(), crate::text::joined_lines(lines));
                text.is_in_reply()
            };
            assert!(joined(&lines[0..3]), "a, bc and the empty line");
            assert!(joined(&lines[2..3]));
            assert!(!joined(&[lines[0], lines[2]]), "not next to each other");
            assert!(!joined(&[lines[3].trim_end_matches('\r')]), "d, its `\\r\\n` taken off, is not followed by `\\n`");
            assert!(!joined(&lines[4..5]), "e has no newline after it");
            assert!(!joined(&["a"]), "a copy of a line, not the line");
            assert!(!joined(&[]));
        });
    }

    #[test]
    fn text_just_past_the_reply_is_copied() {
        let reply = Rc::new("abc".to_string());
        let other = String::from("xyz");
        reading(reply, |text| {
            assert!(ReplyText::new(&text[3..]).is_in_reply(), "the empty end of the reply is in it");
            assert!(!ReplyText::new(&other).is_in_reply());
        });
    }
}
