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
