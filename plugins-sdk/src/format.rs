//! The author-facing [`Format`] trait and the contract-level [`Plugin`] trait
//! every format gets from it.

use std::collections::HashMap;
use std::rc::Rc;

use serde::{Serialize, de::DeserializeOwned};

use crate::kept::{self, KEEP_BY_INDEX, KEEP_PAYLOADS, Kept};
use crate::reply_text;
use crate::types::*;
use crate::view;
use crate::workspace::Workspace;

/// The option by which a host that shows no edit summaries says so
/// (`summaries = off`): a run that applies 20,000 edits reports their
/// outcomes, not their summaries, and making, passing and lifting a string
/// an edit cost it 3% of its instructions.
pub const SUMMARIES: &str = "summaries";

/// Format options, as the host passed them (`key = value` pairs).
#[derive(Debug, Clone, Copy)]
pub struct Options<'a>(pub &'a [OptionValue]);

impl<'a> Options<'a> {
    /// The value of `key`, if given (the last one wins).
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().rev().find(|o| o.key == key).map(|o| o.value.as_str())
    }

    /// `key` as a switch: `on`/`true`/`yes`/`1` or `off`/`false`/`no`/`0`
    /// (any case), `default` when absent or empty; any other value is an
    /// error naming the option. One reading for every format's switches.
    pub fn flag(&self, key: &str, default: bool) -> Result<bool, String> {
        let Some(raw) = self.get(key) else { return Ok(default) };
        match raw.trim().to_ascii_lowercase().as_str() {
            "" => Ok(default),
            "on" | "true" | "yes" | "1" => Ok(true),
            "off" | "false" | "no" | "0" => Ok(false),
            _ => Err(format!("option `{key}` has the invalid value {raw:?} (expected on or off)")),
        }
    }

    /// Whether the host shows each edit's summary ([`SUMMARIES`], on unless
    /// the host says `off`): a plain run does not, and a format may then
    /// skip making them (the SDK gives them back empty either way).
    pub fn shows_summaries(&self) -> bool {
        self.flag(SUMMARIES, true).unwrap_or(true)
    }

    /// `key` parsed as `T`, or `default` when absent; a value that does not
    /// parse is an error naming the option.
    pub fn parse_or<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, String> {
        match self.get(key) {
            None => Ok(default),
            Some(raw) => raw.trim().parse().map_err(|_| format!("option `{key}` has the invalid value {raw:?}")),
        }
    }
}

/// An edit as a format understands it: the contract's [`Edit`] with its
/// payload still typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEdit<Op> {
    /// Repo-relative, `/`-separated path of the file the edit targets.
    pub path: String,
    /// Other paths the edit reads or writes (a rename's destination).
    pub related_paths: Vec<String>,
    /// Where in the reply the edit was written.
    pub span: Span,
    /// One line for humans: "replace 3 lines".
    pub summary: String,
    /// The format's private payload.
    pub op: Op,
}

impl<Op> ParsedEdit<Op> {
    /// An edit of `path` written at `span`, described by `summary`.
    pub fn new(path: impl Into<String>, span: Span, summary: impl Into<String>, op: Op) -> Self {
        ParsedEdit { path: path.into(), related_paths: Vec::new(), span, summary: summary.into(), op }
    }
}

/// What a format's `parse` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<Op> {
    /// The edits, in reply order.
    pub edits: Vec<ParsedEdit<Op>>,
    /// Problems found; any `error` means the reply is malformed.
    pub diagnostics: Vec<Diagnostic>,
    /// Shell commands the reply suggests (reported, never run).
    pub commands: Vec<SuggestedCommand>,
}

impl<Op> Default for Parsed<Op> {
    fn default() -> Self {
        Parsed { edits: Vec::new(), diagnostics: Vec::new(), commands: Vec::new() }
    }
}

/// A successful edit: what to tell the user.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Applied {
    /// One sentence, e.g. "replaced lines 4-9".
    pub message: String,
    /// The lines the edit touched, in the file as it was before it.
    pub lines: Option<LineRange>,
    /// Set when the edit landed on another file than the one it named.
    pub applied_path: Option<String>,
}

impl Applied {
    /// An edit that changed `lines` (of the file as it was), told as `message`.
    pub fn at(lines: LineRange, message: impl Into<String>) -> Self {
        Applied { message: message.into(), lines: Some(lines), applied_path: None }
    }
}

/// A failed edit: why, and what the model should do instead.
#[derive(Debug, Clone, PartialEq)]
pub struct EditFailure {
    /// Why, as a category (`not-found`, `ambiguous`, `stale`, ...).
    pub kind: FailureKind,
    /// One sentence a model can act on.
    pub message: String,
    /// The closest real lines, fresh anchors, or what to send instead.
    pub hint: Option<String>,
    /// The lines involved, in the file as it was before the edit.
    pub lines: Option<LineRange>,
}

impl EditFailure {
    /// A failure of `kind` with a message.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        EditFailure { kind, message: message.into(), hint: None, lines: None }
    }

    /// The same failure with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The same failure pointing at lines of the file.
    pub fn at(mut self, lines: LineRange) -> Self {
        self.lines = Some(lines);
        self
    }
}

/// What a format author implements. Every method but `info`, `parse` and
/// `apply_edit` has a sensible default.
pub trait Format: Send + Sync {
    /// The format's private edit payload: what `parse` produces and
    /// `apply_edit` consumes. It crosses the host as JSON.
    type Op: Serialize + DeserializeOwned + 'static;

    /// Name, aliases, version, prompt text and example.
    fn info(&self) -> FormatInfo;

    /// Confidence (0.0–1.0) that `reply` is in this format. By default 0.5
    /// when the reply holds one of `info().detect_hints`, else 0.0.
    fn detect(&self, reply: &str) -> f32 {
        let hinted = self.info().detect_hints.iter().any(|hint| crate::text::contains(reply, hint));
        if hinted { 0.5 } else { 0.0 }
    }

    /// [`Format::detect`] of a reply the plugin owns (the wasm export's): a
    /// format whose confidence comes from reading the whole reply may keep
    /// that reading for the `parse` that follows ([`crate::detect_parse`]).
    fn detect_owned(&self, reply: String) -> f32 {
        self.detect(&reply)
    }

    /// Read the edits in a reply.
    fn parse(&self, reply: &str, options: Options<'_>) -> Parsed<Self::Op>;

    /// Apply one edit to the in-memory files.
    fn apply_edit(
        &self,
        workspace: &mut Workspace,
        edit: &ParsedEdit<Self::Op>,
        options: Options<'_>,
    ) -> Result<Applied, EditFailure>;

    /// Apply all edits of a reply, in order, each against the result of the
    /// previous. Override it to validate edits against each other first.
    fn apply(
        &self,
        workspace: &mut Workspace,
        edits: &[ParsedEdit<Self::Op>],
        options: Options<'_>,
    ) -> Vec<Result<Applied, EditFailure>> {
        apply_each(self, workspace, edits, options)
    }

    /// Whether `apply` reads an edit's `summary` (by default it may). An
    /// instance that keeps a parse's edits for `apply` (the host's
    /// `keep-payloads`) keeps their summaries only for a format that does;
    /// others get them back empty: a reply of thousands of edits holds a
    /// megabyte of summaries, which only the host shows.
    fn apply_reads_summaries(&self) -> bool {
        true
    }

    /// What a model should read: by default the plain lines of `ranges`
    /// (merged, with `...` between gaps), or the whole file.
    fn render(&self, file: &File, ranges: &[LineRange], _options: Options<'_>) -> Result<String, String> {
        Ok(view::render_ranges(&file.content, ranges, |_, line| line.to_string()))
    }

    /// Leftovers of this format in a file. None by default.
    fn lint(&self, _file: &File) -> Vec<Diagnostic> {
        Vec::new()
    }
}

/// Apply `edits` one by one with [`Format::apply_edit`], in order, each
/// against the result of the ones before: the default [`Format::apply`],
/// for overrides that fall back to it. It tells the workspace which edit
/// is being applied, so [`Workspace::note_match`] reaches the right outcome.
pub fn apply_each<F: Format + ?Sized>(
    format: &F,
    workspace: &mut Workspace,
    edits: &[ParsedEdit<F::Op>],
    options: Options<'_>,
) -> Vec<Result<Applied, EditFailure>> {
    (0..edits.len()).map(|index| apply_one(format, workspace, edits, index, options)).collect()
}

/// Apply `edits[index]` with [`Format::apply_edit`], telling the workspace
/// which edit it is: for overrides of [`Format::apply`] that apply some
/// edits their own way and the rest one by one.
pub fn apply_one<F: Format + ?Sized>(
    format: &F,
    workspace: &mut Workspace,
    edits: &[ParsedEdit<F::Op>],
    index: usize,
    options: Options<'_>,
) -> Result<Applied, EditFailure> {
    workspace.set_current(index);
    format.apply_edit(workspace, &edits[index], options)
}

/// Apply `edits` a file at a time, for formats whose edits of one file are
/// checked together against the file as it was (line numbers, anchors):
/// `per_file` gets each path once, in the order the reply first names it,
/// with its edits (index in `edits`, op) in reply order, and returns an
/// outcome for each of those indexes.
pub fn apply_by_file<'e, Op>(
    edits: &'e [ParsedEdit<Op>],
    mut per_file: impl FnMut(&'e str, Vec<(usize, &'e Op)>) -> Vec<(usize, Result<Applied, EditFailure>)>,
) -> Vec<Result<Applied, EditFailure>> {
    let mut results: Vec<Option<Result<Applied, EditFailure>>> = vec![None; edits.len()];
    for (path, indexes) in edits_by_file(edits) {
        let group = indexes.into_iter().map(|i| (i, &edits[i].op)).collect();
        for (i, outcome) in per_file(path, group) {
            results[i] = Some(outcome);
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(EditFailure::new(FailureKind::Malformed, "internal error: no outcome"))))
        .collect()
}

/// The paths `edits` name, in the order the reply first names each, with
/// the indexes of their edits in reply order.
pub fn edits_by_file<Op>(edits: &[ParsedEdit<Op>]) -> Vec<(&str, Vec<usize>)> {
    indexes_by_path(edits.iter().map(|edit| edit.path.as_str()).enumerate())
}

/// `(index, path)` pairs grouped by path, paths in the order first named,
/// indexes in the order given. One pass: thousands of edits over dozens of
/// files are not rescanned per file (the host groups its edits so too).
pub fn indexes_by_path<'a>(named: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<(&'a str, Vec<usize>)> {
    let mut numbers = PathNumbers::default();
    let mut indexes: Vec<Vec<usize>> = Vec::new();
    for (index, path) in named {
        let number = numbers.number(path) as usize;
        if number == indexes.len() {
            indexes.push(Vec::new());
        }
        indexes[number].push(index);
    }
    numbers.into_paths().into_iter().zip(indexes).collect()
}

/// Paths numbered in the order first named, each kept once. Edits come in
/// runs on one file, so a path is compared with the last one's before it
/// is hashed, and stored (`P` made from it) only when it is new.
pub(crate) struct PathNumbers<P> {
    paths: Vec<P>,
    number_of: HashMap<P, u32>,
    last: Option<u32>,
}

impl<P> Default for PathNumbers<P> {
    fn default() -> Self {
        PathNumbers { paths: Vec::new(), number_of: HashMap::new(), last: None }
    }
}

impl<P: std::borrow::Borrow<str> + std::hash::Hash + Eq + Clone> PathNumbers<P> {
    /// The number of `path`, a new one if it was not named before.
    pub(crate) fn number<Q: AsRef<str> + Into<P>>(&mut self, path: Q) -> u32 {
        let text = path.as_ref();
        let number = match self.last {
            Some(last) if crate::text::same_text(self.paths[last as usize].borrow(), text) => last,
            _ => match self.number_of.get(text) {
                Some(&number) => number,
                None => {
                    let (path, number): (P, u32) = (path.into(), self.paths.len() as u32);
                    self.paths.push(path.clone());
                    self.number_of.insert(path, number);
                    number
                }
            },
        };
        self.last = Some(number);
        number
    }

    /// The paths, by number.
    pub(crate) fn into_paths(self) -> Vec<P> {
        self.paths
    }
}

/// The plugin contract in Rust: exactly what the host calls, with the
/// contract's own types. Every [`Format`] implements it.
pub trait Plugin {
    /// The contract's `info`: name, version, prompt text, example.
    fn info(&self) -> FormatInfo;
    /// The contract's `detect`: confidence 0.0–1.0 that `reply` is in this format.
    fn detect(&self, reply: &str) -> f32;
    /// `detect` of a reply the plugin owns (the wasm export's).
    fn detect_owned(&self, reply: String) -> f32 {
        self.detect(&reply)
    }
    /// The contract's `parse`: edits with JSON payloads, and diagnostics.
    fn parse(&self, reply: &str, options: &[OptionValue]) -> ParseOutput;
    /// `parse` of a reply the plugin owns (the wasm export's): a format may
    /// keep it, for payloads that are slices of it ([`crate::ReplyText`]).
    fn parse_owned(&self, reply: String, options: &[OptionValue]) -> ParseOutput {
        self.parse(&reply, options)
    }
    /// The contract's `apply`: whole new file contents and one outcome per
    /// edit. It takes the edits by value so that each payload is freed once
    /// read: a large reply's payloads are megabytes of linear memory.
    fn apply(&self, files: Vec<File>, edits: Vec<Edit>, options: &[OptionValue]) -> Result<ApplyOutput, String>;
    /// The contract's `apply-kept` (0.2): `apply` of the edits at these
    /// indexes of what the latest `parse` returned, which this instance
    /// kept (the host's [`KEEP_PAYLOADS`] option). A plugin that keeps
    /// nothing refuses, and the host gives the edits back by `apply`.
    fn apply_kept(&self, files: Vec<File>, edits: Vec<u32>, options: &[OptionValue]) -> Result<ApplyOutput, String> {
        let _ = (files, edits, options);
        Err("this plugin keeps no edits; give them back by `apply`".into())
    }
    /// The contract's `render`: the view of a file a model should read.
    fn render(&self, file: &File, ranges: &[LineRange], options: &[OptionValue]) -> Result<String, String>;
    /// The contract's `lint`: leftovers of this format in a file.
    fn lint(&self, file: &File) -> Vec<Diagnostic>;
}

impl<F: Format> Plugin for F {
    fn info(&self) -> FormatInfo {
        Format::info(self)
    }

    fn detect(&self, reply: &str) -> f32 {
        Format::detect(self, reply).clamp(0.0, 1.0)
    }

    fn detect_owned(&self, reply: String) -> f32 {
        Format::detect_owned(self, reply).clamp(0.0, 1.0)
    }

    fn parse(&self, reply: &str, options: &[OptionValue]) -> ParseOutput {
        encoded(Format::parse(self, reply, Options(options)), options, self.apply_reads_summaries())
    }

    fn parse_owned(&self, reply: String, options: &[OptionValue]) -> ParseOutput {
        if keeping(options).is_none() {
            return Plugin::parse(self, &reply, options);
        }
        // The kept payloads may be slices of the reply: it stays with them.
        let parsed = reply_text::reading(Rc::new(reply), |reply| Format::parse(self, reply, Options(options)));
        encoded(parsed, options, self.apply_reads_summaries())
    }

    fn apply(&self, files: Vec<File>, edits: Vec<Edit>, options: &[OptionValue]) -> Result<ApplyOutput, String> {
        // References name kept edits (as `parse` read them); JSON carries
        // only the payload, beside the host's copy of the rest.
        let unreadable = |index: usize, edit: &Edit, error: &dyn std::fmt::Display| {
            format!("edit {index} ({}) has a payload this plugin cannot read: {error}", edit.path)
        };
        if edits.first().is_some_and(|edit| edit.payload.starts_with(kept::PREFIX)) {
            let mut indexes = Vec::with_capacity(edits.len());
            for (index, edit) in edits.iter().enumerate() {
                match kept::with(|kept| kept.index_of(&edit.payload)) {
                    Some(Ok(at)) => indexes.push(at),
                    Some(Err(error)) => return Err(unreadable(index, edit, &error)),
                    None => return Err(unreadable(index, edit, &"JSON among kept references")),
                }
            }
            drop(edits);
            return self.apply_kept(files, indexes, options);
        }
        let mut typed = Vec::with_capacity(edits.len());
        for (index, edit) in edits.into_iter().enumerate() {
            let op = serde_json::from_str(&edit.payload).map_err(|error| unreadable(index, &edit, &error))?;
            let Edit { path, related_paths, span, summary, .. } = edit;
            typed.push(ParsedEdit { path, related_paths, span, summary, op });
        }
        apply_typed(self, files, &typed, options)
    }

    fn apply_kept(&self, files: Vec<File>, edits: Vec<u32>, options: &[OptionValue]) -> Result<ApplyOutput, String> {
        kept::with(|kept| kept.with_selected(&edits, |typed| apply_typed(self, files, typed, options)))?
    }

    fn render(&self, file: &File, ranges: &[LineRange], options: &[OptionValue]) -> Result<String, String> {
        Format::render(self, file, ranges, Options(options))
    }

    fn lint(&self, file: &File) -> Vec<Diagnostic> {
        Format::lint(self, file)
    }
}

/// `parsed` as the contract gives it: each payload JSON, or kept in the
/// instance when the host says it will give the edits back.
/// Summaries go back empty when the host shows none, unless the format
/// reads them in `apply` and the host holds them for it.
fn encoded<Op: Serialize + 'static>(parsed: Parsed<Op>, options: &[OptionValue], summaries: bool) -> ParseOutput {
    let shown = Options(options).shows_summaries();
    let Some(references) = keeping(options) else {
        kept::with(Kept::forget);
        return with_json_payloads(parsed, shown || summaries);
    };
    let edits = kept::with(|kept| kept.keep(parsed.edits, summaries, shown, references));
    ParseOutput { edits, diagnostics: parsed.diagnostics, commands: parsed.commands }
}

/// `parsed` with each payload encoded as JSON, and the summaries only if
/// `summaries`.
fn with_json_payloads<Op: Serialize>(parsed: Parsed<Op>, summaries: bool) -> ParseOutput {
    let mut diagnostics = parsed.diagnostics;
    let to_edit = |ParsedEdit { path, related_paths, span, summary, op }| match serde_json::to_string(&op) {
        Ok(payload) => {
            let summary = if summaries { summary } else { String::new() };
            Some(Edit { path, related_paths, span, summary, payload })
        }
        Err(error) => {
            let message = format!("internal error: could not encode an edit of {path}: {error}");
            diagnostics.push(Diagnostic::error(message, Some(span)));
            None
        }
    };
    let edits: Vec<Edit> = if align_of::<ParsedEdit<Op>>() == align_of::<Edit>() {
        // Collected in place: the parsed edits' buffer becomes the
        // contract's, not a second one beside it.
        parsed.edits.into_iter().filter_map(to_edit).collect()
    } else {
        // Of another alignment (an `Op` holding a `u64`, say) they cannot
        // be; collected, the vector grew by doubling and a reply of 20,000
        // edits held its last two sizes side by side. Sized once instead.
        let mut edits = Vec::with_capacity(parsed.edits.len());
        edits.extend(parsed.edits.into_iter().filter_map(to_edit));
        edits
    };
    ParseOutput { edits, diagnostics, commands: parsed.commands }
}

/// Whether `parse` keeps its edits in the instance (the host's
/// [`KEEP_PAYLOADS`] option), and if so whether each edit's payload refers
/// to its kept edit (`on`) or is empty ([`KEEP_BY_INDEX`]: the host gives
/// them back by index alone). Only a wasm instance keeps them: its memory
/// is its own, while a native library's statics are shared by every
/// instance.
fn keeping(options: &[OptionValue]) -> Option<bool> {
    if !cfg!(target_arch = "wasm32") {
        return None;
    }
    match Options(options).get(KEEP_PAYLOADS) {
        Some(KEEP_BY_INDEX) => Some(false),
        _ => Options(options).flag(KEEP_PAYLOADS, false).unwrap_or(false).then_some(true),
    }
}

/// The contract's `apply` once the payloads are typed: run the format on a
/// workspace of `files` and tell each edit's outcome.
fn apply_typed<F: Format>(
    format: &F,
    files: Vec<File>,
    typed: &[ParsedEdit<F::Op>],
    options: &[OptionValue],
) -> Result<ApplyOutput, String> {
    let mut workspace = Workspace::new(files);
    let results = Format::apply(format, &mut workspace, typed, Options(options));
    if results.len() != typed.len() {
        return Err(format!("the format returned {} outcomes for {} edits", results.len(), typed.len()));
    }
    let outcomes = results
        .into_iter()
        .enumerate()
        .map(|(index, result)| match result {
            Ok(applied) => Outcome {
                edit: index as u32,
                status: EditStatus::Applied,
                kind: None,
                message: applied.message,
                hint: None,
                matched: workspace
                    .take_match(index)
                    .map(|m| MatchInfo { retried: applied.applied_path.is_some(), ..m }),
                applied_path: applied.applied_path,
                lines: applied.lines,
            },
            Err(failure) => Outcome {
                edit: index as u32,
                status: EditStatus::Failed,
                kind: Some(failure.kind),
                message: failure.message,
                hint: failure.hint,
                applied_path: None,
                lines: failure.lines,
                matched: None,
            },
        })
        .collect();
    Ok(ApplyOutput { changes: workspace.into_changes(), outcomes })
}

#[cfg(test)]
mod flag_tests {
    use super::*;

    #[test]
    fn edits_group_by_file_in_the_order_the_reply_first_names_each() {
        let span = Span { start: 0, end: 0, first_line: 1, last_line: 1 };
        let edit = |path: &str| ParsedEdit::new(path, span, "", ());
        let edits = [edit("b.rs"), edit("a.rs"), edit("b.rs"), edit("c.rs"), edit("a.rs")];
        let groups = edits_by_file(&edits);
        assert_eq!(groups, vec![("b.rs", vec![0, 2]), ("a.rs", vec![1, 4]), ("c.rs", vec![3])]);
        // In runs on one file (as most replies are), and back to an earlier one.
        let paths = ["b.rs", "b.rs", "a.rs", "b.rs", "b.rs", "c.rs", "a.rs", "a.rs", "ab.rs"];
        let groups = indexes_by_path(paths.into_iter().enumerate());
        let expected = vec![("b.rs", vec![0, 1, 3, 4]), ("a.rs", vec![2, 6, 7]), ("c.rs", vec![5]), ("ab.rs", vec![8])];
        assert_eq!(groups, expected);
    }

    #[test]
    fn the_parsed_edits_become_the_contracts_whatever_the_alignment_of_their_ops() {
        fn parsed<Op>(ops: impl IntoIterator<Item = Op>) -> Parsed<Op> {
            let span = Span { start: 0, end: 0, first_line: 1, last_line: 1 };
            let edits = ops.into_iter().enumerate().map(|(i, op)| ParsedEdit::new(format!("f{i}.rs"), span, "s", op));
            Parsed { edits: edits.collect(), ..Parsed::default() }
        }
        // `u128` is aligned unlike an `Edit`: its edits are collected into a
        // vector sized once, not in place.
        let narrow = encoded(parsed(0..300u64), &[], true);
        let wide = encoded(parsed(0..300u128), &[], true);
        assert_ne!(align_of::<ParsedEdit<u128>>(), align_of::<Edit>());
        assert_eq!(wide.edits.capacity(), 300, "sized once, not grown by doubling");
        let shown =
            |out: &ParseOutput| out.edits.iter().map(|e| (e.path.clone(), e.payload.clone())).collect::<Vec<_>>();
        assert_eq!(shown(&narrow), shown(&wide));
        assert_eq!(shown(&wide)[299], ("f299.rs".to_string(), "299".to_string()));
    }

    #[test]
    fn a_switch_reads_one_set_of_words_and_names_a_bad_value() {
        let values = |v: &str| vec![OptionValue { key: "strict".into(), value: v.into() }];
        for (value, want) in [("on", true), ("TRUE", true), ("yes", true), ("1", true), ("off", false), ("No", false)] {
            assert_eq!(Options(&values(value)).flag("strict", !want), Ok(want), "{value}");
        }
        assert_eq!(Options(&values("")).flag("strict", true), Ok(true));
        assert_eq!(Options(&[]).flag("strict", false), Ok(false));
        let error = Options(&values("maybe")).flag("strict", false).unwrap_err();
        assert_eq!(error, "option `strict` has the invalid value \"maybe\" (expected on or off)");
    }
}
