//! The styles of coloured text (anstyle). Text carrying them is written
//! through anstream, which drops them where colour is not wanted: off a
//! terminal, or under `NO_COLOR`. Callers that hand text elsewhere (the MCP
//! server) ask for it unstyled.

use anstyle::{AnsiColor, Style};

/// `error:` and `FAILED`: what went wrong.
pub const ERROR: Style = AnsiColor::Red.on_default().bold();
/// `warning:` and `rejected`: what was left out.
pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();
/// `hint:`.
pub const HINT: Style = AnsiColor::Cyan.on_default().bold();
/// A diff's `---`/`+++` file headers.
pub const DIFF_HEADER: Style = Style::new().bold();
/// A diff's added lines.
pub const ADDED: Style = AnsiColor::Green.on_default();
/// A diff's removed lines.
pub const REMOVED: Style = AnsiColor::Red.on_default();
/// A diff's `@@` hunk headers.
pub const HUNK: Style = AnsiColor::Cyan.on_default();
/// The question of `--interactive`.
pub const PROMPT: Style = AnsiColor::Blue.on_default().bold();

/// `text` in `style`, when `styled`; else as it is.
pub fn paint(style: Style, text: &str, styled: bool) -> String {
    if styled { format!("{style}{text}{style:#}") } else { text.to_string() }
}
