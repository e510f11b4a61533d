//! The conformance corpus of whole replies, `tests/corpus/replies/<case>/`:
//! what the binary does with a reply as a harness sends it, format choice and
//! all (mixed formats, snippets, a wrong `--format`, a retry). Each case is
//! `input/` (committed first), `reply.md`, optional `args` (one argument a
//! line) and `expected/` (the committed files that change) or
//! `expected-error` (text the JSON report must hold; nothing may change).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::corpus::read_tree;
use crate::repo::TestRepo;

/// The directory under `tests/corpus/` that holds these cases.
pub const DIR: &str = "replies";

fn run_case(case: &Path) -> Result<(), String> {
    let input = read_tree(&case.join("input"));
    let files: Vec<(&str, &str)> =
        input.iter().map(|(p, c)| (p.as_str(), std::str::from_utf8(c).expect("text input"))).collect();
    let repo = TestRepo::with(&files);
    let before = repo.state();
    let reply = std::fs::read_to_string(case.join("reply.md")).map_err(|e| format!("reply.md: {e}"))?;
    let args = std::fs::read_to_string(case.join("args")).unwrap_or_default();
    let out =
        repo.apply().args(args.lines().filter(|l| !l.trim().is_empty())).arg("--json").write_stdin(reply).output();
    let out = out.map_err(|e| e.to_string())?;
    let report: Value = crate::common::report_json(&out.stdout);
    let code = out.status.code().unwrap_or(-1);
    if let Ok(wanted) = std::fs::read_to_string(case.join("expected-error")) {
        let text = report.to_string();
        if code == 0 || !text.contains(wanted.trim()) {
            return Err(format!("expected a failure holding {:?}, got exit {code}: {report:#}", wanted.trim()));
        }
        return if repo.state() == before { Ok(()) } else { Err("a refused reply changed the repository".into()) };
    }
    if code != 0 {
        return Err(format!("exit {code}: {report:#}"));
    }
    let expected = read_tree(&case.join("expected"));
    for (path, bytes) in input.iter().filter(|(p, _)| !expected.contains_key(*p)).chain(&expected) {
        let committed = repo.committed(path).map(String::into_bytes);
        if committed.as_ref() != Some(bytes) {
            return Err(format!("{path}: expected {:?}, committed {committed:?}", String::from_utf8_lossy(bytes)));
        }
    }
    Ok(())
}

#[test]
fn whole_replies_through_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(DIR);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 8, "only {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| run_case(case).err().map(|why| format!("{}: {why}", case.file_name().unwrap().display())))
        .collect();
    assert!(failures.is_empty(), "{} of {} reply cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
