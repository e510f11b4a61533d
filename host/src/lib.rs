//! `git agent-apply`: turn what a language model wrote into a safe git
//! commit, or change nothing.
//!
//! One entry point applies a reply: open a [`Workspace`] (the repository,
//! its config and formats), call [`pipeline::apply`] with [`ApplyOptions`],
//! and read the typed [`report::ApplyReport`]. The CLI and the MCP server
//! ([`mcp`]) are thin callers of it.
//!
//! ```
//! use agent_apply::report::ReportStatus;
//! use agent_apply::{ApplyOptions, Workspace, pipeline};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let repo = git2::Repository::init(dir.path())?;
//! # repo.config()?.set_str("user.name", "doc")?;
//! # repo.config()?.set_str("user.email", "doc@example.com")?;
//! # std::fs::write(dir.path().join("app.py"), "def greet():\n    return 'hello'\n")?;
//! # let mut index = repo.index()?;
//! # index.add_path(std::path::Path::new("app.py"))?;
//! # index.write()?;
//! # let tree = repo.find_tree(index.write_tree()?)?;
//! # let me = repo.signature()?;
//! # repo.commit(Some("HEAD"), &me, &me, "init", &tree, &[])?;
//! // A repository holding app.py, and a model's reply in SEARCH/REPLACE blocks.
//! let mut workspace = Workspace::open(dir.path())?;
//! let reply = "app.py\n```\n<<<<<<< SEARCH\n    return 'hello'\n=======\n    return 'hi'\n>>>>>>> REPLACE\n```\n";
//! let applied = pipeline::apply(&mut workspace, reply.to_string(), &ApplyOptions::default())?;
//! assert_eq!(applied.report.status, ReportStatus::Applied);
//! assert!(applied.report.commit.is_some());
//!
//! // A reply whose text is not in the file changes nothing and says why.
//! let stale = reply.replace("'hello'", "'bye'").replace("'hi'", "'hey'");
//! let failed = pipeline::apply(&mut workspace, stale, &ApplyOptions::default())?;
//! assert_eq!(failed.report.status, ReportStatus::Failed);
//! assert!(failed.report.reflection.contains("Edit 1 to app.py failed"));
//! # Ok(())
//! # }
//! ```
//!
//! [`pipeline::prepare`] stops before writing: a caller can
//! [`preview`](Prepared::preview) each edit and [`apply`](Prepared::apply)
//! all but the ones a person rejected (what `--interactive` does).
//!
//! Beneath it: the wasm plugin [`runtime`], the format [`registry`] (the
//! `edit_format` factory), [`config`], the input [`limits`], the
//! [`transaction`] that reads and writes files, and the [`report`].

pub mod alloc;
pub mod cli;
pub mod config;
mod error;
pub mod limits;
pub mod mcp;
#[cfg(target_arch = "x86_64")]
mod musl_memory;
pub mod parts;
pub mod pipeline;
pub mod progress;
pub mod rebase;
pub mod registry;
pub mod report;
pub mod runtime;
pub mod schema;
pub mod snippet;
pub mod style;
pub mod suffix;
pub mod tokens;
pub mod transaction;
pub mod view;
pub mod workspace;

pub use error::Error;
pub use pipeline::{Applied, ApplyOptions, Prepared};
pub use workspace::Workspace;

#[cfg(test)]
mod tests {
    /// No `tracing` event or `log` record of any dependency is compiled in
    /// (host/Cargo.toml says why): nothing here would ever see them.
    #[test]
    fn the_dependencies_logging_is_compiled_out() {
        assert_eq!(tracing::level_filters::STATIC_MAX_LEVEL, tracing::level_filters::LevelFilter::OFF);
        assert_eq!(log::STATIC_MAX_LEVEL, log::LevelFilter::Off);
    }
}
