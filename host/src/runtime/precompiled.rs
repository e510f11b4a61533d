//! The built-in formats, compiled to machine code when the binary was built
//! (host/build.rs) and embedded beside their wasm. A first run loads them
//! as they are. Only when they do not fit this engine or CPU (a binary
//! built elsewhere, or cross-compiled) is the wasm compiled, once, into the
//! on-disk cache, with a notice, since that takes seconds.

use wasmtime::Engine;
use wasmtime::component::Component;

use super::ComponentCache;
use crate::progress;

/// The component of built-in format `name`: its embedded machine code if
/// it fits `engine`, otherwise compiled (or fetched from `cache`).
pub fn builtin_component(
    engine: &Engine,
    cache: &ComponentCache,
    name: &str,
    wasm: &[u8],
    digest: &str,
    precompiled: Option<&[u8]>,
) -> Result<Component, String> {
    let why_not = match precompiled {
        // SAFETY: the bytes are what `Engine::precompile_component` produced
        // in this binary's build script, embedded unchanged; wasmtime checks
        // its version, configuration and the CPU features in their header
        // and refuses them, rather than running them, if any differs.
        Some(code) => match unsafe { Component::deserialize(engine, code) } {
            Ok(component) => return Ok(component),
            Err(e) => format!("{e:#}"),
        },
        None => "this binary was built without them (cross-compiled)".to_string(),
    };
    cache.component_with(engine, wasm, digest, || {
        eprintln!(
            "agent-apply: compiling the built-in format `{name}` for this machine (once; kept in the cache): \
             its precompiled code does not fit: {}",
            first_line(&why_not)
        );
        progress::Status::start(format!("compiling the `{name}` format"))
    })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}
