//! What every runtime of the process that stops calls one way shares: its
//! engine and its WASI linkers, made on first use.
//!
//! Shared, because a built-in format's code run where it lies is one
//! component per process (`code_memory`), which only the engine that made
//! it can instantiate; a call's deadline is its own store's either way.
//! A process that makes many runtimes (the MCP server, tests) links WASI
//! once.
//!
//! Not made on another thread while the run opens its workspace: tried
//! (#27), the 20-hunk diff of `bench/run` row 3 took 0.15-0.2 ms longer
//! with the engine, the component and the linker made beside the main
//! thread's work than after it, on the 2-core virtual machine.

use std::sync::Mutex;

use wasmtime::Engine;

use super::{PluginError, Stop, engine, linker};

/// An engine and its linkers, for the life of the process.
pub struct Shared {
    pub engine: Engine,
    pub linkers: linker::Linkers,
}

/// The engine and linkers of every runtime that stops calls `stop`'s way.
pub fn for_stop(stop: Stop) -> Result<&'static Shared, PluginError> {
    static SHARED: [Mutex<Option<&'static Shared>>; 2] = [const { Mutex::new(None) }; 2];
    let index = Stop::ALL.iter().position(|s| *s == stop).expect("every way is in ALL");
    let mut slot = SHARED[index].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(shared) = *slot {
        return Ok(shared);
    }
    // Runs load machine code (precompiled, or from the cache): building
    // cranelift for every run cost a short one 3% of its time and 1.6 MiB.
    // A plugin that must be compiled gets a compiling engine of its own
    // (see `ComponentCache::component_with`).
    let mut config = engine::config(stop);
    config.enable_compiler(false);
    #[cfg(target_os = "linux")]
    config.with_host_memory(super::memory::creator());
    // Built-in formats' code then runs where it lies in the binary.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    config.with_custom_code_memory(Some(super::code_memory::publisher()));
    let engine = Engine::new(&config).map_err(|e| PluginError::Load { plugin: "*".into(), reason: e.to_string() })?;
    let shared: &'static Shared = Box::leak(Box::new(Shared { engine, linkers: linker::Linkers::default() }));
    *slot = Some(shared);
    Ok(shared)
}
