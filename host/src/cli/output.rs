//! The one place commands write their results: JSON objects and text on
//! stdout (a reader that stops early, `| head`, is not an error of ours),
//! with colour only where the terminal and `NO_COLOR` allow it (anstream).

use std::io::Write as _;

use serde::Serialize;

/// `value` as one pretty-printed JSON object on stdout.
pub fn json(value: &impl Serialize) {
    let text = serde_json::to_string_pretty(value).expect("reports serialize");
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// `text` on stdout as it is; ANSI colours are dropped where not wanted.
pub fn text(text: &str) {
    let _ = write!(anstream::stdout(), "{text}");
}
