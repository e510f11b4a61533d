//! The conformance corpus, run through the real wasm components (built-ins,
//! and the example plugins loaded from config):
//! `tests/corpus/<format>/<case>/{input/, reply.*, expected/ | expected-error}`,
//! compared byte for byte. Optional per case: `candidates` (extra candidate
//! paths, one per line) and `options` (`key=value` lines). `tests/corpus/replies/`
//! holds cases of whole replies (several formats, none) run by `replies.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_apply::transaction::planned_paths;
use agent_apply_sdk::types::{Change, EditStatus, File, OptionValue, Severity};

use crate::common::{registry_with_examples, shared_cache};

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

/// Every file under `dir`, by its `/`-separated path relative to `dir`.
pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                files.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

pub fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|s| s.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

/// The case's one `reply.*` file.
pub fn reply_file(case: &Path) -> Result<PathBuf, String> {
    std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("reply."))
        .ok_or_else(|| "no reply.* file".to_string())
}

/// Run one case; `Err` describes the mismatch.
fn run_case(registry: &agent_apply::registry::Registry, format: &str, case: &Path) -> Result<(), String> {
    let reply_path = reply_file(case)?;
    let reply = std::fs::read_to_string(reply_path).unwrap();
    let input = read_tree(&case.join("input"));
    let options: Vec<OptionValue> = lines_of(&case.join("options"))
        .into_iter()
        .filter_map(|l| l.split_once('=').map(|(k, v)| OptionValue { key: k.trim().into(), value: v.trim().into() }))
        .collect();
    let entry = registry.find(format).unwrap().clone();
    let mut plugin = registry.instantiate(&entry).unwrap();
    let parsed = plugin.parse(&reply, &options).map_err(|e| e.to_string())?;

    let paths = planned_paths(&parsed.edits, &lines_of(&case.join("candidates")));
    let files: Vec<File> = paths
        .iter()
        .filter_map(|p| input.get(p).map(|bytes| File::new(p.clone(), String::from_utf8(bytes.clone()).unwrap())))
        .collect();
    let output =
        plugin.apply(&files, &parsed.edits, &options).map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;

    let mut failures: Vec<String> =
        parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect();
    failures.extend(output.outcomes.iter().filter(|o| o.status == EditStatus::Failed).map(|o| o.message.clone()));

    let expected_error = case.join("expected-error");
    if expected_error.exists() {
        let wanted = std::fs::read_to_string(expected_error).unwrap().trim().to_string();
        return match failures.iter().find(|f| f.contains(&wanted)) {
            Some(_) => Ok(()),
            None => Err(format!("expected a failure containing {wanted:?}, got {failures:?}")),
        };
    }
    if !failures.is_empty() {
        return Err(format!("unexpected failures: {failures:?}"));
    }
    let mut after = input.clone();
    for change in output.changes {
        match change {
            Change::Write(file) => {
                after.insert(file.path, file.content.into_bytes());
            }
            Change::Delete(path) => {
                after.remove(&path);
            }
            Change::Rename(r) => {
                after.remove(&r.from);
                after.insert(r.to, r.content.into_bytes());
            }
        }
    }
    let expected = read_tree(&case.join("expected"));
    for (path, bytes) in &after {
        let want = expected.get(path).or_else(|| input.get(path).filter(|_| !expected.contains_key(path)));
        match want {
            Some(want) if want == bytes => {}
            Some(want) => {
                return Err(format!(
                    "{path} differs:\n--- expected\n{:?}\n--- got\n{:?}",
                    String::from_utf8_lossy(want),
                    String::from_utf8_lossy(bytes)
                ));
            }
            None => return Err(format!("{path} was written but is not in expected/")),
        }
    }
    for path in expected.keys() {
        if !after.contains_key(path) {
            return Err(format!("{path} is in expected/ but was not produced"));
        }
    }
    Ok(())
}

#[test]
fn conformance_corpus_through_wasm() {
    // Built-ins plus the example plugins, loaded from config as a user would.
    let registry = registry_with_examples(&shared_cache());
    let mut failures = Vec::new();
    let mut count = 0;
    let mut formats: Vec<PathBuf> =
        std::fs::read_dir(corpus_root()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    formats.sort();
    for format_dir in formats {
        let format = format_dir.file_name().unwrap().to_string_lossy().to_string();
        // Whole-reply cases, run through the binary by `replies.rs`.
        if format == crate::replies::DIR {
            continue;
        }
        if registry.find(&format).is_err() {
            panic!("tests/corpus/{format} has no built-in or example format of that name");
        }
        let mut cases: Vec<PathBuf> =
            std::fs::read_dir(&format_dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        cases.sort();
        for case in cases {
            count += 1;
            if let Err(why) = run_case(&registry, &format, &case) {
                failures.push(format!("{format}/{}: {why}", case.file_name().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(count > 0, "the corpus is empty");
    assert!(failures.is_empty(), "{} of {count} corpus cases failed:\n{}", failures.len(), failures.join("\n"));
}
