//! Trusted native plugins: the same format crate built as a native library
//! (`native = true`) gives what its wasm component gives, and the boundary
//! holds (ABI version, panics, a wasm file or a library in the wrong place).

use std::path::{Path, PathBuf};

use agent_apply::runtime::{NativePlugin, PluginInstance};
use agent_apply::transaction::planned_paths;
use agent_apply_sdk::types::File;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{OPS_JSON_WASM, bin, registry_with_examples, shared_cache};
use crate::repo::TestRepo;

pub const OPS_JSON_NATIVE: &str = agent_apply_test_artifacts::OPS_JSON_NATIVE;
const HOSTILE_NATIVE: &str = agent_apply_test_artifacts::HOSTILE_PLUGIN_NATIVE;
const WRONG_ABI_NATIVE: &str = agent_apply_test_artifacts::WRONG_ABI_PLUGIN_NATIVE;

fn native_config(name: &str, path: &str) -> String {
    format!("[plugins.{name}]\npath = {path:?}\nnative = true\n")
}

#[test]
fn wasm_and_native_builds_of_ops_json_give_identical_results_on_its_corpus() {
    let registry = registry_with_examples(&shared_cache());
    let mut wasm = registry.instantiate(registry.find("ops-json").unwrap()).unwrap();
    let mut native = PluginInstance::Native(NativePlugin::load("ops-json", Path::new(OPS_JSON_NATIVE)).unwrap());
    assert_eq!(wasm.info().unwrap(), native.info().unwrap());

    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/ops-json");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
    cases.sort();
    assert!(cases.len() >= 12, "only {} cases", cases.len());
    for case in cases {
        let reply = std::fs::read_to_string(case.join("reply.md")).unwrap();
        let input = crate::corpus::read_tree(&case.join("input"));
        assert_eq!(wasm.detect(&reply).unwrap(), native.detect(&reply).unwrap(), "{}", case.display());
        let parsed = wasm.parse(&reply, &[]).unwrap();
        assert_eq!(parsed, native.parse(&reply, &[]).unwrap(), "{}", case.display());
        let paths = planned_paths(&parsed.edits, &[]);
        let files: Vec<File> = input
            .iter()
            .filter(|(p, _)| paths.contains(p))
            .map(|(p, c)| File::new(p.clone(), String::from_utf8(c.clone()).unwrap()))
            .collect();
        let from_wasm = wasm.apply(&files, &parsed.edits, &[]).unwrap();
        assert_eq!(from_wasm, native.apply(&files, &parsed.edits, &[]).unwrap(), "{}", case.display());
        for file in &files {
            assert_eq!(wasm.render(file, &[], &[]).unwrap(), native.render(file, &[], &[]).unwrap());
            assert_eq!(wasm.lint(file).unwrap(), native.lint(file).unwrap());
        }
    }
}

#[test]
fn a_native_plugin_from_config_applies_a_reply_and_is_listed_as_native() {
    let config = native_config("ops-json", OPS_JSON_NATIVE);
    let repo = TestRepo::with(&[(".agent-apply.toml", config.as_str()), ("a.py", "x = 1\n")]);
    let reply = "```json\n[{\"targetFile\": \"a.py\", \"operation\": {\"type\": \"replace\", \"search\": \"x = 1\", \"replace\": \"x = 2\"}}]\n```\n";
    repo.apply().arg("-").write_stdin(reply).assert().success();
    assert_eq!(repo.committed("a.py").unwrap(), "x = 2\n");
    let out = repo.apply().args(["formats", "--json"]).assert().success();
    let value: Value = crate::common::report_json(&out.get_output().stdout);
    let ops = value["formats"].as_array().unwrap().iter().find(|f| f["name"] == "ops-json").unwrap();
    assert_eq!(ops["kind"], "native");
}

#[test]
fn a_native_abi_version_mismatch_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), native_config("future", WRONG_ABI_NATIVE)).unwrap();
    bin().current_dir(dir.path()).args(["prompt", "future"]).assert().code(2).stderr(
        predicate::str::contains(
            "native plugin 'future' was built for native ABI version 999 (table of 8 bytes), but this host supports version 1",
        )
        .and(predicate::str::contains("hint: rebuild the native plugin")),
    );
}

#[test]
fn a_native_panic_is_caught_at_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), native_config("hostile", HOSTILE_NATIVE)).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["parse", "--format", "hostile", "-"])
        .write_stdin("panic")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "plugin 'hostile' crashed in `parse`: it panicked: hostile plugin panics in parse on purpose",
        ));
}

#[test]
fn native_needs_a_library_and_a_library_needs_native() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), native_config("ops-json", OPS_JSON_WASM)).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["prompt", "ops-json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("plugin 'ops-json' could not be loaded: cannot load the native library"));
    let config = format!("[plugins.ops-json]\npath = {OPS_JSON_NATIVE:?}\n");
    std::fs::write(dir.path().join(".agent-apply.toml"), config).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["prompt", "ops-json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("plugin 'ops-json' could not be loaded"));
}

#[test]
fn plugin_check_native_passes_on_the_example() {
    bin()
        .args(["plugin", "check", "--native", OPS_JSON_NATIVE])
        .assert()
        .success()
        .stdout(predicate::str::contains("checking the native library").and(predicate::str::contains("checks passed")));
}

/// With the C library linked into the binary (host/build/link.rs), a native
/// plugin runs in a helper process: a crash there fails the call, it does
/// not take the run down with it, and the repository is left as it was.
#[cfg(native_host)]
#[test]
fn a_native_plugin_that_crashes_ends_its_helper_not_the_run() {
    let config = native_config("hostile", HOSTILE_NATIVE);
    let repo = TestRepo::with(&[(".agent-apply.toml", config.as_str()), ("a.txt", "x\n")]);
    let head = repo.head();
    repo.apply().args(["--format", "hostile", "-"]).write_stdin("abort").assert().code(2).stderr(
        predicate::str::contains("plugin 'hostile' crashed in `parse`: the native plugin's process ended (signal: 6"),
    );
    assert_eq!(repo.head(), head);
    assert_eq!(repo.status(), "");
}

/// The helper's stdout is its answer to the host; what the plugin prints
/// there goes to stderr instead, so it can neither garble an answer nor
/// pass for the tool's own output.
#[cfg(native_host)]
#[test]
fn what_a_native_plugin_prints_to_stdout_goes_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), native_config("hostile", HOSTILE_NATIVE)).unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["parse", "--json", "--format", "hostile", "-"])
        .write_stdin("shout")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stderr.contains("hostile plugin shouts on stdout"), "stderr: {stderr}");
    assert!(!stdout.contains("shouts"), "stdout: {stdout}");
    let report = crate::common::report_json(&out.stdout);
    assert_eq!(report["edits"], serde_json::json!([]), "{report}");
}

/// Where the build could, the binary carries the C library (a static PIE):
/// no program interpreter, so no dynamic loader runs at each start (0.36 ms
/// a run, #27).
#[cfg(native_host)]
#[test]
fn the_binary_starts_without_a_dynamic_loader() {
    const PT_INTERP: u32 = 3;
    let elf = std::fs::read(crate::common::binary_path()).unwrap();
    let number = |at: usize, width: usize| {
        elf[at..at + width].iter().rev().fold(0usize, |value, &byte| value << 8 | byte as usize)
    };
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let (table, entry_size, entries) = (number(0x20, 8), number(0x36, 2), number(0x38, 2));
    let types: Vec<u32> = (0..entries).map(|i| number(table + i * entry_size, 4) as u32).collect();
    assert!(!types.contains(&PT_INTERP), "program header types {types:?}");
}
