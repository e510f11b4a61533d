//! `git agent-apply`: turn what a language model wrote into a safe git
//! commit, or change nothing.
//!
//! The library holds the pieces the binary wires together: the wasm plugin
//! [`runtime`], the format [`registry`] (the `edit_format` factory),
//! [`config`], the input [`limits`], the [`transaction`] that reads and writes files, the
//! [`report`] and the [`cli`].

pub mod cli;
pub mod config;
mod error;
pub mod limits;
pub mod mcp;
pub mod parts;
pub mod pipeline;
pub mod rebase;
pub mod registry;
pub mod report;
pub mod runtime;
pub mod suffix;
pub mod transaction;
pub mod view;
pub mod workspace;

pub use error::Error;
pub use pipeline::{Applied, ApplyOptions};
pub use workspace::Workspace;
