//! [`Error`]: everything the library's entry points can fail with, each
//! variant keeping its cause. Callers decide how to show it: the CLI turns
//! it into a message, hints and an exit code (`cli/error.rs`), the MCP
//! server into a tool error.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::limits::LimitError;
use crate::registry::RegistryError;
use crate::runtime::PluginError;
use crate::transaction::{SnapshotError, TxError, protect::GlobError};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("invalid config: {0}")]
    Protected(#[source] GlobError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    Transaction(#[from] TxError),
    /// The format the caller named read no edit where another format does.
    #[error("format '{named}' found no edit in this reply, but format '{fits}' reads edits in it")]
    WrongFormat { named: String, fits: String },
    /// A format rejected the request as a whole (not one edit of it).
    #[error("format '{format}' refused the request: {message}")]
    FormatRefused { format: String, message: String },
    #[error("cannot read {0}: no such file")]
    NoSuchFile(String),
    #[error("format '{format}' cannot render {path}: {message}")]
    RenderRefused { format: String, path: String, message: String },
    /// `--tokens` in a build without the `tokens` feature.
    #[error("--tokens: this build does not count tokens (its vocabulary is left out to keep the binary small)")]
    TokensLeftOut,
    /// Checks without a commit run in a sandbox made from the repository.
    #[error("--check needs a git repository to run in")]
    ChecksNeedRepository,
    /// `--base` names nothing usable.
    #[error(transparent)]
    Base(#[from] crate::rebase::BaseError),
    /// git's three-way file merge itself failed (not a conflict).
    #[error(transparent)]
    Merge(#[from] crate::rebase::merge::MergeError),
}

impl Error {
    /// Text for the model, when its reply caused the error.
    pub fn reflection(&self) -> Option<String> {
        match self {
            Error::Limit(limit) => Some(limit.reflection()),
            Error::WrongFormat { named, fits } => Some(format!(
                "Your reply was read as the {named} format, which found no edit in it, while it reads as the {fits} \
                 format; nothing was applied. Write your edits in the {named} format.\n"
            )),
            _ => None,
        }
    }
}
