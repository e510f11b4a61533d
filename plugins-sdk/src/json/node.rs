//! A JSON value read once into a tree that borrows its text.
//!
//! A format that reads nested JSON (a file object, its `edits`, each edit,
//! each operation's arguments) through serde's `RawValue`s reads every byte
//! once per level it is nested in: five times for the new lines of a JSON
//! edit. [`Node::parse`] reads the text once and keeps each value's text as
//! written, so a string can still be kept undecoded ([`super::JsonString`])
//! and each value's place in the reply is known.

use std::borrow::Cow;

/// How deeply arrays and objects may nest: serde_json's limit when it reads
/// a value into types (the reader recurses; a hostile reply's `[[[[...` must
/// not exhaust the stack).
const MAX_DEPTH: usize = 128;

/// One JSON value and, for an object or array, its members.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<'a> {
    /// The value's text as written: a string's quotes and escapes included.
    pub text: &'a str,
    /// What the value is, with an object's or array's members.
    pub kind: Kind<'a>,
}

/// What a [`Node`] is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind<'a> {
    /// The members in the order written, keys unescaped (a key written
    /// twice is there twice).
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    /// The items in order.
    Array(Vec<Node<'a>>),
    /// A string: [`Node::as_str`] unescapes it, [`super::JsonString`] keeps it.
    String,
    /// A number, as written.
    Number,
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// Why a text is not one JSON value, and the byte offset where that shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeError {
    /// What is wrong (serde_json's wording).
    pub message: &'static str,
    /// The byte offset in the text read.
    pub at: usize,
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.message, self.at)
    }
}

impl std::error::Error for NodeError {}

impl NodeError {
    /// Whether the text ended inside the value (a reply cut off there).
    pub fn is_eof(&self) -> bool {
        self.message.starts_with("EOF")
    }
}

impl<'a> Node<'a> {
    /// `text` read as one JSON value, white space around it allowed. It
    /// accepts what serde_json accepts when it reads a [`serde_json::Value`]:
    /// the same grammar and nesting limit.
    pub fn parse(text: &'a str) -> Result<Node<'a>, NodeError> {
        let mut reader = Reader { text, at: 0, build: true };
        let node = reader.value(0)?;
        reader.skip_space();
        if reader.at < text.len() {
            return Err(reader.error("trailing characters"));
        }
        Ok(node)
    }

    /// The JSON value at the start of `text` (after white space) and the
    /// byte offset where it ends; what follows it is not read (the next
    /// value of a stream, prose after an object).
    pub fn parse_prefix(text: &'a str) -> Result<(Node<'a>, usize), NodeError> {
        let mut reader = Reader { text, at: 0, build: true };
        let node = reader.value(0)?;
        Ok((node, reader.at))
    }

    /// Where the JSON value at the start of `text` ends, as
    /// [`Node::parse_prefix`] reads it, without keeping its members (no
    /// allocation) or unescaping its keys (as serde_json skips a value).
    pub fn skip_prefix(text: &str) -> Result<usize, NodeError> {
        let mut reader = Reader { text, at: 0, build: false };
        reader.value(0)?;
        Ok(reader.at)
    }

    /// The string, unescaped, when this is one.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        match self.kind {
            Kind::String => super::unescaped(self.text).ok(),
            _ => None,
        }
    }

    /// The value of the member named `key` (of a key written twice, the
    /// last), when this is an object that has one.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.members().iter().rfind(|(name, _)| name == key).map(|(_, value)| value)
    }

    /// The value of the member whose key is `name` as models spell it,
    /// without case, `_` or `-` ([`super::key_is`]; of such keys written
    /// twice, the last), when this is an object that has one.
    #[inline]
    pub fn member(&self, name: &str) -> Option<&Node<'a>> {
        self.members().iter().rfind(|(key, _)| super::key_is(key, name)).map(|(_, value)| value)
    }

    /// The members of an object (none for any other value).
    pub fn members(&self) -> &[(Cow<'a, str>, Node<'a>)] {
        match &self.kind {
            Kind::Object(members) => members,
            _ => &[],
        }
    }

    /// The items of an array, when this is one.
    pub fn items(&self) -> Option<&[Node<'a>]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }
}

/// How many bytes of JSON white space (space, tab, line feed, carriage
/// return) `text` starts with: what may come between a stream's values.
pub fn space_len(text: &str) -> usize {
    text.bytes().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).count()
}

/// The items of the JSON array at the start of a text (after white space),
/// each read into its own tree as the iteration reaches it: an array of
/// thousands of calls or edits is never one tree. An error ends it.
pub struct ArrayItems<'a> {
    reader: Reader<'a>,
    done: bool,
    /// What is wrong after the item just given, given next.
    pending: Option<NodeError>,
}

impl<'a> ArrayItems<'a> {
    /// The items of the array `text` starts with; `None` when it starts
    /// with no array.
    pub fn of(text: &'a str) -> Option<Self> {
        let mut reader = Reader { text, at: 0, build: true };
        reader.skip_space();
        if reader.peek() != Some(b'[') {
            return None;
        }
        reader.at += 1;
        let done = reader.closes_empty(b']');
        Some(ArrayItems { reader, done, pending: None })
    }

    /// Where the array ends, once every item was read.
    pub fn end(&self) -> usize {
        self.reader.at
    }
}

impl<'a> Iterator for ArrayItems<'a> {
    type Item = Result<Node<'a>, NodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(error) = self.pending.take() {
            return Some(Err(error));
        }
        if self.done {
            return None;
        }
        let item = self.reader.value(1);
        self.done = match &item {
            Ok(_) => match self.reader.end_of_item() {
                Ok(last) => last,
                Err(error) => {
                    self.pending = Some(error);
                    true
                }
            },
            Err(_) => true,
        };
        Some(item)
    }
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
    /// Whether members are kept; when not, objects and arrays come back empty.
    build: bool,
}

impl<'a> Reader<'a> {
    fn error(&self, message: &'static str) -> NodeError {
        NodeError { message, at: self.at }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        self.at += space_len(&self.text[self.at..]);
    }

    /// The value at the next non-space byte; `depth` containers enclose it.
    fn value(&mut self, depth: usize) -> Result<Node<'a>, NodeError> {
        self.skip_space();
        let start = self.at;
        let kind = match self.peek() {
            None => return Err(self.error("EOF while parsing a value")),
            Some(open @ (b'{' | b'[')) => {
                if depth + 1 >= MAX_DEPTH {
                    return Err(self.error("recursion limit exceeded"));
                }
                self.at += 1;
                if open == b'{' { self.object(depth + 1)? } else { self.array(depth + 1)? }
            }
            Some(b'"') => {
                self.string()?;
                Kind::String
            }
            Some(b't') => self.literal("true", Kind::Bool(true))?,
            Some(b'f') => self.literal("false", Kind::Bool(false))?,
            Some(b'n') => self.literal("null", Kind::Null)?,
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Kind::Number
            }
            Some(_) => return Err(self.error("expected value")),
        };
        Ok(Node { text: &self.text[start..self.at], kind })
    }

    /// After `{`: the members and the closing `}`.
    fn object(&mut self, depth: usize) -> Result<Kind<'a>, NodeError> {
        let mut members = Vec::new();
        if self.closes_empty(b'}') {
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.error(if self.peek().is_none() {
                    "EOF while parsing an object"
                } else {
                    "key must be a string"
                }));
            }
            let key_start = self.at;
            let escaped = self.string()?;
            let raw = &self.text[key_start..self.at];
            let key = if !self.build {
                Cow::Borrowed("")
            } else if escaped {
                super::unescaped(raw).map_err(|_| NodeError { message: "invalid escape in a key", at: key_start })?
            } else {
                Cow::Borrowed(&raw[1..raw.len() - 1])
            };
            self.skip_space();
            match self.peek() {
                Some(b':') => self.at += 1,
                None => return Err(self.error("EOF while parsing an object")),
                Some(_) => return Err(self.error("expected `:`")),
            }
            let value = self.value(depth)?;
            if self.build {
                members.push((key, value));
            }
            if self.end_of_member(b'}', "EOF while parsing an object", "expected `,` or `}`")? {
                return Ok(Kind::Object(members));
            }
        }
    }

    /// After `[`: the items and the closing `]`.
    fn array(&mut self, depth: usize) -> Result<Kind<'a>, NodeError> {
        let mut items = Vec::new();
        if self.closes_empty(b']') {
            return Ok(Kind::Array(items));
        }
        loop {
            let item = self.value(depth)?;
            if self.build {
                items.push(item);
            }
            if self.end_of_item()? {
                return Ok(Kind::Array(items));
            }
        }
    }

    /// Whether the container just opened ends at once (then past its `close`).
    fn closes_empty(&mut self, close: u8) -> bool {
        self.skip_space();
        let empty = self.peek() == Some(close);
        if empty {
            self.at += 1;
        }
        empty
    }

    /// After a member: `,` (false: another follows; none may trail) or the
    /// container's `close` (true).
    fn end_of_member(&mut self, close: u8, eof: &'static str, other: &'static str) -> Result<bool, NodeError> {
        self.skip_space();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                self.skip_space();
                if self.peek() == Some(close) {
                    return Err(self.error("trailing comma"));
                }
                Ok(false)
            }
            Some(c) if c == close => {
                self.at += 1;
                Ok(true)
            }
            None => Err(self.error(eof)),
            Some(_) => Err(self.error(other)),
        }
    }

    /// [`Reader::end_of_member`] of an array.
    fn end_of_item(&mut self) -> Result<bool, NodeError> {
        self.end_of_member(b']', "EOF while parsing a list", "expected `,` or `]`")
    }

    fn literal(&mut self, word: &'static str, kind: Kind<'a>) -> Result<Kind<'a>, NodeError> {
        if !self.text[self.at..].starts_with(word) {
            return Err(self.error("expected value"));
        }
        self.at += word.len();
        Ok(kind)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), NodeError> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number"));
            }
            self.digits();
        }
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    /// At `"`: past the string's closing quote. Whether it had escapes.
    fn string(&mut self) -> Result<bool, NodeError> {
        let bytes = self.text.as_bytes();
        self.at += 1;
        let mut escaped = false;
        loop {
            self.at += super::plain_run(&bytes[self.at..]);
            match bytes.get(self.at) {
                None => return Err(self.error("EOF while parsing a string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    self.escape()?;
                }
                Some(_) => return Err(self.error("control character (\\u0000-\\u001F) found while parsing a string")),
            }
        }
    }

    /// At `\`: past one escape. A `\u` needs four hex digits; whether they
    /// make a character is found when the string is unescaped, as serde_json
    /// does when it skips a value.
    fn escape(&mut self) -> Result<(), NodeError> {
        let bytes = self.text.as_bytes();
        self.at += 1;
        match bytes.get(self.at) {
            None => Err(self.error("EOF while parsing a string")),
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.at += 1;
                Ok(())
            }
            Some(b'u') => {
                for _ in 0..4 {
                    self.at += 1;
                    match bytes.get(self.at) {
                        Some(c) if c.is_ascii_hexdigit() => {}
                        None => return Err(self.error("EOF while parsing a string")),
                        Some(_) => return Err(self.error("invalid escape")),
                    }
                }
                self.at += 1;
                Ok(())
            }
            Some(_) => Err(self.error("invalid escape")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::IgnoredAny;
    use serde_json::Value;

    /// The tree as serde_json's value, to compare the two readers.
    fn to_value(node: &Node<'_>) -> Value {
        match &node.kind {
            Kind::Object(members) => Value::Object(members.iter().map(|(k, v)| (k.to_string(), to_value(v))).collect()),
            Kind::Array(items) => Value::Array(items.iter().map(to_value).collect()),
            Kind::String => Value::String(node.as_str().expect("a string").into_owned()),
            Kind::Number => serde_json::from_str(node.text).expect("a number"),
            Kind::Bool(b) => Value::Bool(*b),
            Kind::Null => Value::Null,
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            // Eighths: serde_json reads them exactly (not every decimal).
            (-8_000_000i64..8_000_000).prop_map(|n| Value::from(n as f64 / 8.0)),
            "[a-z\"\\\\/\n\t\u{1}\u{e9}\u{1F600} ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z_\"\\\\]{0,6}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn a_value_reads_as_serde_json_reads_it(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) };
            let text = format!(" {}\n", text.unwrap());
            let node = Node::parse(&text).unwrap();
            prop_assert_eq!(to_value(&node), value);
            prop_assert_eq!(node.text, text.trim());
        }

        #[test]
        fn a_value_skipped_ends_where_it_ends_read(text in "[{}\\[\\]\",:0-9a-z.eE+\\- \\\\\n]{0,24}") {
            let read = Node::parse_prefix(&text).map(|(_, end)| end);
            prop_assert_eq!(Node::skip_prefix(&text), read);
        }

        #[test]
        fn a_text_is_json_exactly_when_serde_json_says_so(text in "[{}\\[\\]\",:0-9a-z.eE+\\- \\\\\n\u{1}\u{e9}]{0,24}") {
            let ours = Node::parse(&text);
            let theirs = serde_json::from_str::<IgnoredAny>(&text);
            prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{:?}: {:?} / {:?}", text, ours, theirs);
        }
    }

    #[test]
    fn each_value_keeps_its_text_as_written() {
        let text = r#"{"path": "a.py", "edits": [{"set_line": {"anchor": "4:fa", "new_text": "x\ny"}}], "n": -1.5e3}"#;
        let node = Node::parse(text).unwrap();
        let members = node.members();
        assert_eq!(members.iter().map(|(k, _)| k.as_ref()).collect::<Vec<_>>(), ["path", "edits", "n"]);
        let edits = members[1].1.items().unwrap();
        assert_eq!(edits[0].text, r#"{"set_line": {"anchor": "4:fa", "new_text": "x\ny"}}"#);
        let args = &edits[0].members()[0].1;
        assert_eq!(args.members()[1].1.text, r#""x\ny""#);
        assert_eq!(args.members()[1].1.as_str().unwrap(), "x\ny");
        assert_eq!(members[2].1.kind, Kind::Number);
        // A value at the start of a text, and where it ends.
        let (first, end) = Node::parse_prefix(" [1, 2] {\"b\": 3}").unwrap();
        assert_eq!((first.text, end), ("[1, 2]", 7));
        assert!(Node::parse_prefix("{\"a\": [1, ").unwrap_err().is_eof());
        assert!(!Node::parse_prefix("{\"a\" 1}").unwrap_err().is_eof());
        // Where the text stops being JSON.
        assert_eq!(Node::parse("[1, 2,]").unwrap_err().message, "trailing comma");
        assert_eq!(Node::parse("{\"a\" 1}").unwrap_err().at, 5);
    }

    #[test]
    fn an_arrays_items_are_read_one_by_one() {
        let text = " [{\"a\": 1}, [2], \"x\"] tail";
        let mut items = ArrayItems::of(text).unwrap();
        let texts: Vec<&str> = items.by_ref().map(|item| item.unwrap().text).collect();
        assert_eq!(texts, ["{\"a\": 1}", "[2]", "\"x\""]);
        assert_eq!(&text[items.end()..], " tail");
        let mut empty = ArrayItems::of("[ ]").unwrap();
        assert!(empty.next().is_none());
        assert_eq!(empty.end(), 3);
        assert!(ArrayItems::of("{}").is_none());
        // An error is the last item: what came before it is read.
        let broken: Vec<_> = ArrayItems::of("[1, 2,]").unwrap().collect();
        assert_eq!(broken.len(), 3);
        assert_eq!(broken[2].as_ref().unwrap_err().message, "trailing comma");
        assert!(ArrayItems::of("[1, ").unwrap().last().unwrap().unwrap_err().is_eof());
    }

    proptest! {
        #[test]
        fn an_arrays_items_are_the_items_of_its_tree(value in json_value()) {
            let text = serde_json::to_string(&Value::Array(vec![value.clone(), value])).unwrap();
            let (tree, end) = Node::parse_prefix(&text).unwrap();
            let mut items = ArrayItems::of(&text).unwrap();
            let read: Vec<Node<'_>> = items.by_ref().map(Result::unwrap).collect();
            prop_assert_eq!(read.as_slice(), tree.items().unwrap());
            prop_assert_eq!(items.end(), end);
        }
    }

    #[test]
    fn escapes_read_as_serde_json_skips_them() {
        for text in [r#""\u00e9""#, r#""\ud800""#, r#""\uD83D\uDE00""#, r#""\u00g0""#, r#""\x""#, r#""\u12"#] {
            let theirs = serde_json::from_str::<IgnoredAny>(text);
            assert_eq!(Node::parse(text).is_ok(), theirs.is_ok(), "{text}");
        }
        // An escaped key is unescaped; one that makes no character is refused.
        let node = Node::parse(r#"{"new\u005ftext": 1}"#).unwrap();
        assert_eq!(node.members()[0].0, "new_text");
        assert!(Node::parse(r#"{"\ud800": 1}"#).is_err());
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        for depth in [126, 127, 128, 129] {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let theirs = serde_json::from_str::<Value>(&text);
            assert_eq!(Node::parse(&text).is_ok(), theirs.is_ok(), "depth {depth}");
        }
        let deep = "[".repeat(100_000);
        assert_eq!(Node::parse(&deep).unwrap_err().message, "recursion limit exceeded");
    }
}
