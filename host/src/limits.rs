//! Input limits. Replies come from models and run unattended, so the host
//! checks every input in linear time before a format does anything that
//! could grow faster: the reply before `parse`, the number of edits before
//! `apply`, and each file as its snapshot is read. Each limit is a key under
//! `[limits]` in `.agent-apply.toml`.

use std::io::Read;

/// The input limits of one run, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// `max-reply-bytes`: the largest reply read.
    pub reply_bytes: u64,
    /// `max-edits`: the most edits one reply may hold.
    pub edits: usize,
    /// `max-line-bytes`: the longest line of a reply or of an edited file.
    pub line_bytes: usize,
    /// `max-file-bytes`: the largest file that is edited.
    pub file_bytes: u64,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits { reply_bytes: 4 << 20, edits: 1000, line_bytes: 64 << 10, file_bytes: 8 << 20 }
    }
}

/// A reply or a reply's edits that are over a limit or not text.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LimitError {
    #[error("the reply is larger than the {limit}-byte limit; nothing was read past it")]
    ReplyTooLarge { limit: u64 },
    #[error("the reply is not valid UTF-8 (first bad byte at offset {offset})")]
    ReplyNotUtf8 { offset: usize },
    #[error("the reply holds a NUL byte at offset {offset}; a reply must be text")]
    ReplyBinary { offset: usize },
    #[error("line {line} of the reply is {length} bytes long, over the {limit}-byte line limit")]
    ReplyLineTooLong { line: usize, length: usize, limit: usize },
    #[error("the reply holds {count} edits, over the limit of {limit} per reply")]
    TooManyEdits { count: usize, limit: usize },
}

impl LimitError {
    /// The `[limits]` key that raises the limit this error hit, if any.
    pub fn config_key(&self) -> Option<&'static str> {
        match self {
            LimitError::ReplyTooLarge { .. } => Some("max-reply-bytes"),
            LimitError::ReplyLineTooLong { .. } => Some("max-line-bytes"),
            LimitError::TooManyEdits { .. } => Some("max-edits"),
            LimitError::ReplyNotUtf8 { .. } | LimitError::ReplyBinary { .. } => None,
        }
    }

    /// Text for the model that wrote the reply: what was wrong with it and
    /// what to send instead. Every limit is hit by the reply, so each has one.
    pub fn reflection(&self) -> String {
        let what = match self {
            LimitError::ReplyTooLarge { limit } => format!(
                "Your reply is longer than the {limit} bytes this tool accepts. \
                 Send the edits in several smaller replies, each changing only what needs to change."
            ),
            LimitError::ReplyNotUtf8 { offset } | LimitError::ReplyBinary { offset } => format!(
                "Your reply holds bytes that are not text (at byte {offset}). Send the edits again as plain UTF-8 text."
            ),
            LimitError::ReplyLineTooLong { line, length, limit } => format!(
                "Line {line} of your reply is {length} bytes long; lines of at most {limit} bytes are accepted. \
                 Send the edits again without such long lines, and do not paste generated or minified content."
            ),
            LimitError::TooManyEdits { count, limit } => format!(
                "Your reply holds {count} edits; at most {limit} are accepted in one reply. \
                 Send the edits again in replies of at most {limit} edits each."
            ),
        };
        format!("{what}\nNone of your edits were applied.\n")
    }
}

impl InputLimits {
    /// Read a reply from `source`, never more than the limit plus one byte,
    /// and check it is text with no overlong line.
    pub fn read_reply(&self, source: impl Read) -> std::io::Result<Result<CheckedReply, LimitError>> {
        self.read_reply_sized(source, 0)
    }

    /// [`read_reply`](Self::read_reply) of a source expected to hold `len`
    /// bytes (a file's size): read into memory sized once, not doubled as it
    /// fills (a big reply would be copied several times, into fresh pages).
    pub fn read_reply_sized(&self, source: impl Read, len: u64) -> std::io::Result<Result<CheckedReply, LimitError>> {
        let expected = len.min(self.reply_bytes).saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        source.take(self.reply_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > self.reply_bytes {
            return Ok(Err(LimitError::ReplyTooLarge { limit: self.reply_bytes }));
        }
        Ok(self.check_reply(bytes))
    }

    /// A reply's bytes as text, if they are UTF-8 without NUL and every line
    /// fits.
    pub fn check_reply(&self, bytes: Vec<u8>) -> Result<CheckedReply, LimitError> {
        self.check_text_bytes(&bytes)?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok(CheckedReply { text, limits: *self }),
            Err(e) => Err(LimitError::ReplyNotUtf8 { offset: e.utf8_error().valid_up_to() }),
        }
    }

    /// The text of `reply`, checked as [`check_reply_text`](Self::check_reply_text)
    /// checks it unless it was read and checked against these same limits.
    pub fn checked(&self, reply: Reply) -> Result<String, LimitError> {
        match reply {
            Reply::Checked(checked) if checked.limits == *self => Ok(checked.text),
            Reply::Checked(CheckedReply { text, .. }) | Reply::Text(text) => {
                self.check_reply_text(&text)?;
                Ok(text)
            }
        }
    }

    /// Check a reply given as text (by a library caller or the MCP server)
    /// as [`read_reply`](Self::read_reply) checks one read from a file.
    pub fn check_reply_text(&self, reply: &str) -> Result<(), LimitError> {
        if reply.len() as u64 > self.reply_bytes {
            return Err(LimitError::ReplyTooLarge { limit: self.reply_bytes });
        }
        self.check_text_bytes(reply.as_bytes())
    }

    /// A reply's bytes hold no NUL and no line over the limit.
    fn check_text_bytes(&self, bytes: &[u8]) -> Result<(), LimitError> {
        if let Some(offset) = nul_offset(bytes) {
            return Err(LimitError::ReplyBinary { offset });
        }
        match long_line(bytes, self.line_bytes) {
            Some((line, length)) => Err(LimitError::ReplyLineTooLong { line, length, limit: self.line_bytes }),
            None => Ok(()),
        }
    }

    /// Refuse a parse that found more edits than the limit.
    pub fn check_edit_count(&self, count: usize) -> Result<(), LimitError> {
        if count > self.edits { Err(LimitError::TooManyEdits { count, limit: self.edits }) } else { Ok(()) }
    }
}

/// A reply as [`InputLimits::read_reply`] read it: checked to be text with
/// no line over the limits it was read with. Given to the pipeline with the
/// same limits, it is not read again (a 10 MB reply's NUL and line checks
/// are a millisecond, #27).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReply {
    text: String,
    limits: InputLimits,
}

impl CheckedReply {
    /// The reply's text.
    pub fn into_text(self) -> String {
        self.text
    }
}

impl std::ops::Deref for CheckedReply {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

/// A reply for the pipeline: text from a library caller or the MCP server,
/// which the pipeline checks, or one read and checked already.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Text(String),
    Checked(CheckedReply),
}

impl From<String> for Reply {
    fn from(text: String) -> Self {
        Reply::Text(text)
    }
}

impl From<CheckedReply> for Reply {
    fn from(checked: CheckedReply) -> Self {
        Reply::Checked(checked)
    }
}

/// What to do about a limit: raise its key under `[limits]`.
pub fn raise_hint(key: &str) -> String {
    format!("nothing was changed; if this input is legitimate, raise `{key}` under [limits] in .agent-apply.toml")
}

/// The offset of the first NUL byte.
pub fn nul_offset(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0, bytes)
}

/// The first line (1-based) longer than `limit` bytes, and its length
/// without the line ending. Every file read is checked, so this jumps: a
/// window of `limit + 1` bytes with a newline in it holds no long line up to
/// its last newline, so the scan goes on from there (one backwards SIMD search
/// per window, not a step per line). Only a window with no newline is looked
/// at closely, since a `\r` before the line's `\n` does not count.
pub fn long_line(bytes: &[u8], limit: usize) -> Option<(usize, usize)> {
    let mut start = 0;
    while bytes.len() - start > limit {
        let window = &bytes[start..start + limit + 1];
        if let Some(last) = memchr::memrchr(b'\n', window) {
            start += last + 1;
            continue;
        }
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = &bytes[start..end];
        let length = line.strip_suffix(b"\r").unwrap_or(line).len();
        if length > limit {
            return Some((memchr::memchr_iter(b'\n', &bytes[..start]).count() + 1, length));
        }
        start = (end + 1).min(bytes.len());
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::Just;

    use super::*;

    fn small() -> InputLimits {
        InputLimits { reply_bytes: 16, edits: 2, line_bytes: 4, file_bytes: 64 }
    }

    #[test]
    fn a_reply_is_read_up_to_its_limit_and_no_further() {
        let long = std::io::Cursor::new(vec![b'a'; 1 << 20]);
        assert_eq!(small().read_reply(long).unwrap(), Err(LimitError::ReplyTooLarge { limit: 16 }));
        let read = small().read_reply(&b"ab\ncd\n"[..]).unwrap();
        assert_eq!(read.map(CheckedReply::into_text), Ok("ab\ncd\n".to_string()));
        // A size that is wrong either way (a file that grew or shrank) only sizes the buffer.
        for len in [0, 3, 6, 1 << 40] {
            let read = small().read_reply_sized(&b"ab\ncd\n"[..], len).unwrap();
            assert_eq!(read.map(CheckedReply::into_text), Ok("ab\ncd\n".to_string()));
            let long = std::io::Cursor::new(vec![b'a'; 1 << 20]);
            assert_eq!(small().read_reply_sized(long, len).unwrap(), Err(LimitError::ReplyTooLarge { limit: 16 }));
        }
    }

    #[test]
    fn a_reply_must_be_text_with_short_lines() {
        assert_eq!(small().check_reply(b"ab\nc\0".to_vec()), Err(LimitError::ReplyBinary { offset: 4 }));
        assert_eq!(small().check_reply(b"ab\n\xffx".to_vec()), Err(LimitError::ReplyNotUtf8 { offset: 3 }));
        assert_eq!(
            small().check_reply(b"abcd\r\nabcde\n".to_vec()),
            Err(LimitError::ReplyLineTooLong { line: 2, length: 5, limit: 4 })
        );
    }

    #[test]
    fn a_reply_read_under_the_same_limits_is_not_checked_again_and_any_other_is() {
        let wide = InputLimits { line_bytes: 8, ..small() };
        let read = |limits: InputLimits| limits.check_reply(b"abcdef\n".to_vec());
        // Read under wider limits, it is checked under the narrower ones.
        let checked = read(wide).unwrap();
        assert_eq!(wide.checked(checked.clone().into()), Ok("abcdef\n".to_string()));
        let refused = small().checked(checked.into());
        assert_eq!(refused, Err(LimitError::ReplyLineTooLong { line: 1, length: 6, limit: 4 }));
        // Text from a caller is always checked.
        let binary = wide.checked("ab\0".to_string().into());
        assert_eq!(binary, Err(LimitError::ReplyBinary { offset: 2 }));
        assert_eq!(small().checked("ab\n".to_string().into()), Ok("ab\n".to_string()));
    }

    proptest::proptest! {
        #[test]
        fn the_long_line_check_agrees_with_splitting_into_lines(
            bytes in proptest::collection::vec(proptest::prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'x'), Just(b'x')], 0..60),
            limit in 0usize..9,
        ) {
            let by_split = bytes
                .split(|&b| b == b'\n')
                .map(|line| line.strip_suffix(b"\r").unwrap_or(line).len())
                .enumerate()
                .find(|(_, length)| *length > limit)
                .map(|(index, length)| (index + 1, length));
            proptest::prop_assert_eq!(long_line(&bytes, limit), by_split);
        }
    }

    #[test]
    fn edit_count_is_checked_against_the_limit() {
        assert_eq!(small().check_edit_count(2), Ok(()));
        assert_eq!(small().check_edit_count(3), Err(LimitError::TooManyEdits { count: 3, limit: 2 }));
    }
}
