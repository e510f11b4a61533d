//! Third-party plugins: the example `ops-json` loaded from `.agent-apply.toml`,
//! the refusals (sha256 pin, contract version, missing file, a trap), and
//! the `plugin new` / `plugin check` tooling.

use std::path::Path;
use std::process::Command;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{HOSTILE_WASM, OPS_JSON_WASM, bin, sha256_hex};
use crate::repo::TestRepo;

/// A component implementing `agent-apply:format@9.0.0`.
const FUTURE_CONTRACT_WASM: &str = agent_apply_test_artifacts::FUTURE_CONTRACT_PLUGIN_WASM;

fn sha256_of(path: &str) -> String {
    sha256_hex(&std::fs::read(path).unwrap())
}

fn config_for(name: &str, wasm: &str, pin: Option<&str>) -> String {
    let pin = pin.map(|p| format!("sha256 = {p:?}\n")).unwrap_or_default();
    format!("[plugins.{name}]\npath = {wasm:?}\n{pin}")
}

const MULTI_FILE_REPLY: &str = r#"Two files change, and one is new:

```json
[
  {"targetFile": "src/greet.py",
   "operation": {"type": "replace", "search": "def greet():\n    print(\"Hello!\")\n", "replace": "def greet(name):\n    print(f\"Hello, {name}!\")\n"},
   "explanation": "greet takes a name"},
  {"targetFile": "src/main.py",
   "operation": {"type": "insert_after", "anchor": "import greet", "content": "import sys"},
   "explanation": "sys for argv"},
  {"targetFile": "src/main.py",
   "operation": {"type": "replace", "search": "greet.greet()", "replace": "greet.greet(sys.argv[1])"},
   "explanation": "pass the name"},
  {"targetFile": "CHANGES.md",
   "operation": {"type": "append", "content": "- greet takes a name\n"},
   "explanation": "changelog"}
]
```
"#;

#[test]
fn ops_json_from_config_applies_a_multi_file_reply_chosen_by_detection() {
    let config = config_for("ops-json", OPS_JSON_WASM, Some(&sha256_of(OPS_JSON_WASM)));
    let repo = TestRepo::with(&[
        (".agent-apply.toml", config.as_str()),
        ("src/greet.py", "def greet():\n    print(\"Hello!\")\n"),
        ("src/main.py", "import greet\n\ngreet.greet()\n"),
    ]);
    let before = repo.head();
    let out = repo.apply().args(["--json", "-"]).write_stdin(MULTI_FILE_REPLY).assert().success();
    let value: Value = crate::common::report_json(&out.get_output().stdout);
    assert_eq!(value["format"]["name"], "ops-json", "{value:#}");
    assert_eq!(value["format"]["by"], "auto");
    assert_eq!(value["edits"].as_array().unwrap().len(), 4);
    assert_ne!(repo.head(), before);
    assert_eq!(repo.committed("src/greet.py").unwrap(), "def greet(name):\n    print(f\"Hello, {name}!\")\n");
    assert_eq!(repo.committed("src/main.py").unwrap(), "import greet\nimport sys\n\ngreet.greet(sys.argv[1])\n");
    assert_eq!(repo.committed("CHANGES.md").unwrap(), "- greet takes a name\n");
    assert_eq!(repo.status(), "");

    let formats = repo.apply().args(["formats", "--json"]).assert().success();
    let value: Value = crate::common::report_json(&formats.get_output().stdout);
    let ops = value["formats"].as_array().unwrap().iter().find(|f| f["name"] == "ops-json").expect("listed");
    assert_eq!(ops["source"], "config");
    assert_eq!(ops["path"], OPS_JSON_WASM);
    assert_eq!(ops["kind"], "wasm");
}

#[test]
fn ops_json_failures_change_nothing_and_say_why() {
    let config = config_for("ops-json", OPS_JSON_WASM, None);
    let repo = TestRepo::with(&[(".agent-apply.toml", config.as_str()), ("a.py", "x = 0\nx = 0\n")]);
    let before = repo.state();
    let reply =
        "```json\n[{\"targetFile\": \"a.py\", \"operation\": {\"type\": \"delete\", \"search\": \"x = 0\"}}]\n```\n";
    repo.apply()
        .args(["--format", "ops-json", "-"])
        .write_stdin(reply)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ambiguous").and(predicate::str::contains("at lines 1, 2")));
    let stale = "```json\n[{\"targetFile\": \"a.py\", \"baseVersion\": \"deadbeefdeadbeef\", \"operation\": {\"type\": \"append\", \"content\": \"y\"}}]\n```\n";
    repo.apply()
        .args(["-"])
        .write_stdin(stale)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("stale").and(predicate::str::contains("a.py has changed since")));
    let malformed = "Here:\n```json\n[{\"targetFile\": \"a.py\" \"operation\": {}}]\n```\n";
    repo.apply()
        .args(["-"])
        .write_stdin(malformed)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("malformed JSON at reply line 3"));
    assert_eq!(repo.state(), before);
}

#[test]
fn a_sha256_pin_mismatch_refuses_to_load_and_names_the_fix() {
    let wrong = "0".repeat(64);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), config_for("ops-json", OPS_JSON_WASM, Some(&wrong))).unwrap();
    let actual = sha256_of(OPS_JSON_WASM);
    bin().current_dir(dir.path()).args(["prompt", "ops-json"]).assert().code(2).stderr(
        predicate::str::contains(format!("plugin 'ops-json': sha256 mismatch for {OPS_JSON_WASM}: config pins {wrong}, the file has {actual}; refusing to load it"))
            .and(predicate::str::contains(format!("hint: if you trust the new file, set sha256 = \"{actual}\" under [plugins.ops-json]"))),
    );
}

#[test]
fn an_incompatible_contract_version_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), config_for("future", FUTURE_CONTRACT_WASM, None)).unwrap();
    bin().current_dir(dir.path()).args(["prompt", "future"]).assert().code(2).stderr(
        predicate::str::contains(
            "plugin 'future' implements contract agent-apply:format@9.0.0, but this host supports agent-apply:format@0.1.0",
        )
        .and(predicate::str::contains("hint: rebuild the plugin against the agent-apply-sdk")),
    );
}

#[test]
fn a_file_that_is_not_a_component_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fake.wasm"), "not wasm at all").unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), config_for("fake", "fake.wasm", None)).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["prompt", "fake"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("plugin 'fake' could not be loaded"));
}

#[test]
fn a_missing_plugin_file_names_the_plugin_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), config_for("gone", "build/gone.wasm", None)).unwrap();
    bin().current_dir(dir.path()).args(["prompt", "gone"]).assert().code(2).stderr(
        predicate::str::contains("plugin 'gone': cannot read")
            .and(predicate::str::contains("build/gone.wasm"))
            .and(predicate::str::contains("fix `path` under [plugins.gone]")),
    );
}

#[test]
fn a_plugin_that_traps_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".agent-apply.toml"), config_for("hostile", HOSTILE_WASM, None)).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["parse", "--format", "hostile", "-"])
        .write_stdin("panic")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("plugin 'hostile' crashed in `parse`")
                .and(predicate::str::contains("hint: this is a bug in the plugin")),
        );
}

#[test]
fn plugin_check_passes_on_the_example_and_fails_on_broken_plugins() {
    bin().args(["plugin", "check", OPS_JSON_WASM]).assert().success().stdout(
        predicate::str::contains("ok    exports the agent-apply:format@0.1.0 contract")
            .and(predicate::str::contains("ok    apply applies the example to the example files"))
            .and(predicate::str::contains(
                "ok    apply-kept applies the kept example edits as apply does: agent-apply:format@0.2.0",
            ))
            .and(predicate::str::contains("checks passed")),
    );
    bin()
        .args(["plugin", "check", HOSTILE_WASM])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("FAIL  info: instructions: is empty"))
        .stderr(predicate::str::contains("failed 2 of 6 checks"));
    bin()
        .args(["plugin", "check", FUTURE_CONTRACT_WASM])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("implements contract agent-apply:format@9.0.0"));
    bin()
        .args(["plugin", "check", "/nonexistent/x.wasm"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the plugin /nonexistent/x.wasm"));
}

#[test]
fn plugin_new_output_builds_and_its_tests_pass() {
    let dir = tempfile::tempdir().unwrap();
    let crate_dir = dir.path().join("my-format");
    // Outside any checkout: the SDK is the one the binary was built from.
    bin()
        .current_dir(dir.path())
        .args(["plugin", "new", "my-format", "--path"])
        .arg(&crate_dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("created the `my-format` format plugin"));
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins-sdk").canonicalize().unwrap();
    assert!(
        manifest.contains(&format!("agent-apply-sdk = {{ path = {:?} }}", sdk.display().to_string())),
        "{manifest}"
    );
    assert!(crate_dir.join("Cargo.lock").is_file(), "the checkout's versions are pinned, for an offline build");
    // A target dir for scaffolds only, kept between runs so the SDK compiles once.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scaffold-target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&crate_dir)
        .args(["test", "--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo test failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("3 passed"), "{stdout}");
    // The format itself is short: at most 40 lines of code before its tests.
    let lib = std::fs::read_to_string(crate_dir.join("src/lib.rs")).unwrap();
    let code = lib.split("#[cfg(test)]").next().unwrap().lines();
    let code_lines = code.filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//")).count();
    assert!(code_lines <= 40, "the scaffold's format is {code_lines} lines of code");
    // It is already formatted as `cargo fmt` would, with the style it ships.
    let fmt = Command::new("cargo").current_dir(&crate_dir).args(["fmt", "--check"]).output().unwrap();
    assert!(fmt.status.success(), "{}", String::from_utf8_lossy(&fmt.stdout));
    // And it builds as a wasm component that `plugin check` accepts.
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&crate_dir)
        .args(["build", "--offline", "--quiet", "--release", "--target", "wasm32-wasip2"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "wasm build failed:\n{}", String::from_utf8_lossy(&out.stderr));
    bin().args(["plugin", "check"]).arg(target.join("wasm32-wasip2/release/my_format.wasm")).assert().success();

    // A second scaffold into a non-empty directory is refused.
    bin()
        .args(["plugin", "new", "my-format", "--path"])
        .arg(&crate_dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists and is not empty"));
    // An SDK named with --sdk-path is used as given.
    let elsewhere = dir.path().join("with-sdk");
    bin().args(["plugin", "new", "my-format", "--path"]).arg(&elsewhere).arg("--sdk-path").arg(&sdk).assert().success();
    assert!(std::fs::read_to_string(elsewhere.join("Cargo.toml")).unwrap().contains(&sdk.display().to_string()));
    bin()
        .args(["plugin", "new", "Bad_Name"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a valid format name"));
}
