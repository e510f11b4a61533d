//! `apply --interactive`: show each edit's diff and ask, as `git add -p`
//! does, then apply the accepted edits through the same pipeline (one
//! commit, every check) and report the others as rejected. The library
//! prepares and previews; the questions are all here.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, IsTerminal, Write};

use agent_apply_sdk::types::EditStatus;
use anstream::AutoStream;

use super::CommandError;
use crate::limits::CheckedReply;
use crate::pipeline::{self, Applied, ApplyOptions, Prepared};
use crate::report::colorize_diff;
use crate::style::{self, paint};
use crate::workspace::Workspace;

const HELP: &str = "\
y - apply this edit
n - do not apply this edit
q - quit; do not apply this edit or any of the remaining ones
a - apply this edit and all later edits to the same file
d - do not apply this edit or any of the later edits to the same file
? - print help
";

/// Where the questions are asked and answered.
pub struct Terminal {
    input: Box<dyn BufRead>,
    output: AutoStream<Box<dyn Write>>,
}

impl Terminal {
    /// The controlling terminal (the reply usually comes on stdin, so the
    /// answers cannot), else stdin when it is a terminal; else a usage error.
    pub fn open() -> Result<Terminal, CommandError> {
        if let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") {
            let reader = tty.try_clone().map_err(|e| no_terminal(&format!("cannot use /dev/tty: {e}")))?;
            let choice = AutoStream::choice(&tty);
            let writer: Box<dyn Write> = Box::new(tty);
            return Ok(Terminal { input: Box::new(BufReader::new(reader)), output: AutoStream::new(writer, choice) });
        }
        if std::io::stdin().is_terminal() {
            let choice = AutoStream::choice(&std::io::stderr());
            let writer: Box<dyn Write> = Box::new(std::io::stderr());
            return Ok(Terminal { input: Box::new(std::io::stdin().lock()), output: AutoStream::new(writer, choice) });
        }
        Err(no_terminal("there is no terminal to ask on (stdin is not one and there is no controlling terminal)"))
    }

    fn say(&mut self, text: &str) -> Result<(), CommandError> {
        self.output.write_all(text.as_bytes()).and_then(|()| self.output.flush()).map_err(lost)
    }

    /// Ask `question` until the answer is one of the keys; end of input
    /// (Ctrl-D) quits, as in `git add -p`.
    fn ask(&mut self, question: &str) -> Result<Answer, CommandError> {
        loop {
            self.say(&format!("{} ", paint(style::PROMPT, question, true)))?;
            let mut line = String::new();
            if self.input.read_line(&mut line).map_err(lost)? == 0 {
                self.say("\n")?;
                return Ok(Answer::Quit);
            }
            match line.trim().chars().next() {
                Some('y') => return Ok(Answer::Yes),
                Some('n') => return Ok(Answer::No),
                Some('q') => return Ok(Answer::Quit),
                Some('a') => return Ok(Answer::All),
                Some('d') => return Ok(Answer::None),
                None => {}
                Some(_) => self.say(HELP)?,
            }
        }
    }
}

fn no_terminal(why: &str) -> CommandError {
    CommandError::usage(format!("--interactive needs a terminal to ask on: {why}"))
        .hint("run it at a terminal, or leave out --interactive (--dry-run shows what would change)")
}

fn lost(error: std::io::Error) -> CommandError {
    CommandError::usage(format!("--interactive: lost the terminal: {error}; nothing was changed"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Yes,
    No,
    Quit,
    All,
    None,
}

/// What was decided so far: the accepted and rejected edits, and the files
/// whose later edits are decided already (`a`, `d`).
#[derive(Default)]
struct Decisions {
    accepted: Vec<usize>,
    rejected: Vec<usize>,
    by_file: HashMap<String, bool>,
    quit: bool,
}

impl Decisions {
    /// The decision already made for an edit to `path`, if any.
    fn made_for(&self, path: &str) -> Option<bool> {
        if self.quit { Some(false) } else { self.by_file.get(path).copied() }
    }

    fn record(&mut self, edit: usize, accept: bool) {
        if accept { self.accepted.push(edit) } else { self.rejected.push(edit) }
    }
}

/// Prepare `reply`, ask about each edit that changes something, and apply
/// the accepted ones.
pub fn review(
    terminal: &mut Terminal,
    workspace: &mut Workspace,
    reply: CheckedReply,
    options: &ApplyOptions,
) -> Result<Applied, CommandError> {
    let mut prepared = pipeline::prepare(workspace, reply, options)?;
    let reviewable = prepared.reviewable();
    if reviewable.is_empty() {
        let why = if prepared.fails_whole() {
            "the reply does not apply as it is (the report says why; --partial reviews the edits that apply)"
        } else {
            "no edit changes anything"
        };
        terminal.say(&format!("nothing to review: {why}\n"))?;
        return Ok(prepared.apply(&[])?);
    }
    let mut decisions = Decisions::default();
    for index in 0..prepared.edits().len() {
        match reviewable.iter().position(|&r| r == index) {
            Some(number) => ask_about(terminal, &mut prepared, &mut decisions, index, (number + 1, reviewable.len()))?,
            None => say_unreviewable(terminal, &prepared, index)?,
        }
    }
    Ok(prepared.apply(&decisions.rejected)?)
}

/// Show the edit at `index` (the `n`th of `of`) and ask, unless `a`, `d` or
/// `q` decided it already.
fn ask_about(
    terminal: &mut Terminal,
    prepared: &mut Prepared<'_>,
    decisions: &mut Decisions,
    index: usize,
    (n, of): (usize, usize),
) -> Result<(), CommandError> {
    let edit = &prepared.edits()[index];
    let path = edit.path.clone();
    if let Some(accept) = decisions.made_for(&path) {
        decisions.record(index, accept);
        return Ok(());
    }
    let header = format!(
        "edit {} of the reply, {path} (reply lines {}-{}): {}",
        index + 1,
        edit.span.first_line,
        edit.span.last_line,
        edit.summary
    );
    let preview = prepared.preview(index, &decisions.accepted)?;
    let shown = if preview.outcome.status == EditStatus::Failed {
        format!(
            "{} without the edits rejected before it: {}\n",
            paint(style::ERROR, "it no longer applies", true),
            preview.outcome.message
        )
    } else {
        colorize_diff(&preview.diff)
    };
    terminal.say(&format!("{}\n{shown}", paint(style::DIFF_HEADER, &header, true)))?;
    let answer = terminal.ask(&format!("({n}/{of}) Apply this edit [y,n,q,a,d,?]?"))?;
    let accept = matches!(answer, Answer::Yes | Answer::All);
    decisions.record(index, accept);
    match answer {
        Answer::All | Answer::None => {
            decisions.by_file.insert(path, accept);
        }
        Answer::Quit => decisions.quit = true,
        Answer::Yes | Answer::No => {}
    }
    Ok(())
}

/// An edit there is no choice about: one that fails is named, so the
/// person knows it will be reported; one already in place is passed over.
fn say_unreviewable(terminal: &mut Terminal, prepared: &Prepared<'_>, index: usize) -> Result<(), CommandError> {
    let outcome = &prepared.outcomes()[index];
    if outcome.status != EditStatus::Failed {
        return Ok(());
    }
    let edit = &prepared.edits()[index];
    terminal.say(&format!(
        "edit {} of the reply, {}: {} ({}): {}; it is not asked about\n",
        index + 1,
        edit.path,
        paint(style::ERROR, "FAILED", true),
        outcome.kind.map_or("error", |k| k.as_str()),
        outcome.message
    ))
}
