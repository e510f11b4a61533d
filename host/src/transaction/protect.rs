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
    /// Each protected glob as it is matched, with why it is protected, in
    /// the order the first match is reported from.
    rules: Vec<(Rule, String)>,
    /// The rules that are globs proper, in their order among `rules`.
    globs: GlobSet,
    allowed: GlobSet,
}

/// How a protected glob is matched. The built-in ones are literal paths,
/// file names in any directory and whole directories: compared as strings,
/// they need no automaton, whose building was a tenth of a one-edit run's
/// instructions. Any other glob goes to globset.
#[derive(Debug, Clone)]
enum Rule {
    /// `a/b`: that path.
    Path(String),
    /// `**/name`: a file or directory of that name anywhere.
    Named(String),
    /// `dir/**`: everything under that directory.
    Under(String),
    /// Anything else: the glob at this index of `globs`.
    Glob(usize),
}

impl Rule {
    /// The rule for `glob` (lowercased); `next_glob` is the index a glob
    /// proper would take in the glob set.
    fn of(glob: &str, next_glob: usize) -> Rule {
        let literal = |s: &str| !s.is_empty() && !s.contains(['*', '?', '[', ']', '{', '}', '\\']);
        // `.` and `..` name no file: globset never matches them as one.
        let file_name = |name: &&str| literal(name) && !name.contains('/') && !matches!(*name, "." | "..");
        if let Some(name) = glob.strip_prefix("**/").filter(file_name) {
            Rule::Named(name.to_string())
        } else if let Some(dir) = glob.strip_suffix("/**").filter(|dir| literal(dir)) {
            Rule::Under(dir.to_string())
        } else if literal(glob) {
            Rule::Path(glob.to_string())
        } else {
            Rule::Glob(next_glob)
        }
    }

    /// Whether `path` (lowercased) matches; `globs` holds the indexes of the
    /// glob set's globs that match it.
    fn matches(&self, path: &str, globs: &[usize]) -> bool {
        match self {
            Rule::Path(literal) => path == literal,
            Rule::Named(name) => {
                path.strip_suffix(name.as_str()).is_some_and(|dir| dir.is_empty() || dir.ends_with('/'))
            }
            Rule::Under(dir) => path.strip_prefix(dir.as_str()).is_some_and(|rest| rest.starts_with('/')),
            Rule::Glob(index) => globs.contains(index),
        }
    }
}

impl Protection {
    /// The defaults, the hooks directory `hooks_dir` (repo-relative) when it
    /// lies inside the working tree, the config's `extra` globs, minus what
    /// `allow` lifts.
    pub fn new(hooks_dir: Option<&str>, extra: &[String], allow: &[String]) -> Result<Protection, GlobError> {
        let mut protected: Vec<(String, String)> =
            DEFAULTS.iter().map(|(glob, reason)| (glob.to_string(), reason.to_string())).collect();
        if let Some(dir) = hooks_dir {
            let reason = "it is the hooks directory (core.hooksPath): git runs what it holds".to_string();
            protected.push((format!("{}/**", globset::escape(dir.trim_end_matches('/'))), reason));
        }
        protected.extend(extra.iter().map(|glob| (glob.clone(), "your config lists it under `protected`".to_string())));
        let mut rules = Vec::with_capacity(protected.len());
        let mut globs = GlobSetBuilder::new();
        let mut glob_count = 0;
        for (glob, reason) in protected {
            let rule = Rule::of(&glob.to_lowercase(), glob_count);
            if matches!(rule, Rule::Glob(_)) {
                globs.add(glob_of("protected", &glob)?);
                glob_count += 1;
            }
            rules.push((rule, reason));
        }
        let mut allowed = GlobSetBuilder::new();
        for glob in allow {
            allowed.add(glob_of("allow-protected", glob)?);
        }
        let build =
            |key, set: GlobSetBuilder| set.build().map_err(|source| GlobError { key, glob: String::new(), source });
        Ok(Protection { rules, globs: build("protected", globs)?, allowed: build("allow-protected", allowed)? })
    }

    /// Why `path` is protected, if it is and config does not lift it.
    pub fn reason(&self, path: &str) -> Option<&str> {
        let path = path.to_lowercase();
        let globs = if self.globs.is_empty() { Vec::new() } else { self.globs.matches(&path) };
        let (_, reason) = self.rules.iter().find(|(rule, _)| rule.matches(&path, &globs))?;
        (!self.allowed.is_match(&path)).then_some(reason.as_str())
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
        for path in [
            "src/app.py",
            ".vscode/settings.json",
            "deploy/sub/run.sh",
            "tools/hooks.txt",
            "README.md",
            "web/app.envrc",
            "x.gitattributes",
            ".githooks.d/pre-commit",
            "tools/hooksx/pre-commit",
        ] {
            assert_eq!(protection.reason(path), None, "{path} should not be protected");
        }
        assert!(protection.reason("tools/hooks/pre-commit").unwrap().contains("core.hooksPath"));
    }

    /// The reason globset alone gives: the first rule whose glob matches.
    fn reason_by_globset(extra: &[String], path: &str) -> Option<String> {
        let globs: Vec<(String, String)> = DEFAULTS
            .iter()
            .map(|(glob, reason)| (glob.to_string(), reason.to_string()))
            .chain(extra.iter().map(|glob| (glob.clone(), "your config lists it under `protected`".to_string())))
            .collect();
        let mut set = GlobSetBuilder::new();
        for (glob, _) in &globs {
            set.add(glob_of("protected", glob).unwrap());
        }
        let first = *set.build().unwrap().matches(path.to_lowercase()).first()?;
        Some(globs[first].1.clone())
    }

    proptest::proptest! {
        /// Matched as strings, the literal, `**/name` and `dir/**` globs
        /// match what globset matches them to; other globs go to globset.
        #[test]
        fn simple_globs_match_as_globset_matches_them(
            extra in proptest::collection::vec(
                "(\\*\\*/)?([ab.]{1,2}|\\.envrc|\\.githooks|A|\\*)(/([ab]{1,2}|\\*\\*|\\*))?(/\\*\\*)?", 0..4),
            path in "([ab.]{1,3}|\\.envrc|\\.githooks|A|\\.agent-apply\\.toml)(/([ab]{1,3}|a?\\.envrc|pre-commit)){0,2}",
        ) {
            let protection = Protection::new(None, &extra, &[]).unwrap();
            proptest::prop_assert_eq!(protection.reason(&path).map(str::to_string), reason_by_globset(&extra, &path));
        }
    }

    #[test]
    fn a_bad_glob_names_its_key() {
        let error = Protection::new(None, &["a[".into()], &[]).unwrap_err();
        assert_eq!(error.key, "protected");
        assert!(error.to_string().contains("a["), "{error}");
    }
}
