//! A reading of the reply that `detect` made, kept for the `parse` of the
//! same reply that follows it.
//!
//! Auto-detection asks a format how sure it is of a reply, and the format it
//! picks then parses that reply on the same instance. A format whose
//! confidence comes from reading the whole reply (tool calls: whether each
//! JSON value is a call) read it twice, and on a 10 MB reply the first
//! reading was half of what detection added to the run (#27). Such a format
//! reads it once in [`keep`], and its `parse` asks [`take`] for that
//! reading first: given only when the reply is byte for byte the one read.
//!
//! Kept only in a wasm instance, whose memory is its own: a native
//! library's statics outlive any one instance.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use crate::reply_text;

/// The reply of the latest [`keep`], and what was read from it.
type Reading = (Rc<String>, Box<dyn Any>);

thread_local! {
    static KEPT: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// `read(reply)`, kept for [`take`], and `judge` of it (the confidence).
/// Payload texts made while reading ([`crate::ReplyText::new`]) are slices
/// of the kept reply, as in a `parse` whose payloads the host keeps.
pub fn keep<T: 'static, R>(reply: String, read: impl FnOnce(&str) -> T, judge: impl FnOnce(&T) -> R) -> R {
    let reply = Rc::new(reply);
    let read = reply_text::reading(Rc::clone(&reply), read);
    let judged = judge(&read);
    if cfg!(target_family = "wasm") {
        KEPT.with(|kept| *kept.borrow_mut() = Some((reply, Box::new(read))));
    }
    judged
}

/// What [`keep`] read, when it read this very `reply` into a `T`. What was
/// kept is dropped either way: a reading is given once.
pub fn take<T: 'static>(reply: &str) -> Option<T> {
    let (kept_reply, read) = KEPT.with(|kept| kept.borrow_mut().take())?;
    if kept_reply.as_str() != reply {
        return None;
    }
    read.downcast::<T>().ok().map(|read| *read)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Natively nothing is kept (the statics are shared); what `keep` does
    /// in wasm is checked through the real components (`tests/e2e`).
    #[test]
    fn a_native_build_keeps_nothing() {
        let lines = keep("a\nb\n".to_string(), |reply| reply.lines().count(), |count| *count);
        assert_eq!(lines, 2);
        assert_eq!(take::<usize>("a\nb\n"), None);
    }

    #[test]
    fn a_reading_is_given_once_and_only_for_its_own_reply() {
        let put =
            |reply: &str| KEPT.with(|kept| *kept.borrow_mut() = Some((Rc::new(reply.to_string()), Box::new(7u32))));
        put("reply");
        assert_eq!(take::<u32>("reply"), Some(7));
        assert_eq!(take::<u32>("reply"), None);
        put("reply");
        assert_eq!(take::<u32>("reply!"), None);
        assert_eq!(take::<u32>("reply"), None, "a mismatch drops what was kept");
        put("reply");
        assert_eq!(take::<u64>("reply"), None, "of another type");
    }
}
