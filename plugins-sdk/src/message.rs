//! Messages written piece by piece, for the ones a format makes per edit.
//!
//! A reply of 20,000 edits makes 20,000 outcome messages and as many
//! summaries. Inside a component `format!` costs a thousand instructions or
//! more a message (dynamic dispatch per argument, padding logic, a string
//! grown as it is written); these were a tenth of a large reply's parse and
//! apply in the formats of many small edits. [`message!`](crate::message!)
//! writes the same text by pushing each piece, sized once.
//!
//! ```
//! use agent_apply_sdk::message;
//! use agent_apply_sdk::text::{LineCount, LineSpan};
//! let path = "src/a.rs";
//! let text = message!("replaced ", LineSpan(3, 5), " of ", path, " with ", LineCount(1));
//! assert_eq!(text, "replaced lines 3-5 of src/a.rs with 1 line");
//! ```

use crate::text::{LineCount, LineSpan};

/// A piece of a message: its text is what `Display` would write.
pub trait Piece {
    /// How many bytes [`Piece::push_to`] writes (it sizes the message).
    fn size(&self) -> usize;
    /// Append the piece's text to `out`.
    fn push_to(&self, out: &mut String);
}

/// A piece written as other pieces chosen when it is written (a label, a
/// summary): implement `pieces`, and [`composite_piece!`](crate::composite_piece!)
/// makes it a [`Piece`].
pub trait Composite {
    /// Hand `write` the pieces, in order, as a tuple of references:
    /// `write.pieces((&"call ", &self.number))`.
    fn pieces<W: WritePieces>(&self, write: W) -> W::Done;
}

/// What a [`Composite`] hands its pieces to: they are sized, or written.
pub trait WritePieces {
    /// What the pieces come to: their size, or nothing once written.
    type Done;
    /// Size or write `pieces`.
    fn pieces(self, pieces: impl Pieces) -> Self::Done;
}

/// Sizes a [`Composite`]'s pieces.
#[doc(hidden)]
pub struct Sizing;

impl WritePieces for Sizing {
    type Done = usize;
    #[inline]
    fn pieces(self, pieces: impl Pieces) -> usize {
        pieces.size()
    }
}

/// Writes a [`Composite`]'s pieces to a string.
#[doc(hidden)]
pub struct Pushing<'o>(pub &'o mut String);

impl WritePieces for Pushing<'_> {
    type Done = ();
    #[inline]
    fn pieces(self, pieces: impl Pieces) {
        pieces.push_to(self.0)
    }
}

/// `impl Piece` for types that implement [`Composite`].
#[macro_export]
macro_rules! composite_piece {
    ($($composite:ty),+ $(,)?) => {$(
        impl $crate::message::Piece for $composite {
            fn size(&self) -> usize {
                $crate::message::Composite::pieces(self, $crate::message::Sizing)
            }
            fn push_to(&self, out: &mut ::std::string::String) {
                $crate::message::Composite::pieces(self, $crate::message::Pushing(out))
            }
        }
    )+};
}

/// A message made of pieces (text, numbers, [`LineCount`], [`LineSpan`]),
/// each evaluated once: `message!("line ", n, " of ", path)` is
/// `format!("line {n} of {path}")`, written without the formatting
/// machinery.
#[macro_export]
macro_rules! message {
    ($($piece:expr),+ $(,)?) => {
        $crate::message::join(($(&$piece,)+))
    };
}

/// Pieces the compiler knows, one after the other: a tuple of references
/// to them, as [`message!`](crate::message!) hands [`join`]. Each
/// piece's size and copy is a direct call, often inlined (a literal's
/// copy is then two fixed-size moves), where a `&dyn Piece` is an
/// indirect call a piece, twice: a third of the cost of a message in a
/// component.
pub trait Pieces {
    /// How many bytes [`Pieces::push_to`] writes.
    fn size(&self) -> usize;
    /// Append the pieces' text to `out`, in order.
    fn push_to(&self, out: &mut String);
}

macro_rules! tuple_pieces {
    ($($piece:ident $index:tt),+) => {
        impl<$($piece: Piece + ?Sized),+> Pieces for ($(&$piece,)+) {
            #[inline]
            fn size(&self) -> usize {
                0 $(+ self.$index.size())+
            }
            #[inline]
            fn push_to(&self, out: &mut String) {
                $(self.$index.push_to(out);)+
            }
        }
    };
}

tuple_pieces!(A 0);
tuple_pieces!(A 0, B 1);
tuple_pieces!(A 0, B 1, C 2);
tuple_pieces!(A 0, B 1, C 2, D 3);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_pieces!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

/// The pieces, written into a string sized for them. What
/// [`message!`](crate::message!) expands to.
#[inline]
pub fn join(pieces: impl Pieces) -> String {
    let mut out = String::with_capacity(pieces.size());
    pieces.push_to(&mut out);
    out
}

impl<T: Piece + ?Sized> Piece for &T {
    #[inline]
    fn size(&self) -> usize {
        (**self).size()
    }
    #[inline]
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out)
    }
}

/// Nothing when `None`.
impl<T: Piece> Piece for Option<T> {
    fn size(&self) -> usize {
        self.as_ref().map_or(0, Piece::size)
    }
    fn push_to(&self, out: &mut String) {
        if let Some(piece) = self {
            piece.push_to(out)
        }
    }
}

impl Piece for str {
    #[inline]
    fn size(&self) -> usize {
        str::len(self)
    }
    #[inline]
    fn push_to(&self, out: &mut String) {
        push_small(out, self)
    }
}

impl Piece for String {
    #[inline]
    fn size(&self) -> usize {
        String::len(self)
    }
    #[inline]
    fn push_to(&self, out: &mut String) {
        push_small(out, self)
    }
}

/// `out.push_str(text)`, with a text of up to 16 bytes moved in two
/// fixed-size copies. Most pieces are a few bytes, and in a component
/// `push_str` copies with `memory.copy`, a call out to the runtime that
/// costs several times the copy (about 60 instructions; 380,000 of them
/// for the messages of a 10 MB `editblock` reply).
#[inline]
fn push_small(out: &mut String, text: &str) {
    let len = text.len();
    if len > 16 {
        return out.push_str(text);
    }
    out.reserve(len);
    // SAFETY: `out` has room for `len` more bytes past its length; every
    // copy reads inside `text` and writes inside that room (the two copies
    // of a size overlap when `len` is below twice it); what is appended is
    // `text`, whole UTF-8, so `out` stays UTF-8.
    unsafe {
        let bytes = out.as_mut_vec();
        let (src, dst) = (text.as_ptr(), bytes.as_mut_ptr().add(bytes.len()));
        match len {
            0 => {}
            1..=3 => {
                for at in [0, len / 2, len - 1] {
                    dst.add(at).write(src.add(at).read());
                }
            }
            4..=7 => {
                dst.cast::<[u8; 4]>().write_unaligned(src.cast::<[u8; 4]>().read_unaligned());
                let tail = len - 4;
                dst.add(tail).cast::<[u8; 4]>().write_unaligned(src.add(tail).cast::<[u8; 4]>().read_unaligned());
            }
            _ => {
                dst.cast::<[u8; 8]>().write_unaligned(src.cast::<[u8; 8]>().read_unaligned());
                let tail = len - 8;
                dst.add(tail).cast::<[u8; 8]>().write_unaligned(src.add(tail).cast::<[u8; 8]>().read_unaligned());
            }
        }
        bytes.set_len(bytes.len() + len);
    }
}

impl Piece for char {
    fn size(&self) -> usize {
        self.len_utf8()
    }
    fn push_to(&self, out: &mut String) {
        out.push(*self)
    }
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The two digits of every number below 100, one after the other.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `n` in decimal, appended. Numbers in messages fit 32 bits: their digits
/// are taken in 32-bit arithmetic, which a component divides by 10 with a
/// multiply (64-bit division there is a real divide per digit), two at a
/// time, straight into the string's room (line numbers run to six digits,
/// and a message holds several).
fn push_decimal(out: &mut String, n: u64) {
    let Ok(mut n) = u32::try_from(n) else {
        use std::fmt::Write as _;
        let _ = write!(out, "{n}");
        return;
    };
    let len = digits(n as u64);
    out.reserve(len);
    // SAFETY: `out` has room for `len` more bytes; the writes fill exactly
    // the `len` bytes past its length (a number of `len` digits takes
    // `len` of them from the right), all ASCII digits, so `out` stays UTF-8.
    unsafe {
        let bytes = out.as_mut_vec();
        let start = bytes.as_mut_ptr().add(bytes.len());
        let mut at = len;
        while n >= 10 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            at -= 2;
            start.add(at).write(DIGIT_PAIRS[pair]);
            start.add(at + 1).write(DIGIT_PAIRS[pair + 1]);
        }
        if at == 1 {
            start.write(b'0' + n as u8);
        }
        bytes.set_len(bytes.len() + len);
    }
}

macro_rules! unsigned_pieces {
    ($($t:ty),+) => {$(
        impl Piece for $t {
            fn size(&self) -> usize {
                digits(*self as u64)
            }
            fn push_to(&self, out: &mut String) {
                push_decimal(out, *self as u64)
            }
        }
    )+};
}

unsigned_pieces!(u8, u16, u32, u64, usize);

impl Piece for LineCount {
    fn size(&self) -> usize {
        digits(self.0 as u64) + if self.0 == 1 { " line".len() } else { " lines".len() }
    }
    fn push_to(&self, out: &mut String) {
        push_decimal(out, self.0 as u64);
        out.push_str(if self.0 == 1 { " line" } else { " lines" });
    }
}

impl Piece for LineSpan {
    fn size(&self) -> usize {
        match *self {
            LineSpan(first, last) if first == last => "line ".len() + digits(first.into()),
            LineSpan(first, last) => "lines -".len() + digits(first.into()) + digits(last.into()),
        }
    }
    fn push_to(&self, out: &mut String) {
        match *self {
            LineSpan(first, last) if first == last => {
                out.push_str("line ");
                push_decimal(out, first.into());
            }
            LineSpan(first, last) => {
                out.push_str("lines ");
                push_decimal(out, first.into());
                out.push('-');
                push_decimal(out, last.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pieces_write_what_display_writes(n: u64, m: u32, k: u32, count in 0usize..3000, text in ".{0,12}", c: char) {
            let small = (n % 1000) as u16;
            let some = (m % 2 == 0).then_some(k);
            let written = crate::message!(text.as_str(), n, "/", m, '|', small, c, LineCount(count), LineSpan(m, k), LineSpan(k, k), some, text.clone());
            let shown = some.map(|k| k.to_string()).unwrap_or_default();
            let displayed = format!("{text}{n}/{m}|{small}{c}{}{}{}{shown}{text}", LineCount(count), LineSpan(m, k), LineSpan(k, k));
            prop_assert_eq!(&written, &displayed);
            // Sized exactly: the lengths the pieces give are what they write.
            prop_assert_eq!(written.capacity(), written.len());
        }
    }

    struct Label(u32, &'static str);

    impl Composite for Label {
        fn pieces<W: WritePieces>(&self, write: W) -> W::Done {
            write.pieces((&"call ", &self.0, &" (`", &self.1, &"`)"))
        }
    }

    crate::composite_piece!(Label);

    #[test]
    fn a_composite_writes_and_sizes_its_pieces() {
        let written = crate::message!(Label(12, "Edit"), " on a.rs");
        assert_eq!(written, "call 12 (`Edit`) on a.rs");
        assert_eq!(written.capacity(), written.len());
    }

    #[test]
    fn a_piece_of_any_length_is_appended_whole() {
        let source = "abcdefghijklmnopqrstu…é";
        for start in 0..source.len() {
            for end in start..=source.len() {
                let Some(text) = source.get(start..end) else { continue };
                let mut out = String::from("x");
                text.push_to(&mut out);
                assert_eq!(out, format!("x{text}"), "{start}..{end}");
            }
        }
    }

    #[test]
    fn numbers_at_the_edges_of_their_digits() {
        for n in [0u64, 1, 9, 10, 99, 100, 999_999, 1_000_000, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            assert_eq!(crate::message!(n), n.to_string());
        }
        assert_eq!(crate::message!(LineCount(1), ", ", LineCount(0)), "1 line, 0 lines");
    }
}
