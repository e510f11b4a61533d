//! A reply read whole: the chosen format's edits, plus the edits of any
//! other format the reply mixes in. A model that writes a SEARCH/REPLACE
//! block and then a ```diff block means both; reading only the first would
//! report "applied" while half of the reply vanished. Each part is parsed
//! and applied by its own format, all parts or none; edit markers that no
//! format read are an error naming their reply lines.

use std::borrow::Borrow;
use std::ops::Range;
use std::time::Instant;

use agent_apply_sdk::markers::{edit_marker, marker_candidates, may_hold_marker};
use agent_apply_sdk::source::SourceMap;
use agent_apply_sdk::text::newline_count;
use agent_apply_sdk::types::{
    ApplyOutput, Change, Diagnostic, Edit, EditStatus, File, OptionValue, Outcome, ParseOutput, Severity, Span,
};
use agent_apply_sdk::{KEEP_BY_INDEX, KEEP_PAYLOADS, SUMMARIES};

use crate::Error;
use crate::config::Config;
use crate::registry::{Chosen, ChosenBy, FormatEntry, Registry};
use crate::runtime::{ParseId, PluginInstance};
use crate::snippet;

/// A format must be at least this sure of the rest of a reply to read it as
/// a second part: `whole` (0.4 at most) never is, since any leftover code
/// block under a path would otherwise become a file replacement.
const PART_CONFIDENCE: f32 = 0.5;
/// How sure another format must be of a reply in which the named format
/// found no edit for the run to stop and name it.
const FITS_CONFIDENCE: f32 = 0.2;

/// One format's share of a reply.
pub struct Part {
    pub name: String,
    pub instance: PluginInstance,
    pub options: Vec<OptionValue>,
    /// Its edits' indexes in [`Reading::parsed`].
    pub edits: Range<usize>,
    /// The `parse` of `instance` they came from, when it kept them: they
    /// are then given back by index rather than by value.
    pub parse: Option<ParseId>,
}

/// Everything a reply holds, in the order the formats read it.
pub struct Reading {
    /// The chosen format's part first.
    pub parts: Vec<Part>,
    /// Every part's edits, diagnostics and commands, concatenated.
    pub parsed: ParseOutput,
    /// How the first part's format was chosen (after the files had their
    /// say: see [`snippet`]).
    pub by: ChosenBy,
}

impl Reading {
    /// The formats after the chosen one, for reports.
    pub fn also(&self) -> Vec<String> {
        self.parts.iter().skip(1).map(|p| p.name.clone()).collect()
    }
}

/// What a caller of [`read`] asks of the formats, besides the reply.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    /// The file a reply that names none edits (`--file`).
    pub file: Option<&'a str>,
    /// Whether the caller shows each edit's summary (`parse`, a preview):
    /// when not, the formats are told ([`SUMMARIES`] `= off`) and may
    /// spare making, passing and lifting a string an edit.
    pub summaries: bool,
}

/// Parse `reply` with the chosen format, then give what it left unread to
/// the other formats while it holds edit markers. `existing` reads a file
/// of the repository, for an automatic choice the files may overrule
/// (see [`snippet`]).
pub fn read(
    registry: &Registry,
    config: &Config,
    asked: Asked<'_>,
    mut chosen: Chosen,
    reply: &str,
    existing: &dyn Fn(&str) -> Option<String>,
) -> Result<Reading, Error> {
    let mut options = options_for(config, asked, &chosen);
    let (mut snippets, read_already) = snippet::snippets(&mut chosen, &options, reply, existing)?;
    if !snippets.is_empty() {
        chosen = registry.reader_without(reply, &chosen.entry.name)?;
        options = options_for(config, asked, &chosen);
    }
    let (name, by) = (chosen.entry.name.clone(), chosen.by);
    let mut instance = chosen.instance;
    let mut parsed = match read_already {
        Some(parsed) => parsed,
        None => instance.parse(reply, &options)?,
    };
    if !parsed.edits.is_empty() {
        // What another format read stands; the snippets are only reported.
        snippets.iter_mut().for_each(|d| d.severity = Severity::Warning);
    }
    parsed.diagnostics.splice(0..0, snippets);
    // `parsed` is the instance's latest parse, read here or by the snippet trial.
    let parse = instance.latest_parse();
    let mut parts = vec![Part { name, instance, options, edits: 0..parsed.edits.len(), parse }];
    if parsed.edits.is_empty() {
        if matches!(by, ChosenBy::Flag | ChosenBy::Config) && !reply.trim().is_empty() {
            wrong_format(registry, config, asked, &parts, reply)?;
        }
        if !parsed.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            let named = (!matches!(by, ChosenBy::Auto { .. })).then_some(parts[0].name.as_str());
            parsed.diagnostics.push(no_edit(named));
        }
        return Ok(Reading { parts, parsed, by });
    }
    // Most replies are read whole by one format: found out without a
    // masked copy of the reply (a transient copy of a 10 MB reply is most
    // of a run's peak memory).
    let mut unread_lines = markers_left(reply, &parsed);
    if unread_lines.is_empty() {
        return Ok(Reading { parts, parsed, by });
    }
    let mut rest = masked(reply, &parsed);
    while !unread_lines.is_empty() {
        let Some(mut part) = best_reader(registry, config, asked, &parts, &rest, PART_CONFIDENCE)? else { break };
        let output = part.instance.parse(&rest, &part.options)?;
        if output.edits.is_empty() {
            break;
        }
        rest = masked(&rest, &output);
        unread_lines = marker_lines(&rest);
        part.edits = parsed.edits.len()..parsed.edits.len() + output.edits.len();
        part.parse = part.instance.latest_parse();
        parsed.edits.extend(output.edits);
        parsed.diagnostics.extend(output.diagnostics);
        parsed.commands.extend(output.commands);
        parts.push(part);
    }
    if let Some(diagnostic) = unread(&rest, &unread_lines, &parts[0].name) {
        parsed.diagnostics.push(diagnostic);
    }
    Ok(Reading { parts, parsed, by })
}

/// The options a format reads a reply with: the config's, and whether the
/// user named the format (a format may then trust the reply more: `whole`
/// writes a file that shrinks to a fragment).
fn options_for(config: &Config, asked: Asked<'_>, chosen: &Chosen) -> Vec<OptionValue> {
    let mut options = reading_options(config, &chosen.entry.name, asked, &chosen.instance);
    options.push(OptionValue { key: "chosen-by".into(), value: chosen_by(&chosen.by).into() });
    options
}

/// The config's options for format `name`, and the word that every edit
/// `instance` reads comes back to it: a plugin may then keep the payloads
/// instead of passing them through the host, and one that applies kept
/// edits by index (contract 0.2) gets them back so alone. Summaries are
/// asked for only when shown.
fn reading_options(config: &Config, name: &str, asked: Asked<'_>, instance: &PluginInstance) -> Vec<OptionValue> {
    let mut options = config.plugin_options(name, asked.file);
    let keeping = if instance.applies_kept_edits() { KEEP_BY_INDEX } else { "on" };
    options.push(OptionValue { key: KEEP_PAYLOADS.into(), value: keeping.into() });
    if !asked.summaries {
        options.push(OptionValue { key: SUMMARIES.into(), value: "off".into() });
    }
    options
}

fn chosen_by(by: &ChosenBy) -> &'static str {
    match by {
        ChosenBy::Flag => "flag",
        ChosenBy::Config => "config",
        ChosenBy::Model { .. } => "model",
        ChosenBy::Auto { .. } => "auto",
    }
}

/// The error for a reply in which the format the user named found no edit
/// while another format reads edits in it: a wrong `--format` (aider's
/// `diff` is SEARCH/REPLACE, and people holding a diff type it).
fn wrong_format(
    registry: &Registry,
    config: &Config,
    asked: Asked<'_>,
    named: &[Part],
    reply: &str,
) -> Result<(), Error> {
    let Some(mut fits) = best_reader(registry, config, asked, named, reply, FITS_CONFIDENCE)? else { return Ok(()) };
    if fits.instance.parse(reply, &fits.options)?.edits.is_empty() {
        return Ok(());
    }
    Err(Error::WrongFormat { named: named[0].name.clone(), fits: fits.name })
}

/// The error for a reply that holds no edit at all: the same under every
/// way of choosing the format, so a harness sees one status for it.
fn no_edit(named: Option<&str>) -> Diagnostic {
    let hint = match named {
        Some(format) => {
            format!("write each change in the {format} format (`git agent-apply prompt {format}` shows how)")
        }
        None => {
            "write each change as an edit in a format this tool reads (`git agent-apply formats` lists them)".into()
        }
    };
    Diagnostic::error("the reply holds no edit", None).with_hint(hint)
}

/// The format not yet used that is surest of `rest`, if at least `floor` sure.
fn best_reader(
    registry: &Registry,
    config: &Config,
    asked: Asked<'_>,
    used: &[Part],
    rest: &str,
    floor: f32,
) -> Result<Option<Part>, Error> {
    let mut best: Option<(f32, Part)> = None;
    let unused: Vec<&FormatEntry> =
        registry.entries().iter().filter(|e| used.iter().all(|p| p.name != e.name)).collect();
    let may = registry.may_detect(rest, &unused);
    for entry in unused.into_iter().zip(may).filter_map(|(entry, may)| may.then_some(entry)) {
        let mut instance = registry.instantiate(entry)?;
        let confidence = instance.detect(rest)?;
        if confidence >= floor && best.as_ref().is_none_or(|(b, _)| confidence > *b) {
            let options = reading_options(config, &entry.name, asked, &instance);
            best = Some((confidence, Part { name: entry.name.clone(), instance, options, edits: 0..0, parse: None }));
        }
    }
    Ok(best.map(|(_, part)| part))
}

/// `text` with what `output` read blanked out (each byte of an edit or a
/// suggested command becomes a space, line breaks stay), so the next
/// format's spans still point into the reply.
fn masked(text: &str, output: &ParseOutput) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for range in read_ranges(text, output) {
        blank(&mut bytes[range]);
    }
    String::from_utf8(bytes).expect("whole characters became ASCII spaces")
}

/// Each byte but line breaks becomes a space.
fn blank(bytes: &mut [u8]) {
    bytes.iter_mut().filter(|byte| **byte != b'\n').for_each(|byte| *byte = b' ');
}

/// What `marker_lines(&masked(text, output))` gives, without the masked
/// copy: only the lines a format left some of are searched, of those only
/// the ones that may hold a marker are read, and of those only the ones a
/// span touches are masked, one at a time.
fn markers_left(text: &str, output: &ParseOutput) -> Vec<u32> {
    let read = read_ranges(text, output);
    // The line count up to the last marker line found, from its start.
    let (mut counted_to, mut line_index) = (0, 0);
    let mut lines = Vec::new();
    let unread = unread_lines(text, &read);
    let candidates = unread.iter().flat_map(|gap| {
        marker_candidates(&text[gap.clone()]).into_iter().map(move |(start, piece)| (gap.start + start, piece))
    });
    for (start, piece) in candidates {
        let end = start + piece.len();
        let after = read.partition_point(|range| range.end <= start);
        let mut touching = read[after..].iter().take_while(|range| range.start < end).peekable();
        let marker = match touching.peek() {
            None => edit_marker(line_of(piece)),
            // Blanked whole (most lines of a reply a format read): no marker.
            Some(range) if range.start <= start && range.end >= start + line_of(piece).len() => None,
            Some(_) => {
                let mut bytes = piece.as_bytes().to_vec();
                for range in touching {
                    blank(&mut bytes[range.start.max(start) - start..range.end.min(end) - start]);
                }
                edit_marker(line_of(std::str::from_utf8(&bytes).expect("whole characters became ASCII spaces")))
            }
        };
        if marker.is_some() {
            line_index += newline_count(&text[counted_to..start]);
            counted_to = start;
            lines.push(line_index as u32 + 1);
        }
    }
    lines
}

/// The lines of `text` that `read` (sorted, merged ranges) does not cover
/// whole where the bytes it leaves may hold a marker ([`may_hold_marker`]),
/// as ranges of whole lines, in order and apart. A gap's line is found by
/// searching back only to the gap before it, and forward only past it.
fn unread_lines(text: &str, read: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut gaps: Vec<Range<usize>> = Vec::new();
    let mut from = 0;
    for range in read.iter().chain(std::iter::once(&(text.len()..text.len()))) {
        // Unread bytes with no byte of a marker core leave their line
        // none once the rest is blanked: a JSON reply's line endings
        // between the calls a format read, which made every line a gap.
        if range.start > from && may_hold_marker(&bytes[from..range.start]) {
            // A line that a position before this end is in, the gap before holds.
            let last_end = gaps.last().map_or(0, |gap| gap.end);
            let start = if from < last_end {
                last_end
            } else {
                memchr::memrchr(b'\n', &bytes[last_end..from]).map_or(last_end, |i| last_end + i + 1)
            };
            let end = if range.start - 1 < last_end {
                last_end
            } else {
                memchr::memchr(b'\n', &bytes[range.start - 1..]).map_or(bytes.len(), |i| range.start + i)
            };
            match gaps.last_mut() {
                Some(gap) if start <= gap.end => gap.end = gap.end.max(end),
                _ => gaps.push(start..end),
            }
        }
        from = range.end;
    }
    gaps
}

/// The byte ranges of `text` that `output` read, sorted and merged (spans
/// may overlap: a suggested command inside an edit), widened to whole
/// characters (a plugin's span may cut one).
fn read_ranges(text: &str, output: &ParseOutput) -> Vec<Range<usize>> {
    let spans = output.edits.iter().map(|e| e.span).chain(output.commands.iter().map(|c| c.span));
    let mut ranges: Vec<Range<usize>> = spans
        .map(|span| {
            let end = text.ceil_char_boundary(span.end as usize);
            text.floor_char_boundary((span.start as usize).min(end))..end
        })
        .filter(|range| !range.is_empty())
        .collect();
    ranges.sort_by_key(|range| range.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// A piece of `split_inclusive('\n')` as `str::lines` gives it.
fn line_of(piece: &str) -> &str {
    match piece.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => piece,
    }
}

/// The lines of `text` (1-based) that hold an edit marker.
fn marker_lines(text: &str) -> Vec<u32> {
    let lines = text.lines().enumerate();
    lines.filter(|(_, line)| edit_marker(line).is_some()).map(|(index, _)| index as u32 + 1).collect()
}

/// The error for edit markers no format read (`lines` of `rest`): which
/// reply lines, and why it matters.
fn unread(rest: &str, lines: &[u32], chosen: &str) -> Option<Diagnostic> {
    let (first, last) = (*lines.first()?, *lines.last()?);
    let listed: Vec<String> = lines.iter().map(u32::to_string).collect();
    let span: Span = SourceMap::new(rest).lines_span(first, last);
    Some(
        Diagnostic::error(
            format!(
                "reply lines {} hold edit markers that no format could read; applying the rest would drop those edits",
                listed.join(", ")
            ),
            Some(span),
        )
        .with_hint(format!("send every edit in one format ({chosen}), each block complete")),
    )
}

/// Apply each part's `allowed` edits (indexes into `edits`) with its own
/// format, each part on the files as the parts before it left them. The
/// changes are one per path; the outcomes are by edit index.
pub fn apply(
    parts: &mut [Part],
    snapshots: &[File],
    edits: &[Edit],
    allowed: &[usize],
) -> Result<(Vec<Change>, Vec<Option<Outcome>>), Error> {
    let mut outcomes: Option<Vec<Option<Outcome>>> = None;
    let mut changes: Vec<Change> = Vec::new();
    let mut current: Option<Vec<File>> = None;
    let count = parts.len();
    for (number, part) in parts.iter_mut().enumerate() {
        let mine: Vec<usize> = allowed.iter().copied().filter(|i| part.edits.contains(i)).collect();
        if mine.is_empty() {
            continue;
        }
        // Passed by reference: a large reply's edits are not copied.
        let given: Vec<&Edit> = mine.iter().map(|&i| &edits[i]).collect();
        // Their indexes in the output of the part's parse.
        let kept: Vec<u32> = mine.iter().map(|&i| (i - part.edits.start) as u32).collect();
        let files = current.as_deref().unwrap_or(snapshots);
        let output = match apply_by_file(part, files, &given, &kept)? {
            Some(output) => output,
            None => part
                .instance
                .apply_parsed(files, &given, part.parse.map(|parse| (parse, &kept[..])), &part.options)?
                .map_err(|message| Error::FormatRefused { format: part.name.clone(), message })?,
        };
        let in_order =
            |o: &[Outcome]| o.len() == edits.len() && o.iter().enumerate().all(|(i, o)| o.edit as usize == i);
        if outcomes.is_none() && mine.len() == edits.len() && in_order(&output.outcomes) {
            // One format read every edit: its outcomes are the list, in place
            // (a reply of thousands of edits does not hold them twice).
            outcomes = Some(output.outcomes.into_iter().map(Some).collect());
        } else {
            let outcomes = outcomes.get_or_insert_with(|| vec![None; edits.len()]);
            for outcome in output.outcomes {
                if let Some(&index) = mine.get(outcome.edit as usize) {
                    outcomes[index].get_or_insert(Outcome { edit: index as u32, ..outcome });
                }
            }
        }
        if number + 1 < count {
            current = Some(advanced(files, &output.changes));
        }
        for change in output.changes {
            fold(&mut changes, change);
        }
    }
    Ok((changes, outcomes.unwrap_or_else(|| vec![None; edits.len()])))
}

/// The `indexes` of `edits` by the path each names, paths in the order
/// the edits first name them.
pub fn by_path<E: Borrow<Edit>>(edits: &[E], indexes: impl IntoIterator<Item = usize>) -> Vec<(&str, Vec<usize>)> {
    agent_apply_sdk::indexes_by_path(indexes.into_iter().map(|index| (index, edits[index].borrow().path.as_str())))
}

/// `edits` on files this large (in all) are first tried one file at a time.
const BY_FILE_FROM_BYTES: usize = 4 << 20;

/// `edits` applied one file at a time, when the files are large and each
/// edit names one file: the component then holds one file and its new
/// contents at a time, not all of them at once (its memory never shrinks;
/// a 10 MB reply's run peaked with every file in it twice). `None` when
/// that does not apply, or when it might not give what one call gives: an
/// edit failed (a format may retry it on another file), a change is not of
/// the edit's own file, or the format refused. The caller then applies them
/// all in one call, so the outcome is always that call's. Calls stop once
/// half the plugin's time limit is spent, so a run takes at most two and a
/// half limits where one call took one.
fn apply_by_file(part: &mut Part, files: &[File], edits: &[&Edit], kept: &[u32]) -> Result<Option<ApplyOutput>, Error> {
    let size: usize = files.iter().map(|f| f.content.len()).sum();
    if size < BY_FILE_FROM_BYTES || edits.iter().any(|e| !e.related_paths.is_empty()) {
        return Ok(None);
    }
    let by_path = by_path(edits, 0..edits.len());
    if by_path.len() < 2 {
        return Ok(None);
    }
    let mut output = ApplyOutput { changes: Vec::new(), outcomes: Vec::with_capacity(edits.len()) };
    let (started, budget) = (Instant::now(), part.instance.timeout().map(|limit| limit / 2));
    for (path, mine) in by_path {
        if budget.is_some_and(|budget| started.elapsed() > budget) {
            return Ok(None);
        }
        let file = files.iter().find(|f| f.path == path).map(std::slice::from_ref).unwrap_or_default();
        let subset: Vec<&Edit> = mine.iter().map(|&i| edits[i]).collect();
        let subset_kept: Vec<u32> = mine.iter().map(|&i| kept[i]).collect();
        let parsed = part.parse.map(|parse| (parse, &subset_kept[..]));
        let Ok(applied) = part.instance.apply_parsed(file, &subset, parsed, &part.options)? else { return Ok(None) };
        let own = |change: &Change| matches!(change, Change::Write(_) | Change::Delete(_)) && change.path() == path;
        if applied.outcomes.iter().any(|o| o.status == EditStatus::Failed) || !applied.changes.iter().all(own) {
            return Ok(None);
        }
        let outcomes = applied
            .outcomes
            .into_iter()
            .filter_map(|o| Some(Outcome { edit: *mine.get(o.edit as usize)? as u32, ..o }));
        output.outcomes.extend(outcomes);
        output.changes.extend(applied.changes);
    }
    Ok(Some(output))
}

/// The files after `changes`.
fn advanced(files: &[File], changes: &[Change]) -> Vec<File> {
    let mut files = files.to_vec();
    for change in changes {
        let (gone, written) = match change {
            Change::Write(file) => (file.path.as_str(), Some(file.clone())),
            Change::Delete(path) => (path.as_str(), None),
            Change::Rename(r) => (r.from.as_str(), Some(File::new(r.to.clone(), r.content.clone()))),
        };
        files.retain(|f| f.path != gone && written.as_ref().is_none_or(|w| w.path != f.path));
        files.extend(written);
    }
    files
}

/// Add `change` to `changes`, keeping one change per path: a later write of
/// a path a rename produced stays that rename, with the new contents.
fn fold(changes: &mut Vec<Change>, change: Change) {
    let Some(earlier) = changes.iter_mut().find(|c| c.path() == change.path()) else {
        changes.push(change);
        return;
    };
    *earlier = match (std::mem::replace(earlier, Change::Delete(String::new())), change) {
        (Change::Rename(mut r), Change::Write(file)) => {
            r.content = file.content;
            Change::Rename(r)
        }
        (_, later) => later,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_apply_sdk::types::Renamed;

    #[test]
    fn a_later_write_keeps_the_earlier_rename() {
        let mut changes = Vec::new();
        fold(&mut changes, Change::Rename(Renamed { from: "a".into(), to: "b".into(), content: "1".into() }));
        fold(&mut changes, Change::Write(File::new("b", "2")));
        fold(&mut changes, Change::Write(File::new("c", "3")));
        assert_eq!(changes.len(), 2);
        assert!(matches!(&changes[0], Change::Rename(r) if r.from == "a" && r.content == "2"));
        let after = advanced(&[File::new("a", "1")], &changes);
        assert_eq!(after, vec![File::new("b", "2"), File::new("c", "3")]);
    }

    fn read_at(spans: &[(u32, u32)]) -> ParseOutput {
        let edit = |&(start, end): &(u32, u32)| Edit {
            path: "a".into(),
            related_paths: Vec::new(),
            span: Span { start, end, first_line: 1, last_line: 1 },
            summary: String::new(),
            payload: String::new(),
        };
        ParseOutput { edits: spans.iter().map(edit).collect(), diagnostics: Vec::new(), commands: Vec::new() }
    }

    proptest::proptest! {
        #[test]
        fn markers_left_are_the_masked_copys_markers(
            lines in proptest::collection::vec(
                proptest::sample::select(vec![
                    "<<<<<<< SEARCH\n", "=======\n", ">>>>>>> REPLACE\r\n", "--- a/x\n", "x <<<<<<< SEARCH\n",
                    "é@@ -1 +1 @@\n", "  *** Begin Patch\n", "code é\n", "\n", "\r\n", "+++ b/y",
                ]),
                0..12,
            ),
            spans in proptest::collection::vec((0u32..120, 0u32..40), 0..5),
        ) {
            let text: String = lines.concat();
            let spans: Vec<(u32, u32)> = spans.iter().map(|&(start, len)| (start, start + len)).collect();
            let output = read_at(&spans);
            proptest::prop_assert_eq!(markers_left(&text, &output), marker_lines(&masked(&text, &output)));
        }
    }

    #[test]
    fn a_span_that_cuts_a_character_masks_all_of_it() {
        let output = read_at(&[(1, 2)]);
        assert_eq!(masked("é<<<<<<< SEARCH\n", &output), "  <<<<<<< SEARCH\n");
        assert_eq!(markers_left("é<<<<<<< SEARCH\n", &output), vec![1]);
    }

    #[test]
    fn masking_keeps_offsets_and_lines() {
        let reply = "é\n<<<<<<< SEARCH\nx\n";
        let span = SourceMap::new(reply).lines_span(2, 2);
        let output = ParseOutput {
            edits: vec![Edit {
                path: "a".into(),
                related_paths: Vec::new(),
                span,
                summary: String::new(),
                payload: String::new(),
            }],
            diagnostics: Vec::new(),
            commands: Vec::new(),
        };
        let rest = masked(reply, &output);
        assert_eq!(rest.len(), reply.len());
        assert_eq!(rest.lines().nth(1).unwrap().trim(), "");
        assert_eq!(marker_lines(&rest), Vec::<u32>::new());
        assert!(unread(&rest, &marker_lines(&rest), "editblock").is_none());
        assert_eq!(marker_lines(reply), vec![2]);
        assert!(unread(reply, &marker_lines(reply), "editblock").unwrap().message.contains("reply lines 2 "));
    }
}
