//! The one place commands write their results: JSON objects and text on
//! stdout (a reader that stops early, `| head`, is not an error of ours),
//! with colour only where the terminal and `NO_COLOR` allow it (anstream).

use std::io::Write as _;

use serde::Serialize;

/// `value` as one pretty-printed JSON object on stdout.
pub fn json(value: &impl Serialize) {
    let _ = std::io::stdout().write_all(json_text(value).as_bytes());
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
