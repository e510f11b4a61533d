//! Shared helpers: runtimes with private caches, the built-in and test plugins.

use std::path::Path;
use std::time::Duration;

use agent_apply::config::{Config, PluginConfig};
use agent_apply::registry::Registry;
use agent_apply::runtime::{ComponentCache, Limits, LoadedPlugin, Runtime};
use sha2::{Digest, Sha256};

/// The test-only hostile component, built by host/build.rs.
pub const HOSTILE_WASM: &str = env!("AGENT_APPLY_TEST_PLUGIN_HOSTILE_PLUGIN");
/// The example third-party `ops-json` plugin, built as a component by host/build.rs.
pub const OPS_JSON_WASM: &str = env!("AGENT_APPLY_TEST_PLUGIN_OPS_JSON");

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

/// The hostile plugin under tight limits.
pub fn hostile(cache_dir: &Path, limits: Limits) -> LoadedPlugin {
    let wasm = std::fs::read(HOSTILE_WASM).unwrap();
    let digest: String = Sha256::digest(&wasm).iter().map(|b| format!("{b:02x}")).collect();
    Runtime::new(ComponentCache::at(cache_dir), limits).unwrap().load("hostile", &wasm, &digest).unwrap()
}

pub fn tight_limits() -> Limits {
    Limits { timeout: Duration::from_millis(300), memory_bytes: 64 << 20 }
}

/// The built binary.
pub fn bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_git-agent-apply"));
    cmd.env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml")
        .env("AGENT_APPLY_CACHE_DIR", shared_cache());
    cmd
}
