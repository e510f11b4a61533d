use std::path::Path;

use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

use super::{OpsJson, content_hash};

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/ops-json");
    agent_apply_sdk::testing::run_corpus(&OpsJson, &dir).assert_passed(12);
}

#[test]
fn detects_operation_lists_and_nothing_else() {
    let ops = "```json\n[{\"targetFile\": \"a\", \"operation\": {\"type\": \"append\", \"content\": \"x\"}}]\n```\n";
    assert!(Plugin::detect(&OpsJson, ops) > 0.9);
    let broken = "```json\n[{\"targetFile\": \"a\", \"operation\": {\"type\": \"append\",}}]\n```\n";
    assert!((0.5..0.9).contains(&Plugin::detect(&OpsJson, broken)));
    let package_json = "package.json\n```json\n{\"name\": \"x\", \"version\": \"1.0.0\"}\n```\n";
    assert_eq!(Plugin::detect(&OpsJson, package_json), 0.0);
    assert_eq!(Plugin::detect(&OpsJson, "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"), 0.0);
}

#[test]
fn malformed_json_names_the_reply_line_and_column() {
    let reply = "Intro\n\n```json\n[\n  {\"targetFile\": \"a\"\n   \"operation\": {}}\n]\n```\n";
    let out = Plugin::parse(&OpsJson, reply, &[]);
    assert!(out.edits.is_empty());
    let message = &out.diagnostics[0].message;
    assert!(message.starts_with("malformed JSON at reply line 6, column 4: expected `,` or `}`"), "{message}");
    assert_eq!(out.diagnostics[0].span.unwrap().first_line, 6);
}

#[test]
fn each_edit_spans_its_own_operation_and_summarises_it() {
    let reply = "```json\n[\n {\"targetFile\": \"a\", \"operation\": {\"type\": \"delete\", \"search\": \"x\"}},\n {\"targetFile\": \"b\", \"operation\": {\"type\": \"append\", \"content\": \"y\\nz\\n\"}, \"explanation\": \"more\"}\n]\n```\n";
    let out = Plugin::parse(&OpsJson, reply, &[]);
    assert_eq!(out.edits.len(), 2);
    assert_eq!((out.edits[0].span.first_line, out.edits[1].span.first_line), (3, 4));
    assert_eq!(out.edits[1].summary, "append 2 lines: more");
}

#[test]
fn base_version_is_the_sha256_of_the_file_before_the_reply() {
    assert_eq!(content_hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    let hash = content_hash("a\n");
    let reply = format!(
        "[{{\"targetFile\": \"f\", \"baseVersion\": \"{hash}\", \"operation\": {{\"type\": \"append\", \"content\": \"b\\n\"}}}},\n \
         {{\"targetFile\": \"f\", \"baseVersion\": \"{hash}\", \"operation\": {{\"type\": \"append\", \"content\": \"c\\n\"}}}}]"
    );
    let parsed = Plugin::parse(&OpsJson, &reply, &[]);
    let out = Plugin::apply(&OpsJson, vec![File::new("f", "a\n")], parsed.edits, &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied), "{:?}", out.outcomes);
    assert_eq!(out.changes, vec![Change::Write(File::new("f", "a\nb\nc\n"))]);
}

#[test]
fn short_or_non_hex_base_versions_are_malformed() {
    let reply = "[{\"targetFile\": \"f\", \"baseVersion\": \"abc\", \"operation\": {\"type\": \"append\", \"content\": \"b\"}}]";
    let out = Plugin::parse(&OpsJson, reply, &[]);
    assert!(out.diagnostics[0].message.contains("unusable baseVersion \"abc\""), "{:?}", out.diagnostics);
}

#[test]
fn the_example_reply_applies_to_the_example_files() {
    let info = Plugin::info(&OpsJson);
    let parsed = Plugin::parse(&OpsJson, &info.example_reply, &[]);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let out = Plugin::apply(&OpsJson, info.example_files, parsed.edits, &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.status == EditStatus::Applied), "{:?}", out.outcomes);
}
