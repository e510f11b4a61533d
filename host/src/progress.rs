//! A status line on stderr while something slow runs (a check, a first-run
//! compile), with what runs and for how long, so a long wait is not a blank
//! screen. Shown only when stderr is a terminal and the output is text:
//! under `--json` or in a pipe nothing but the report is written.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Show status lines from now on if stderr is a terminal and `json` is off.
/// Off until called: the library alone never draws on a terminal.
pub fn enable_for_terminal(json: bool) {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    ENABLED.store(terminal && !json, Ordering::Relaxed);
}

/// A spinner with a message and the elapsed time, cleared when dropped.
pub struct Status(Option<ProgressBar>);

impl Status {
    /// Start showing `message` (when status lines are enabled).
    pub fn start(message: impl Into<Cow<'static, str>>) -> Status {
        if !ENABLED.load(Ordering::Relaxed) {
            return Status(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("the template is valid"));
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(100));
        Status(Some(bar))
    }
}

impl Drop for Status {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
