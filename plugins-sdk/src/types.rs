//! The contract's types, as Rust sees them, with a few conveniences.
//!
//! These are generated from `wit/since_v0.1.0/format.wit`; the WIT file documents
//! every field.

pub use crate::bindings::agent_apply::format0_1_0::types::{
    ApplyOutput, Change, Diagnostic, Edit, EditStatus, FailureKind, File, FormatInfo, LevelCount, LineRange, MatchInfo,
    OptionDoc, OptionValue, Outcome, ParseOutput, Renamed, Severity, Span, SuggestedCommand,
};

impl FailureKind {
    /// Every kind, in the contract's order.
    pub const ALL: [FailureKind; 8] = [
        FailureKind::Malformed,
        FailureKind::NotFound,
        FailureKind::Ambiguous,
        FailureKind::Stale,
        FailureKind::OutOfRange,
        FailureKind::Overlap,
        FailureKind::AlreadyApplied,
        FailureKind::Forbidden,
    ];

    /// The kebab-case name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Malformed => "malformed",
            FailureKind::NotFound => "not-found",
            FailureKind::Ambiguous => "ambiguous",
            FailureKind::Stale => "stale",
            FailureKind::OutOfRange => "out-of-range",
            FailureKind::Overlap => "overlap",
            FailureKind::AlreadyApplied => "already-applied",
            FailureKind::Forbidden => "forbidden",
        }
    }
}

impl Severity {
    /// Every severity, most severe first.
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Note];

    /// The lowercase name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl EditStatus {
    /// The lowercase name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            EditStatus::Applied => "applied",
            EditStatus::Failed => "failed",
        }
    }
}

impl LineRange {
    /// Lines `start..=end`, 1-based.
    pub fn new(start: u32, end: u32) -> Self {
        LineRange { start, end }
    }

    /// Whether `line` (1-based) lies in the range.
    pub fn contains(&self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// How the message of a diagnostic about a cut-off reply begins. A model
/// that hits its output limit stops mid-edit; the host then applies nothing
/// of the reply (not even with `--partial`) and asks for the rest of it.
pub const CUT_OFF: &str = "the reply is cut off";

impl Diagnostic {
    /// An error: the reply ends inside the edit at `span` (`inside` says
    /// where, e.g. "inside the code block for src/a.py").
    pub fn cut_off(inside: impl std::fmt::Display, span: Option<Span>) -> Self {
        Diagnostic::error(format!("{CUT_OFF} {inside}"), span)
            .with_hint("the reply ends in the middle of this edit; send this edit and every edit after it again")
    }

    /// Whether this is a [`Diagnostic::cut_off`] error.
    pub fn is_cut_off(&self) -> bool {
        self.severity == Severity::Error && self.message.starts_with(CUT_OFF)
    }

    /// An error about the reply at `span`.
    pub fn error(message: impl Into<String>, span: Option<Span>) -> Self {
        Diagnostic { severity: Severity::Error, message: message.into(), hint: None, span, path: None, lines: None }
    }

    /// A warning about the reply at `span`.
    pub fn warning(message: impl Into<String>, span: Option<Span>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(message, span) }
    }

    /// A finding in file `path` at `lines` (used by `lint`).
    pub fn in_file(message: impl Into<String>, path: &str, lines: LineRange) -> Self {
        Diagnostic { path: Some(path.to_string()), lines: Some(lines), ..Diagnostic::error(message, None) }
    }

    /// The same diagnostic with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl Change {
    /// The path this change leaves behind (the destination of a rename).
    pub fn path(&self) -> &str {
        match self {
            Change::Write(file) => &file.path,
            Change::Delete(path) => path,
            Change::Rename(renamed) => &renamed.to,
        }
    }
}

impl MatchInfo {
    /// Placed by `level`, where the edit said, on the file it named.
    pub fn at(level: impl Into<String>) -> Self {
        MatchInfo { level: level.into(), relocated: false, stated_line: None, retried: false, candidates: Vec::new() }
    }

    /// The same, placed away from `stated_line`, the line the edit named.
    pub fn relocated_from(mut self, stated_line: u32) -> Self {
        self.relocated = true;
        self.stated_line = Some(stated_line);
        self
    }
}

/// Everything empty: a format sets what it has (`name`, `summary`,
/// `instructions`, an example) and leaves the rest with
/// `..FormatInfo::default()`. An empty `version` is filled with the format
/// crate's own version by [`export_format!`](crate::export_format).
impl Default for FormatInfo {
    fn default() -> Self {
        FormatInfo {
            name: String::new(),
            aliases: Vec::new(),
            version: String::new(),
            summary: String::new(),
            instructions: String::new(),
            example_reply: String::new(),
            example_files: Vec::new(),
            options: Vec::new(),
            detect_hints: Vec::new(),
        }
    }
}

/// The format's info with its crate version filled in when it left it
/// empty (used by [`export_format!`](crate::export_format), which knows the
/// version of the crate it is expanded in).
#[doc(hidden)]
pub fn info_with_version(mut info: FormatInfo, crate_version: &str) -> FormatInfo {
    if info.version.is_empty() {
        info.version = crate_version.to_string();
    }
    info
}

impl File {
    /// A file snapshot.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        File { path: path.into(), content: content.into() }
    }
}
