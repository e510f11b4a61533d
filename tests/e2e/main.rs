//! End-to-end tests: the real wasm components through wasmtime, and the real
//! binary on real directories and git repositories. One test binary, as jj does.

mod apply_patch;
mod builtins;
mod cache;
mod cli;
mod common;
mod corpus;
mod corpus_binary;
mod crash;
mod detect;
mod fidelity;
mod hook;
mod hostile;
mod interactive;
mod limits;
mod lint;
mod mcp;
mod native;
mod plugins;
mod prompt;
mod properties;
mod pty;
mod python;
mod rebase;
mod rebase_property;
mod replies;
mod repo;
mod sandbox;
mod schema;
mod security;
mod shells;
mod snapshots;
mod states;
mod terminal;
mod tool_calls;
mod transaction;
