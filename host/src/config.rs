//! `.agent-apply.toml` at the repo root, then the user's config: default
//! format, model table, plugin limits, extra plugins and format options.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_apply_sdk::types::OptionValue;
use serde::Deserialize;

use crate::limits::InputLimits;
use crate::runtime::Limits;

/// The repo's config file name.
pub const REPO_CONFIG: &str = ".agent-apply.toml";

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid config {}: {message}", path.display())]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

/// One config file's contents. Every field is optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// The format to use when `--format` is not given.
    pub format: Option<String>,
    /// Model-name patterns (`my-model-*`) to format names, checked before the
    /// built-in table.
    #[serde(default)]
    pub models: BTreeMap<String, String>,
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Extra format plugins, by the name `--format` will know them by.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginConfig>,
    /// What to do with uncommitted changes in edited files.
    pub dirty: Option<crate::transaction::DirtyPolicy>,
    /// Commit message template: `{format}`, `{files}` (comma-separated) and
    /// `{summary}` (the default first line) are replaced.
    pub commit_message: Option<String>,
    /// Commands run in the sandbox before every commit.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Options per format: `[options.udiff] strict = true`.
    #[serde(default)]
    pub options: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// More paths (globs) a reply may never change, beside the built-in ones.
    #[serde(default)]
    pub protected: Vec<String>,
    /// Protected paths (globs) a reply may change after all.
    #[serde(default)]
    pub allow_protected: Vec<String>,
    /// The repository root the config was loaded for (not a config key):
    /// formats get it as the `repo-root` option.
    #[serde(skip)]
    pub repo_root: Option<PathBuf>,
}

/// Plugin resource limits and input limits (see [`InputLimits`] for what
/// each input limit guards).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LimitsConfig {
    pub plugin_timeout_ms: Option<u64>,
    pub plugin_memory_mib: Option<u64>,
    pub max_reply_bytes: Option<u64>,
    pub max_edits: Option<usize>,
    pub max_line_bytes: Option<usize>,
    pub max_file_bytes: Option<u64>,
}

impl LimitsConfig {
    /// These limits, with each one `over` sets replacing ours.
    fn merge(&mut self, over: LimitsConfig) {
        self.plugin_timeout_ms = over.plugin_timeout_ms.or(self.plugin_timeout_ms);
        self.plugin_memory_mib = over.plugin_memory_mib.or(self.plugin_memory_mib);
        self.max_reply_bytes = over.max_reply_bytes.or(self.max_reply_bytes);
        self.max_edits = over.max_edits.or(self.max_edits);
        self.max_line_bytes = over.max_line_bytes.or(self.max_line_bytes);
        self.max_file_bytes = over.max_file_bytes.or(self.max_file_bytes);
    }
}

/// A plugin listed in config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PluginConfig {
    /// The `.wasm` component, relative to the config file.
    pub path: PathBuf,
    /// Refuse to load unless the file's sha256 is this (hex).
    pub sha256: Option<String>,
    /// A trusted native library instead of a wasm component.
    #[serde(default)]
    pub native: bool,
    /// Allow this plugin to replace a built-in format of the same name.
    #[serde(default)]
    pub shadow: bool,
    /// More names `--format` accepts for it.
    #[serde(default)]
    pub aliases: Vec<String>,
}

impl Config {
    /// Read one config file. Plugin paths become absolute, relative to the file.
    pub fn read(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError { path: path.to_path_buf(), message: e.to_string() })?;
        Config::from_toml(&text, path)
    }

    /// A config file's `text`, as if read from `path`.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut config: Config =
            toml::from_str(text).map_err(|e| ConfigError { path: path.to_path_buf(), message: e.to_string() })?;
        let base = path.parent().unwrap_or(Path::new("."));
        for plugin in config.plugins.values_mut() {
            plugin.path = base.join(&plugin.path);
        }
        Ok(config)
    }

    /// The user config, then the repo's on top of it (the repo's values win).
    pub fn load(repo_root: Option<&Path>) -> Result<Config, ConfigError> {
        let user = std::env::var_os("AGENT_APPLY_CONFIG")
            .map(PathBuf::from)
            .or_else(|| dirs::config_dir().map(|d| d.join("agent-apply").join("config.toml")));
        let mut config = Config { repo_root: repo_root.map(Path::to_path_buf), ..Config::default() };
        for path in [user, repo_root.map(|r| r.join(REPO_CONFIG))].into_iter().flatten() {
            if path.is_file() {
                config.merge(Config::read(&path)?);
            }
        }
        Ok(config)
    }

    fn merge(&mut self, over: Config) {
        if over.format.is_some() {
            self.format = over.format;
        }
        self.models.extend(over.models);
        if over.dirty.is_some() {
            self.dirty = over.dirty;
        }
        self.checks.extend(over.checks);
        self.protected.extend(over.protected);
        self.allow_protected.extend(over.allow_protected);
        if over.commit_message.is_some() {
            self.commit_message = over.commit_message;
        }
        self.limits.merge(over.limits);
        self.plugins.extend(over.plugins);
        for (format, options) in over.options {
            self.options.entry(format).or_default().extend(options);
        }
    }

    /// Plugin limits, defaults filled in.
    pub fn limits(&self) -> Limits {
        let default = Limits::default();
        Limits {
            timeout: self.limits.plugin_timeout_ms.map_or(default.timeout, Duration::from_millis),
            memory_bytes: self
                .limits
                .plugin_memory_mib
                .map_or(default.memory_bytes, |mib| usize::try_from(mib).unwrap_or(usize::MAX).saturating_mul(1 << 20)),
        }
    }

    /// Input limits, defaults filled in.
    pub fn input_limits(&self) -> InputLimits {
        let default = InputLimits::default();
        let limits = &self.limits;
        InputLimits {
            reply_bytes: limits.max_reply_bytes.unwrap_or(default.reply_bytes),
            edits: limits.max_edits.unwrap_or(default.edits),
            line_bytes: limits.max_line_bytes.unwrap_or(default.line_bytes),
            file_bytes: limits.max_file_bytes.unwrap_or(default.file_bytes),
        }
    }

    /// The options passed to `format`'s plugin: the repository's absolute
    /// path as `repo-root` (agents' tool calls name files by absolute paths;
    /// a plugin has no file system to find the repository itself), this
    /// config's `[options.FORMAT]`, then `file` (the `--file` flag).
    pub fn plugin_options(&self, format: &str, file: Option<&str>) -> Vec<OptionValue> {
        let option = |key: &str, value: String| OptionValue { key: key.into(), value };
        let root = self.repo_root.as_deref().map(|root| option("repo-root", root.display().to_string()));
        let configured = self.options.get(format).into_iter().flatten().map(|(key, value)| {
            let value = match value {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            option(key, value)
        });
        root.into_iter().chain(configured).chain(file.map(|file| option("file", file.into()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_errors_with_a_location() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REPO_CONFIG);
        std::fs::write(&path, "format = \"whole\"\nfromat = 1\n").unwrap();
        let error = Config::read(&path).unwrap_err().to_string();
        assert!(error.contains("unknown field `fromat`"), "{error}");
        assert!(error.contains("line 2"), "{error}");
    }

    /// The config fuzz target's regression corpus: every input loads or is
    /// an error, and limits never overflow.
    #[test]
    fn fuzz_regressions_load_or_fail_cleanly() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/config");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            if let Ok(config) = Config::from_toml(&text, &path) {
                config.limits();
                config.input_limits();
            }
        }
        let huge = Config::from_toml("[limits]\nplugin-memory-mib = 9223372036854775807\n", Path::new("x")).unwrap();
        assert_eq!(huge.limits().memory_bytes, usize::MAX, "a huge limit saturates instead of wrapping");
    }

    #[test]
    fn plugin_paths_are_relative_to_the_file_and_limits_apply() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REPO_CONFIG);
        std::fs::write(
            &path,
            "[limits]\nplugin-timeout-ms = 250\nmax-edits = 7\n[plugins.x]\npath = \"p/x.wasm\"\n[options.whole]\nk = true\n",
        )
        .unwrap();
        let config = Config::read(&path).unwrap();
        assert_eq!(config.plugins["x"].path, dir.path().join("p/x.wasm"));
        assert_eq!(config.limits().timeout, Duration::from_millis(250));
        assert_eq!(config.input_limits(), InputLimits { edits: 7, ..InputLimits::default() });
        let options: Vec<(String, String)> =
            config.plugin_options("whole", Some("f")).into_iter().map(|o| (o.key, o.value)).collect();
        assert_eq!(options, [("k".to_string(), "true".to_string()), ("file".to_string(), "f".to_string())]);
    }
}
