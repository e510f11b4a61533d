//! `CommandError`: every failure, as a message, hints and an exit code.

use crate::Error;
use crate::config::ConfigError;
use crate::limits::{LimitError, raise_hint};
use crate::registry::RegistryError;
#[cfg(doc)]
use crate::runtime::Runtime;
use crate::runtime::{ExitReport, PluginError};
use crate::schema::{ErrorBody, ErrorReport};
use crate::transaction::{SnapshotError, TxError};

/// Exit codes of the CLI contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Applied, or nothing to do.
    Ok = 0,
    /// Edits failed; nothing changed.
    EditsFailed = 1,
    /// Usage, config or plugin error.
    Usage = 2,
    /// A check or hook failed; everything was rolled back.
    CheckFailed = 3,
    /// The repo moved underneath, or the dirty-file policy refused.
    Conflict = 4,
}

impl Exit {
    /// The process's exit status.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// A failed command: what went wrong, what to do, and how to exit.
#[derive(Debug)]
pub struct CommandError {
    pub exit: Exit,
    pub message: String,
    pub hints: Vec<String>,
    /// Longer output (a plugin's stderr) shown after the message.
    pub details: Option<String>,
    /// Text for the model, when its reply caused the error (JSON only).
    pub reflection: Option<String>,
    /// What the error came from, outermost first: the library errors'
    /// sources (a libgit2 or I/O error), shown as "caused by:" lines.
    /// (A boxed slice: it keeps `Result<_, CommandError>` small.)
    pub causes: Box<[String]>,
}

impl CommandError {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        CommandError {
            exit,
            message: message.into(),
            hints: Vec::new(),
            details: None,
            reflection: None,
            causes: Box::default(),
        }
    }

    /// Keep `error`'s chain of sources, each one the message does not
    /// already say (many errors quote their source in their own text).
    pub fn caused_by(mut self, error: &(dyn std::error::Error + 'static)) -> Self {
        let mut causes = Vec::from(std::mem::take(&mut self.causes));
        let mut source = error.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !self.message.contains(&text) && !causes.contains(&text) {
                causes.push(text);
            }
            source = cause.source();
        }
        CommandError { causes: causes.into(), ..self }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        CommandError::new(Exit::Usage, message)
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Print the error (to stdout as JSON when asked, else to stderr) and
    /// return the exit status.
    pub fn report(&self, json: bool) -> u8 {
        if json {
            super::output::json(&self.json_object());
        } else {
            // anstream drops the colour when stderr is not a terminal or NO_COLOR is set.
            let _ = std::io::Write::write_all(&mut anstream::stderr(), self.text().as_bytes());
        }
        self.exit.code()
    }

    /// What [`CommandError::report`] would print and exit with, as bytes
    /// for the file descriptor it would write to: made ahead for a run that
    /// may have to end from a signal handler, which can only write them
    /// (a plugin past its time, see [`Runtime::ending_at_timeout`]).
    pub fn exit_report(&self, json: bool) -> ExitReport {
        let (fd, text) = match json {
            true => (1, super::output::json_text(&self.json_object())),
            false => (2, super::output::for_stderr(self.text())),
        };
        ExitReport { fd, text: text.into_bytes(), code: self.exit as u8 }
    }

    fn json_object(&self) -> ErrorReport {
        let body = ErrorBody {
            message: self.message.clone(),
            causes: self.causes.to_vec(),
            hints: self.hints.clone(),
            details: self.details.clone(),
        };
        ErrorReport::new(self.exit as u8, body, self.reflection.clone().unwrap_or_default())
    }

    /// The error as text, styled (the stream drops the styles where unwanted).
    fn text(&self) -> String {
        let (error, hint) = (crate::style::ERROR, crate::style::HINT);
        let mut text = format!("{error}error:{error:#} {}\n", self.message);
        for cause in &self.causes {
            text += &format!("caused by: {cause}\n");
        }
        for line in &self.hints {
            text += &format!("{hint}hint:{hint:#} {line}\n");
        }
        if let Some(details) = &self.details {
            text += &format!("{}\n", details.trim_end());
        }
        text
    }
}

impl From<ConfigError> for CommandError {
    fn from(error: ConfigError) -> Self {
        CommandError::usage(error.to_string()).hint(format!("fix or remove {}", error.path.display())).caused_by(&error)
    }
}

impl From<PluginError> for CommandError {
    fn from(error: PluginError) -> Self {
        let hint = match &error {
            PluginError::Timeout { .. } => {
                "raise `plugin-timeout-ms` under [limits] in .agent-apply.toml if the plugin needs longer, or report the plugin"
            }
            PluginError::OutOfMemory { .. } => {
                "raise `plugin-memory-mib` under [limits] in .agent-apply.toml if the plugin needs more, or report the plugin"
            }
            PluginError::Contract { .. } => {
                "a format plugin must export the agent-apply:format `plugin` interface; build it with agent-apply-sdk's `export_format!`, or check that `path` names the right file"
            }
            PluginError::NativeAbi { .. } => {
                "rebuild the native plugin as a cdylib against the agent-apply-sdk that matches this git-agent-apply"
            }
            PluginError::ContractVersion { .. } => {
                "rebuild the plugin against the agent-apply-sdk that matches this git-agent-apply, or use a git-agent-apply that supports the plugin's contract"
            }
            PluginError::NotCalled { .. } => "nothing was written; please report this to agent-apply",
            _ => "this is a bug in the plugin; run with --verbose to see its output",
        };
        let details = error.stderr().map(|s| format!("plugin output:\n{s}"));
        CommandError { details, ..CommandError::usage(error.to_string()).hint(hint).caused_by(&error) }
    }
}

impl From<RegistryError> for CommandError {
    fn from(error: RegistryError) -> Self {
        let error = match error {
            RegistryError::Plugin(plugin) => return plugin.into(),
            error => error,
        };
        let command_error = match &error {
            RegistryError::Plugin(_) => unreachable!("converted above"),
            RegistryError::Unknown { valid, .. } => {
                let valid = valid.join(", ");
                CommandError::usage(error.to_string()).hint(format!("valid formats: {valid}, auto"))
            }
            RegistryError::Tie { .. } => {
                CommandError::usage(error.to_string()).hint("pass --format NAME to choose one")
            }
            RegistryError::Unrecognised { .. } => {
                CommandError::usage(error.to_string()).hint("pass --format NAME; `git agent-apply formats` lists them")
            }
            RegistryError::Shadows { name } => {
                let name = name.clone();
                CommandError::usage(error.to_string())
                    .hint(format!("rename [plugins.{name}], or add `shadow = true` to it to replace the built-in"))
            }
            RegistryError::Unreadable { name, .. } => {
                let hint = format!(
                    "build the plugin, or fix `path` under [plugins.{name}] (a relative path is relative to the config file)"
                );
                CommandError::usage(error.to_string()).hint(hint)
            }
            RegistryError::PinMismatch { name, actual, .. } => {
                let hint = format!(
                    "if you trust the new file, set sha256 = \"{actual}\" under [plugins.{name}]; otherwise restore the file you pinned"
                );
                CommandError::usage(error.to_string()).hint(hint)
            }
            RegistryError::PluginFile { .. } => {
                CommandError::usage(error.to_string()).hint("check [plugins] in .agent-apply.toml")
            }
            RegistryError::BadModelEntry { .. } => CommandError::usage(error.to_string())
                .hint("fix [models] in .agent-apply.toml; `git agent-apply formats` lists formats"),
        };
        command_error.caused_by(&error)
    }
}

impl From<LimitError> for CommandError {
    fn from(error: LimitError) -> Self {
        let hint = match error.config_key() {
            Some(key) => raise_hint(key),
            None => "nothing was changed; save the model's reply as UTF-8 text".to_string(),
        };
        let command_error = CommandError::usage(error.to_string()).hint(hint).caused_by(&error);
        CommandError { reflection: Some(error.reflection()), ..command_error }
    }
}

impl From<SnapshotError> for CommandError {
    fn from(error: SnapshotError) -> Self {
        let hint = error.hint().unwrap_or_else(|| "nothing was changed".into());
        CommandError::new(Exit::EditsFailed, error.to_string()).hint(hint).caused_by(&error)
    }
}

impl From<TxError> for CommandError {
    fn from(error: TxError) -> Self {
        let command_error = match &error {
            TxError::Moved { .. } | TxError::FileChanged { .. } => CommandError::new(Exit::Conflict, error.to_string())
                .hint("run the command again: the reply will be applied to the new state"),
            TxError::Busy { .. } => CommandError::new(Exit::Conflict, error.to_string())
                .hint("wait for it to finish; if no run is active, `git agent-apply recover` clears a stale lock"),
            TxError::InProgress { operation } => CommandError::new(Exit::Conflict, error.to_string())
                .hint(format!("finish it with {} first; nothing was changed", operation.settle)),
            TxError::Conflicted { .. } => CommandError::new(Exit::Conflict, error.to_string()).hint(
                "resolve the conflicts and `git add` the files (or abort the operation) first; nothing was changed",
            ),
            TxError::PartiallyStaged { .. } => CommandError::new(Exit::Conflict, error.to_string())
                .hint("commit, stash or unstage one of the two versions first; nothing was changed"),
            TxError::Converted { .. } => CommandError::new(Exit::EditsFailed, error.to_string()).hint(
                "check that the filter git names is installed (`git add` fails the same way); nothing was changed",
            ),
            TxError::Bare { .. } => CommandError::usage(error.to_string())
                .hint("run it in a checkout of the repository (`git worktree add` makes one)"),
            TxError::Locked { .. } => CommandError::new(Exit::Conflict, error.to_string())
                .hint("wait for that git command to finish; if none is running, remove the lock file"),
            TxError::Dirty { .. } => CommandError::new(Exit::Conflict, error.to_string())
                .hint("commit or stash your changes, or pass --dirty commit-first or --dirty include"),
            TxError::Refused(_) => CommandError::new(Exit::EditsFailed, error.to_string()),
            TxError::UnplannedChange { .. } => {
                CommandError::usage(error.to_string()).hint("this is a bug in the format plugin; nothing was changed")
            }
            _ => CommandError::usage(error.to_string()),
        };
        command_error.caused_by(&error)
    }
}

impl From<Error> for CommandError {
    fn from(error: Error) -> Self {
        let reflection = error.reflection();
        let chain = CommandError::new(Exit::Usage, error.to_string()).caused_by(&error).causes;
        let command_error = match error {
            Error::Config(error) => error.into(),
            Error::Registry(error) => error.into(),
            Error::Plugin(error) => error.into(),
            Error::Limit(error) => error.into(),
            Error::Snapshot(error) => error.into(),
            Error::Transaction(error) => error.into(),
            Error::NotADirectory(_)
            | Error::FormatRefused { .. }
            | Error::NoSuchFile(_)
            | Error::RenderRefused { .. } => CommandError::usage(error.to_string()),
            Error::Protected(_) => CommandError::usage(error.to_string())
                .hint("protected and allow-protected take globs such as `deploy/**` or `**/.env*`"),
            Error::WrongFormat { ref fits, .. } => {
                let hint = format!("pass --format {fits} (or --format auto)");
                CommandError::usage(error.to_string()).hint(hint)
            }
            Error::TokensLeftOut => CommandError::usage(error.to_string())
                .hint("install with the vocabulary: `cargo install --path host --features tokens`"),
            Error::ChecksNeedRepository => CommandError::usage(error.to_string()).hint("run it inside the repository"),
            Error::Base(ref base) => {
                let hint = base.hint();
                CommandError::usage(error.to_string()).hint(hint)
            }
            Error::Merge(_) => CommandError::usage(error.to_string()),
        };
        let command_error = CommandError { reflection: command_error.reflection.or(reflection), ..command_error };
        if command_error.causes.is_empty() { CommandError { causes: chain, ..command_error } } else { command_error }
    }
}

#[cfg(test)]
mod cause_tests {
    use super::*;

    #[test]
    fn a_source_the_message_leaves_out_is_kept_as_a_cause() {
        let git = git2::Error::new(git2::ErrorCode::Locked, git2::ErrorClass::Reference, "cannot lock ref");
        let error = CommandError::from(TxError::Git(git));
        assert_eq!(error.message, "cannot lock ref");
        assert_eq!(*error.causes, ["cannot lock ref; class=Reference (4); code=Locked (-14)"]);
        let wrapped = CommandError::from(Error::Transaction(TxError::Git(git2::Error::new(
            git2::ErrorCode::Locked,
            git2::ErrorClass::Reference,
            "cannot lock ref",
        ))));
        assert_eq!(wrapped.causes, error.causes);
    }

    #[test]
    fn a_source_the_message_already_quotes_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let error = CommandError::from(TxError::io(std::path::Path::new("a.txt"), io));
        assert_eq!(error.message, "a.txt: permission denied");
        assert!(error.causes.is_empty(), "{:?}", error.causes);
    }

    /// A run that ends from a plugin's timer reports the timeout as if it
    /// came through `Error::Plugin`; from auto-detection it comes through
    /// the registry, and must read the same.
    #[test]
    fn a_timeout_reads_the_same_whichever_way_it_comes() {
        let timeout = || PluginError::Timeout {
            plugin: "hostile".into(),
            call: "detect",
            limit: std::time::Duration::from_millis(200),
        };
        for json in [false, true] {
            let direct = CommandError::from(Error::Plugin(timeout())).exit_report(json);
            let detected = CommandError::from(Error::Registry(RegistryError::Plugin(timeout()))).exit_report(json);
            assert_eq!(detected, direct);
            assert_eq!((direct.fd, direct.code), if json { (1, 2) } else { (2, 2) });
        }
    }
}
