//! The conformance corpus (`tests/corpus/compact/<case>/`), run natively
//! through the plugin contract, the way the host's end-to-end test runs it
//! through the wasm component.
//!
//! A case holds `input/` (files before), `reply.md`, optional `options`
//! (`key=value` lines, passed as format options) and `candidates` (extra
//! paths to hand to `apply`), and either `expected/` (files after, byte for
//! byte; files not listed are unchanged) or `expected-error` (a substring of
//! a failure message; nothing may change).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use agent_apply_format_compact::Compact;
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/compact")
}

fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = fs::read_dir(&current) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
            }
        }
    }
    out
}

fn lines_of(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .map(|s| s.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

/// Run one case: `Ok(files after)` or `Err(failure messages)`.
fn run(dir: &Path, input: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, Vec<String>> {
    let reply = fs::read_to_string(dir.join("reply.md")).expect("reply.md");
    let options: Vec<OptionValue> = lines_of(&dir.join("options"))
        .into_iter()
        .filter_map(|l| l.split_once('=').map(|(k, v)| OptionValue { key: k.trim().into(), value: v.trim().into() }))
        .collect();
    let parsed = Plugin::parse(&Compact, &reply, &options);
    let mut failures: Vec<String> =
        parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect();
    let mut wanted: Vec<String> = Vec::new();
    for path in parsed.edits.iter().map(|e| &e.path).cloned().chain(lines_of(&dir.join("candidates"))) {
        if !wanted.contains(&path) {
            wanted.push(path);
        }
    }
    let files = wanted.iter().filter_map(|p| input.get(p).map(|c| File::new(p.as_str(), c.as_str()))).collect();
    let out = Plugin::apply(&Compact, files, &parsed.edits, &options).map_err(|e| vec![e])?;
    failures.extend(out.outcomes.iter().filter(|o| o.status == EditStatus::Failed).map(|o| o.message.clone()));
    if parsed.edits.is_empty() && failures.is_empty() {
        failures.push("no edits found in the reply".into());
    }
    if !failures.is_empty() {
        return Err(failures);
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
    let result = run(dir, &input);
    match (result, fs::read_to_string(dir.join("expected-error")).ok()) {
        (Err(failures), Some(want)) => {
            let want = want.trim();
            if failures.iter().any(|f| f.contains(want)) {
                Ok(())
            } else {
                Err(format!("failed, but no message holds {want:?}:\n{}", failures.join("\n")))
            }
        }
        (Ok(_), Some(want)) => Err(format!("applied, but it must fail with {:?}", want.trim())),
        (Err(failures), None) => Err(format!("failed:\n{}", failures.join("\n"))),
        (Ok(after), None) => {
            if !dir.join("expected").is_dir() {
                return Err("the case has neither expected/ nor expected-error".into());
            }
            let expected = read_tree(&dir.join("expected"));
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
