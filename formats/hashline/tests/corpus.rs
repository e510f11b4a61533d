//! The hashline conformance corpus (`tests/corpus/hashline/<case>/`), run
//! natively through the plugin contract.
//!
//! A case holds `input/`, `reply.md`, optional `candidates` and `options`
//! (`key=value` lines), and `expected/` (files after, byte for byte) or
//! `expected-error` (a substring of a failure message; nothing may change).
//! Hashline cases may also hold `expected-hint`: lines that must each appear
//! in the failures' hints (the fresh view of a stale anchor, say). The host
//! runs the same cases through the wasm component and ignores that file.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use agent_apply_format_hashline::Hashline;
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

type Tree = BTreeMap<String, String>;

fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let name = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(name, fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

fn listed(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// What a case did: the files after, or the failure messages and hints.
enum Ran {
    Applied(Tree),
    Failed { messages: Vec<String>, hints: Vec<String> },
}

fn run(input: &Tree, reply: &str, candidates: &[String], options: &[OptionValue]) -> Ran {
    let parsed = Plugin::parse(&Hashline, reply, options);
    let errors: Vec<&Diagnostic> = parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    if !errors.is_empty() || parsed.edits.is_empty() {
        let mut messages: Vec<String> = errors.iter().map(|d| d.message.clone()).collect();
        if messages.is_empty() {
            messages.push("no edits found in the reply".into());
        }
        return Ran::Failed { messages, hints: errors.iter().filter_map(|d| d.hint.clone()).collect() };
    }
    let mut paths: Vec<&String> = parsed.edits.iter().map(|e| &e.path).collect();
    paths.extend(candidates);
    paths.dedup();
    let files =
        input.iter().filter(|(p, _)| paths.contains(p)).map(|(p, c)| File::new(p.as_str(), c.as_str())).collect();
    let out = Plugin::apply(&Hashline, files, &parsed.edits, options).expect("apply");
    let bad: Vec<&Outcome> = out.outcomes.iter().filter(|o| o.status == EditStatus::Failed).collect();
    if !bad.is_empty() {
        return Ran::Failed {
            messages: bad.iter().map(|o| o.message.clone()).collect(),
            hints: bad.iter().filter_map(|o| o.hint.clone()).collect(),
        };
    }
    let mut after = input.clone();
    for change in out.changes {
        match change {
            Change::Write(f) => {
                after.insert(f.path, f.content);
            }
            Change::Delete(p) => {
                after.remove(&p);
            }
            Change::Rename(r) => {
                after.remove(&r.from);
                after.insert(r.to, r.content);
            }
        }
    }
    Ran::Applied(after)
}

fn check(case: &Path) -> Result<(), String> {
    let input = tree(&case.join("input"));
    let reply = fs::read_to_string(case.join("reply.md")).map_err(|e| format!("reply.md: {e}"))?;
    let options: Vec<OptionValue> = listed(&case.join("options"))
        .iter()
        .filter_map(|l| l.split_once('=').map(|(k, v)| OptionValue { key: k.trim().into(), value: v.trim().into() }))
        .collect();
    let ran = run(&input, &reply, &listed(&case.join("candidates")), &options);
    let want_error = fs::read_to_string(case.join("expected-error")).ok().map(|s| s.trim().to_string());
    match (ran, want_error) {
        (Ran::Failed { messages, hints }, Some(want)) => {
            if !messages.iter().any(|m| m.contains(&want)) {
                return Err(format!("failed, but no message holds {want:?}: {messages:#?}"));
            }
            let hint_text = hints.join("\n");
            for line in listed(&case.join("expected-hint")) {
                if !hint_text.contains(&line) {
                    return Err(format!("the hints lack {line:?}:\n{hint_text}"));
                }
            }
            Ok(())
        }
        (Ran::Failed { messages, .. }, None) => Err(format!("failed: {messages:#?}")),
        (Ran::Applied(_), Some(want)) => Err(format!("applied, but it must fail with {want:?}")),
        (Ran::Applied(after), None) => {
            if !case.join("expected").is_dir() {
                return Err("the case has neither expected/ nor expected-error".into());
            }
            let expected = tree(&case.join("expected"));
            let mut problems = Vec::new();
            for (path, got) in &after {
                match expected.get(path).or_else(|| input.get(path)) {
                    Some(want) if want == got => {}
                    Some(want) => problems.push(format!("{path}:\n--- want\n{want:?}\n--- got\n{got:?}")),
                    None => problems.push(format!("{path} was written but is not in expected/")),
                }
            }
            problems.extend(expected.keys().filter(|p| !after.contains_key(*p)).map(|p| format!("{p} is missing")));
            if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
        }
    }
}

#[test]
fn corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/hashline");
    let mut cases: Vec<PathBuf> =
        fs::read_dir(&root).expect("corpus dir").map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    cases.sort();
    assert!(cases.len() >= 14, "the corpus has only {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check(case).err().map(|why| format!("== {}\n{why}", case.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    println!("hashline corpus: {}/{} cases pass", cases.len() - failures.len(), cases.len());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
