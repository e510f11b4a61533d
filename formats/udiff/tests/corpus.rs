//! The conformance corpus (`tests/corpus/udiff/<case>/`), run natively
//! through the plugin contract.
//!
//! A case holds `input/` (files before), `reply.md`, an optional `candidates`
//! file (extra candidate paths, one per line, as `--files` passes them), and
//! either `expected/` (files after, byte for byte; files not listed are
//! unchanged) or `expected-error` (a substring of the failure; nothing may
//! change). All or nothing: one failing edit fails the case.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use agent_apply_format_udiff::UnifiedDiff;
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/udiff")
}

fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                let content = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(rel, content);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Run one case: `Ok(files after)` or `Err(failure text)`.
fn run(
    input: &BTreeMap<String, String>,
    reply: &str,
    candidates: &[String],
    options: &[OptionValue],
) -> Result<BTreeMap<String, String>, String> {
    let parsed = Plugin::parse(&UnifiedDiff, reply, options);
    let errors: Vec<String> = parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("malformed: {}{}", d.message, d.hint.as_deref().map(|h| format!("\n{h}")).unwrap_or_default()))
        .collect();
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    if parsed.edits.is_empty() {
        return Err("no edits found in the reply".into());
    }
    let mut wanted: Vec<&String> = Vec::new();
    for path in parsed.edits.iter().flat_map(|e| std::iter::once(&e.path).chain(&e.related_paths)).chain(candidates) {
        if !wanted.contains(&path) {
            wanted.push(path);
        }
    }
    let files = wanted.iter().filter_map(|p| input.get(*p).map(|c| File::new(p.as_str(), c.as_str()))).collect();
    let out = Plugin::apply(&UnifiedDiff, files, &parsed.edits, options)?;
    let failures: Vec<String> = out
        .outcomes
        .iter()
        .filter(|o| o.status == EditStatus::Failed)
        .map(|o| {
            let kind = o.kind.map(|k| k.as_str()).unwrap_or("failed");
            format!("{kind}: {}{}", o.message, o.hint.as_deref().map(|h| format!("\n{h}")).unwrap_or_default())
        })
        .collect();
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    let mut after = input.clone();
    for change in out.changes {
        match change {
            Change::Write(file) => {
                after.insert(file.path, file.content);
            }
            Change::Delete(path) => {
                after.remove(&path);
            }
            Change::Rename(renamed) => {
                after.remove(&renamed.from);
                after.insert(renamed.to, renamed.content);
            }
        }
    }
    Ok(after)
}

fn check_case(dir: &Path) -> Result<(), String> {
    let input = read_tree(&dir.join("input"));
    let reply = fs::read_to_string(dir.join("reply.md")).map_err(|e| format!("reply.md: {e}"))?;
    let candidates: Vec<String> = fs::read_to_string(dir.join("candidates"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let options: Vec<OptionValue> = fs::read_to_string(dir.join("options"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| OptionValue { key: k.trim().into(), value: v.trim().into() })
        .collect();
    let result = run(&input, &reply, &candidates, &options);
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    match &result {
        Ok(_) => println!("{name}: applied"),
        Err(failure) => println!("{name}: failed: {}", failure.lines().next().unwrap_or("")),
    }
    let expected_error = fs::read_to_string(dir.join("expected-error")).ok();
    match (result, expected_error) {
        (Err(failure), Some(want)) => {
            let want = want.trim();
            if failure.contains(want) { Ok(()) } else { Err(format!("failed, but without {want:?}:\n{failure}")) }
        }
        (Ok(_), Some(want)) => Err(format!("applied, but it must fail with {:?}", want.trim())),
        (Err(failure), None) => Err(format!("failed:\n{failure}")),
        (Ok(after), None) => {
            let expected = read_tree(&dir.join("expected"));
            if !dir.join("expected").is_dir() {
                return Err("the case has neither expected/ nor expected-error".into());
            }
            let mut problems = Vec::new();
            for (path, want) in &expected {
                match after.get(path) {
                    Some(got) if got == want => {}
                    Some(got) => problems.push(format!("{path} differs:\n--- want\n{want:?}\n--- got\n{got:?}")),
                    None => problems.push(format!("{path} is missing")),
                }
            }
            for (path, got) in &after {
                if !expected.contains_key(path) && input.get(path) != Some(got) {
                    problems.push(format!("{path} changed but is not in expected/: {got:?}"));
                }
            }
            if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
        }
    }
}

#[test]
fn corpus() {
    let mut cases: Vec<PathBuf> =
        fs::read_dir(corpus_dir()).expect("corpus dir").map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    assert!(cases.len() >= 20, "the corpus has only {} cases", cases.len());
    let mut failed = Vec::new();
    for case in &cases {
        if let Err(problem) = check_case(case) {
            failed.push(format!("== {}\n{problem}", case.file_name().unwrap().to_string_lossy()));
        }
    }
    println!("corpus: {}/{} cases pass", cases.len() - failed.len(), cases.len());
    assert!(failed.is_empty(), "{} of {} cases failed:\n{}", failed.len(), cases.len(), failed.join("\n"));
}
