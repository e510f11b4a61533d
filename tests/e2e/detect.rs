//! The detection corpus: `tests/detect/<case>.md` replies and the format
//! `--format auto` must choose for each, listed in `tests/detect/expected.toml`
//! (`none`: no format may recognise the reply, e.g. a snippet under a path).
//! A case may come with the files its reply names (`<case>.files/`): it is
//! then read beside them, as in a repository, where a snippet of an existing
//! file shows as such. The example `ops-json` plugin is configured, so it
//! competes as a user's plugin would.

use std::path::Path;

use serde_json::Value;

use crate::common::{bin, examples_config_file};

fn corpus_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/detect"))
}

#[test]
fn auto_detection_chooses_the_expected_format_for_every_corpus_reply() {
    let dir = corpus_dir();
    let expected: toml::Table = std::fs::read_to_string(dir.join("expected.toml")).unwrap().parse().unwrap();
    let known: toml::Table = expected.get("known-failures").and_then(|v| v.as_table()).cloned().unwrap_or_default();
    let mut cases: Vec<(String, String)> =
        expected.iter().filter_map(|(case, format)| format.as_str().map(|f| (case.clone(), f.to_string()))).collect();
    cases.sort();
    // Every reply file is listed, and every listed case has a file.
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".md")).map(str::to_string))
        .collect();
    files.sort();
    assert_eq!(files, cases.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(), "expected.toml and the files differ");
    let formats: std::collections::BTreeSet<&str> = cases.iter().map(|(_, f)| f.as_str()).collect();
    assert_eq!(
        formats.into_iter().collect::<Vec<_>>(),
        ["apply-patch", "compact", "editblock", "hashline", "none", "ops-json", "tool-calls", "udiff", "whole"]
    );
    assert!(cases.len() >= 40, "only {} cases", cases.len());

    let outside = tempfile::tempdir().unwrap();
    // The example plugin competes with the built-ins, as a configured plugin would.
    let user_config = examples_config_file(outside.path());
    let mut failures = Vec::new();
    let mut right = 0;
    for (case, format) in &cases {
        let beside = dir.join(format!("{case}.files"));
        let files = beside.is_dir().then(|| {
            let here = tempfile::tempdir().unwrap();
            for (path, bytes) in crate::corpus::read_tree(&beside) {
                let full = here.path().join(path);
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(full, bytes).unwrap();
            }
            here
        });
        let out = bin()
            .current_dir(files.as_ref().map_or(outside.path(), |f| f.path()))
            .env("AGENT_APPLY_CONFIG", &user_config)
            .args(["parse", "--format", "auto", "--json"])
            .arg(dir.join(format!("{case}.md")))
            .output()
            .unwrap();
        let value = crate::common::report_json(&out.stdout);
        let chosen = value["format"]["name"].as_str().map(str::to_string);
        let confidence = value["format"]["confidence"].as_f64().unwrap_or(0.0);
        if format == "none" && confidence < 0.05 && value["edits"].as_array().is_some_and(|e| e.is_empty()) {
            right += 1;
        } else if chosen.as_deref() == Some(format.as_str()) {
            assert_eq!(value["format"]["by"], "auto", "{case}");
            let confidence = value["format"]["confidence"].as_f64().unwrap_or_else(|| panic!("{case}: no confidence"));
            assert!(confidence > 0.0 && confidence <= 1.0, "{case}: confidence {confidence}");
            right += 1;
        } else {
            let got = chosen.unwrap_or_else(|| format!("error: {}", value["error"]["message"]));
            failures.push(format!("{case}: expected {format}, got {got}"));
        }
    }
    println!("detection accuracy: {right}/{} ({:.1}%)", cases.len(), 100.0 * right as f64 / cases.len() as f64);
    for failure in &failures {
        println!("  {failure}");
    }
    let unexpected: Vec<&String> =
        failures.iter().filter(|f| !known.contains_key(f.split(':').next().unwrap())).collect();
    assert!(unexpected.is_empty(), "misdetected: {unexpected:#?}");
}

#[test]
fn parse_auto_json_reports_the_chosen_format_and_confidence() {
    let out = bin()
        .args(["parse", "--format", "auto", "--json", "-"])
        .write_stdin("a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n")
        .assert()
        .success();
    let value: Value = crate::common::report_json(&out.get_output().stdout);
    assert_eq!(value["format"]["name"], "editblock");
    assert_eq!(value["format"]["by"], "auto");
    assert!(value["format"]["confidence"].as_f64().unwrap() >= 0.5);
}

#[test]
fn model_table_picks_apply_patch_for_the_openai_families_trained_on_it() {
    let reply = "*** Begin Patch\n*** Delete File: a.py\n*** End Patch\n";
    for model in ["gpt-5-codex", "gpt-4.1-mini", "o3", "o4-mini", "codex-mini-latest", "openai/gpt-5"] {
        let out = bin().args(["parse", "--model", model, "--json", "-"]).write_stdin(reply).output().unwrap();
        let value = crate::common::report_json(&out.stdout);
        assert_eq!(value["format"]["name"], "apply-patch", "{model}: {value}");
        assert_eq!(value["format"]["by"], "model", "{model}");
    }
}

#[test]
fn model_table_picks_editblock_for_claude_and_config_models_override_it() {
    use crate::repo::TestRepo;
    let reply = "a.py\n```python\nx = 2\n```\n";
    let plain = TestRepo::with(&[("a.py", "x = 1\n")]);
    let out = plain
        .apply()
        .args(["parse", "--model", "claude-3-5-sonnet", "--json", "-"])
        .write_stdin(reply)
        .output()
        .unwrap();
    let value = crate::common::report_json(&out.stdout);
    assert_eq!(value["format"]["name"], "editblock", "{value}");
    assert_eq!(value["format"]["by"], "model");
    assert_eq!(value["format"]["pattern"], "claude-*");
    // Provider prefixes are ignored.
    let out = plain
        .apply()
        .args(["parse", "--model", "anthropic/claude-3-5-sonnet", "--json", "-"])
        .write_stdin(reply)
        .output()
        .unwrap();
    assert_eq!(crate::common::report_json(&out.stdout)["format"]["name"], "editblock");

    let configured =
        TestRepo::with(&[("a.py", "x = 1\n"), (".agent-apply.toml", "[models]\n\"claude-3-5*\" = \"whole\"\n")]);
    let out = configured
        .apply()
        .args(["parse", "--model", "claude-3-5-sonnet", "--json", "-"])
        .write_stdin(reply)
        .assert()
        .success();
    let value: Value = crate::common::report_json(&out.get_output().stdout);
    assert_eq!(value["format"]["name"], "whole", "{value}");
    assert_eq!(value["format"]["pattern"], "claude-3-5*");
    // Other Claude models still get the built-in entry, and `formats --json` shows both.
    let out = configured
        .apply()
        .args(["parse", "--model", "claude-opus-4", "--json", "-"])
        .write_stdin(reply)
        .output()
        .unwrap();
    assert_eq!(crate::common::report_json(&out.stdout)["format"]["name"], "editblock");
    let out = configured.apply().args(["formats", "--json"]).assert().success();
    let models = crate::common::report_json(&out.get_output().stdout)["models"].clone();
    let models = models.as_array().unwrap();
    assert_eq!(models[0]["pattern"], "claude-3-5*");
    assert_eq!(models[0]["source"], "config");
    assert!(
        models.iter().any(|m| m["pattern"] == "claude-*" && m["source"] == "builtin" && m["formats"][0] == "editblock")
    );
}
