//! The one place commands write their results: JSON objects and text on
//! stdout (a reader that stops early, `| head`, is not an error of ours),
//! with colour only where the terminal and `NO_COLOR` allow it (anstream).

use std::io::Write as _;

use serde::Serialize;

/// `value` as one pretty-printed JSON object on stdout, written as it is
/// serialized: the report of a reply of 20,000 edits is megabytes of JSON.
pub fn json(value: &impl Serialize) {
    let mut out = std::io::BufWriter::with_capacity(CHUNK, std::io::stdout().lock());
    if serde_json::to_writer_pretty(&mut out, value).is_ok() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// `value` as [`json`] prints it.
pub fn json_text(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).expect("reports serialize") + "\n"
}

/// `text` as anstream would write it to stderr: without its ANSI styles
/// where stderr shows none (not a terminal, or `NO_COLOR` set).
pub fn for_stderr(text: String) -> String {
    match anstream::AutoStream::choice(&std::io::stderr()) {
        anstream::ColorChoice::Never => anstream::adapter::strip_str(&text).to_string(),
        _ => text,
    }
}

/// `text` on stdout as it is; ANSI colours are dropped where not wanted.
pub fn text(text: &str) {
    // Text without an escape needs no stripping: written as it is (a report
    // of thousands of edits spent 2% of its run in anstream's scan).
    if memchr::memchr(0x1b, text.as_bytes()).is_none() {
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        let _ = write!(anstream::stdout(), "{text}");
    }
}

/// How much text is gathered before it is written to stdout.
const CHUNK: usize = 64 << 10;

/// Text for stdout written in pieces (`write!`), passed on to [`text`] a
/// chunk at a time: a long report is never held whole. A chunk may end
/// inside an escape sequence; [`text`] still strips every escape byte
/// where colours are not wanted, since each chunk is checked on its own.
pub struct TextOut {
    chunk: String,
}

impl TextOut {
    /// Write `write`'s text to stdout, then whatever is left of it.
    pub fn with(write: impl FnOnce(&mut TextOut) -> std::fmt::Result) {
        let mut out = TextOut { chunk: String::with_capacity(CHUNK) };
        let _ = write(&mut out);
        text(&out.chunk);
    }
}

impl std::fmt::Write for TextOut {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        self.chunk.push_str(piece);
        if self.chunk.len() >= CHUNK {
            text(&self.chunk);
            self.chunk.clear();
        }
        Ok(())
    }
}

/// Whether stdout shows colours (a terminal, and `NO_COLOR` unset): text
/// for it is styled only then.
pub fn stdout_styled() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// `--verbose`: what each format plugin wrote to stderr, under a line
/// naming it, and where the time went, on stderr (stdout keeps the report).
pub fn verbose(plugin_output: &[(String, String)], timings: &str) {
    let mut text = String::new();
    for (name, output) in plugin_output {
        if output.trim().is_empty() {
            // A native plugin's stderr is the host's own: shown already, not captured.
            text += &format!("plugin {name}: nothing captured from its stderr\n");
        } else {
            text += &format!("plugin {name} wrote to stderr:\n{}\n", output.trim_end());
        }
    }
    text += &format!("timings: {timings}\n");
    let _ = write!(anstream::stderr(), "{text}");
}
