//! Shared helpers: runtimes with private caches, the built-in and test plugins.

use std::path::Path;
use std::time::Duration;

use agent_apply::config::{Config, PluginConfig};
use agent_apply::registry::Registry;
use agent_apply::runtime::{ComponentCache, Limits, LoadedPlugin, PluginError, Runtime};
use agent_apply_sdk::types as sdk;
use sha2::{Digest, Sha256};

/// The test-only hostile component, built by tests/artifacts.
pub const HOSTILE_WASM: &str = agent_apply_test_artifacts::HOSTILE_PLUGIN_WASM;
/// The example third-party `ops-json` plugin, built as a component by tests/artifacts.
pub const OPS_JSON_WASM: &str = agent_apply_test_artifacts::OPS_JSON_WASM;

/// A component cache shared by the tests that do not test the cache itself,
/// so each component compiles once per test run.
pub fn shared_cache() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// A registry of the built-in formats with a cache in `cache_dir`.
pub fn registry(cache_dir: &Path) -> Registry {
    let runtime = Runtime::new(ComponentCache::at(cache_dir), Limits::default()).unwrap();
    Registry::new(runtime, &Config::default()).unwrap()
}

/// The config that adds the example plugins (`ops-json`) as a user would.
pub fn examples_config() -> Config {
    let plugin =
        PluginConfig { path: OPS_JSON_WASM.into(), sha256: None, native: false, shadow: false, aliases: Vec::new() };
    Config { plugins: [("ops-json".to_string(), plugin)].into(), ..Config::default() }
}

/// The same, as a user config file in `dir` (for `AGENT_APPLY_CONFIG`).
pub fn examples_config_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("user-config.toml");
    std::fs::write(&path, format!("[plugins.ops-json]\npath = {OPS_JSON_WASM:?}\n")).unwrap();
    path
}

/// A registry of the built-in formats and the example plugins.
pub fn registry_with_examples(cache_dir: &Path) -> Registry {
    let runtime = Runtime::new(ComponentCache::at(cache_dir), Limits::default()).unwrap();
    Registry::new(runtime, &examples_config()).unwrap()
}

/// A component built against a contract version the host does not speak.
pub const OLD_CONTRACT_WASM: &str = agent_apply_test_artifacts::OLD_CONTRACT_PLUGIN_WASM;

/// The hostile plugin under `limits`.
pub fn hostile(cache_dir: &Path, limits: Limits) -> LoadedPlugin {
    load_test_plugin(HOSTILE_WASM, "hostile", cache_dir, limits).unwrap()
}

/// Load the component at `wasm_path` as plugin `name`.
pub fn load_test_plugin(
    wasm_path: &str,
    name: &str,
    cache_dir: &Path,
    limits: Limits,
) -> Result<LoadedPlugin, PluginError> {
    let wasm = std::fs::read(wasm_path).unwrap();
    let digest = sha256_hex(&wasm);
    Runtime::new(ComponentCache::at(cache_dir), limits).unwrap().load(name, &wasm, &digest)
}

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

pub fn tight_limits() -> Limits {
    Limits { timeout: Duration::from_millis(300), memory_bytes: 64 << 20 }
}

/// The built binary.
pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::from_std(bin_process())
}

/// The binary under test: the one cargo built, or `AGENT_APPLY_TEST_BIN`,
/// another build (the musl one in CI; an older release, to show that a test
/// fails without its fix).
pub fn binary_path() -> std::path::PathBuf {
    std::env::var_os("AGENT_APPLY_TEST_BIN").map_or_else(|| env!("CARGO_BIN_EXE_git-agent-apply").into(), Into::into)
}

/// The built binary as a plain process, for tests that spawn, race or kill it.
pub fn bin_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(binary_path());
    cmd.env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml")
        .env("AGENT_APPLY_CACHE_DIR", shared_cache());
    cmd
}

/// A wasm component instance behind the SDK's `Plugin` trait, so the SDK's
/// fuzz drivers run through the real component. A trap or any other plugin
/// error is a panic naming it.
pub struct Component(pub std::cell::RefCell<agent_apply::runtime::PluginInstance>);

impl Component {
    /// A fresh instance of the built-in format `name`.
    pub fn builtin(registry: &Registry, name: &str) -> Component {
        let entry = registry.find(name).unwrap().clone();
        Component(std::cell::RefCell::new(registry.instantiate(&entry).unwrap()))
    }
}

impl agent_apply_sdk::Plugin for Component {
    fn info(&self) -> sdk::FormatInfo {
        self.0.borrow_mut().info().unwrap_or_else(|e| panic!("{e}"))
    }
    fn detect(&self, reply: &str) -> f32 {
        self.0.borrow_mut().detect(reply).unwrap_or_else(|e| panic!("{e}"))
    }
    fn parse(&self, reply: &str, options: &[sdk::OptionValue]) -> sdk::ParseOutput {
        self.0.borrow_mut().parse(reply, options).unwrap_or_else(|e| panic!("{e}"))
    }
    fn apply(
        &self,
        files: Vec<sdk::File>,
        edits: Vec<sdk::Edit>,
        options: &[sdk::OptionValue],
    ) -> Result<sdk::ApplyOutput, String> {
        self.0.borrow_mut().apply(&files, &edits, options).unwrap_or_else(|e| panic!("{e}"))
    }
    fn render(
        &self,
        file: &sdk::File,
        ranges: &[sdk::LineRange],
        options: &[sdk::OptionValue],
    ) -> Result<String, String> {
        self.0.borrow_mut().render(file, ranges, options).unwrap_or_else(|e| panic!("{e}"))
    }
    fn lint(&self, file: &sdk::File) -> Vec<sdk::Diagnostic> {
        self.0.borrow_mut().lint(file).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The checked-in report schema, `schema/report.v1.json`.
pub fn report_schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/report.v1.json")
}

/// What a `--json` command printed, parsed and validated against the
/// checked-in schema: every test that reads JSON output checks the schema
/// too.
pub fn report_json(output: &[u8]) -> serde_json::Value {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(report_schema_path()).unwrap()).unwrap();
        jsonschema::validator_for(&schema).expect("the checked-in schema is a valid JSON Schema")
    });
    let value: serde_json::Value = serde_json::from_slice(output)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(output)));
    let errors: Vec<String> =
        validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "the report does not match schema/report.v1.json:\n{}\n{value:#}", errors.join("\n"));
    value
}
