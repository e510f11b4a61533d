//! Protected paths: files a reply may never change, because changing them
//! changes what this tool, git or the user's tools will execute. A reply is
//! untrusted input; an edit to one of these fails as `forbidden` with the
//! reason, and only config (which no reply can edit, being protected itself)
//! can lift the protection with `allow-protected`.

use std::path::Path;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::paths::lexical_normal;

/// The built-in protected paths and why each one is protected. Globs match
/// the repo-relative path, case-insensitively (a case-insensitive file system
/// writes `.Agent-Apply.toml` into `.agent-apply.toml`): both sides are
/// lowercased, which keeps each glob a literal, prefix or file-name match
/// for globset (a case-insensitive glob is always a regex, and building the
/// regex set was a tenth of a small run's instructions).
pub const DEFAULTS: &[(&str, &str)] = &[
    (".agent-apply.toml", "it is this tool's config, which names the checks it runs and the plugins it loads"),
    ("**/.gitattributes", "it picks git's filter, diff and merge drivers, which run commands"),
    (".gitmodules", "it sets submodule URLs and the commands `git submodule update` runs"),
    (".lfsconfig", "Git LFS reads its endpoints from it, so it decides where your content is sent"),
    ("**/.envrc", "direnv runs it when you enter the directory"),
    (".githooks/**", "it is a conventional git hooks directory (core.hooksPath)"),
    (".husky/**", "husky installs it as the git hooks directory"),
    (".pre-commit-config.yaml", "pre-commit runs the hooks it names on every commit"),
    (".vscode/tasks.json", "VS Code runs the tasks it defines, some when the folder opens"),
    (".vscode/settings.json", "VS Code runs the tools and interpreters it names"),
    (".devcontainer/**", "dev containers run the commands it names when the container is built"),
];

/// An invalid glob in `protected` or `allow-protected`.
#[derive(Debug, thiserror::Error)]
#[error("`{key}` holds {glob:?}, which is not a valid glob: {source}")]
pub struct GlobError {
    pub key: &'static str,
    pub glob: String,
    #[source]
    pub source: globset::Error,
}

/// The protected paths of one repository.
#[derive(Debug, Clone)]
pub struct Protection {
    rules: Vec<String>,
    protected: GlobSet,
    allowed: GlobSet,
}

impl Protection {
    /// The defaults, the hooks directory `hooks_dir` (repo-relative) when it
    /// lies inside the working tree, the config's `extra` globs, minus what
    /// `allow` lifts.
    pub fn new(hooks_dir: Option<&str>, extra: &[String], allow: &[String]) -> Result<Protection, GlobError> {
        let mut rules: Vec<(String, String)> =
            DEFAULTS.iter().map(|(glob, reason)| (glob.to_string(), reason.to_string())).collect();
        if let Some(dir) = hooks_dir {
            let reason = "it is the hooks directory (core.hooksPath): git runs what it holds".to_string();
            rules.push((format!("{}/**", globset::escape(dir.trim_end_matches('/'))), reason));
        }
        rules.extend(extra.iter().map(|glob| (glob.clone(), "your config lists it under `protected`".to_string())));
        let mut protected = GlobSetBuilder::new();
        for (glob, _) in &rules {
            protected.add(glob_of("protected", glob)?);
        }
        let mut allowed = GlobSetBuilder::new();
        for glob in allow {
            allowed.add(glob_of("allow-protected", glob)?);
        }
        let build =
            |key, set: GlobSetBuilder| set.build().map_err(|source| GlobError { key, glob: String::new(), source });
        Ok(Protection {
            rules: rules.into_iter().map(|(_, reason)| reason).collect(),
            protected: build("protected", protected)?,
            allowed: build("allow-protected", allowed)?,
        })
    }

    /// Why `path` is protected, if it is and config does not lift it.
    pub fn reason(&self, path: &str) -> Option<&str> {
        let path = path.to_lowercase();
        let first = *self.protected.matches(&path).first()?;
        (!self.allowed.is_match(&path)).then(|| self.rules[first].as_str())
    }
}

fn glob_of(key: &'static str, glob: &str) -> Result<Glob, GlobError> {
    GlobBuilder::new(&glob.to_lowercase()).literal_separator(true).build().map_err(|source| GlobError {
        key,
        glob: glob.to_string(),
        source,
    })
}

/// `core.hooksPath` as a repo-relative directory, when it points inside the
/// working tree at `root` (relative values are relative to the root, as git
/// reads them for a non-bare repository).
pub fn hooks_dir_inside(repo: &git2::Repository, root: &Path) -> Option<String> {
    let configured = repo.config().ok()?.get_path("core.hooksPath").ok()?;
    let absolute = if configured.is_absolute() { configured } else { root.join(configured) };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let relative = lexical_normal(&canonical(&absolute)).strip_prefix(canonical(root)).ok()?.to_path_buf();
    let relative = relative.to_string_lossy().replace('\\', "/");
    (!relative.is_empty()).then_some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_protect_what_runs_and_config_can_add_and_lift() {
        let protection =
            Protection::new(Some("tools/hooks"), &["deploy/*.sh".into()], &[".vscode/settings.json".into()]).unwrap();
        for path in [
            ".agent-apply.toml",
            ".Agent-Apply.TOML",
            "sub/dir/.gitattributes",
            ".gitattributes",
            ".envrc",
            "web/.envrc",
            ".githooks/pre-commit",
            "tools/hooks/pre-commit",
            "deploy/run.sh",
            "Deploy/RUN.sh",
            "TOOLS/Hooks/pre-commit",
            "Web/.ENVRC",
        ] {
            assert!(protection.reason(path).is_some(), "{path} should be protected");
        }
        for path in ["src/app.py", ".vscode/settings.json", "deploy/sub/run.sh", "tools/hooks.txt", "README.md"] {
            assert_eq!(protection.reason(path), None, "{path} should not be protected");
        }
        assert!(protection.reason("tools/hooks/pre-commit").unwrap().contains("core.hooksPath"));
    }

    #[test]
    fn a_bad_glob_names_its_key() {
        let error = Protection::new(None, &["a[".into()], &[]).unwrap_err();
        assert_eq!(error.key, "protected");
        assert!(error.to_string().contains("a["), "{error}");
    }
}
