//! The WASI a plugin is linked with. What Rust's standard library imports
//! for a plugin (stdio streams and the other `wasi:cli` interfaces, clocks,
//! random) is a third of WASI's functions; linking all of WASI, files and
//! sockets included, was a seventh of a one-edit run's instructions. A
//! plugin that imports only those gets a linker of only those; one that
//! imports more (a Python plugin asks for files and sockets) gets all of
//! WASI, as before. Either way the context is the same: no preopened
//! directory, no network.

use std::sync::OnceLock;

use wasmtime::Engine;
use wasmtime::component::{Component, HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::p2::bindings::{cli, clocks, random, sync::io};
use wasmtime_wasi::random::WasiRandom;

use super::PluginState;

/// The interfaces [`add_basic`] links, without their versions.
const BASIC: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
];

/// The plugin contract's own interfaces: types only, nothing to link.
const CONTRACT: &str = "agent-apply:format/";

/// The two linkers a run may need, each made on first use.
#[derive(Default)]
pub struct Linkers {
    basic: OnceLock<Linker<PluginState>>,
    full: OnceLock<Linker<PluginState>>,
}

impl Linkers {
    /// The linker for `component`: the basic one when it imports nothing else.
    pub fn for_component(&self, engine: &Engine, component: &Component) -> &Linker<PluginState> {
        let basic_only = component.component_type().imports(engine).all(|(name, _)| {
            let interface = name.split_once('@').map_or(name, |(interface, _)| interface);
            interface.starts_with(CONTRACT) || BASIC.contains(&interface)
        });
        if basic_only {
            self.basic.get_or_init(|| linker_with(engine, add_basic))
        } else {
            self.full.get_or_init(|| linker_with(engine, wasmtime_wasi::p2::add_to_linker_sync))
        }
    }
}

fn linker_with(engine: &Engine, add: fn(&mut Linker<PluginState>) -> wasmtime::Result<()>) -> Linker<PluginState> {
    let mut linker = Linker::new(engine);
    add(&mut linker).expect("WASI's interfaces link once into a new linker");
    linker
}

/// The resource table, which the I/O interfaces work on.
struct Io;

impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// The interfaces of [`BASIC`], as `add_to_linker_sync` links them.
fn add_basic(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    type T = PluginState;
    io::error::add_to_linker::<T, Io>(linker, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, Io>(linker, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, Io>(linker, |t| t.ctx().table)?;
    cli::environment::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::exit::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(linker, T::cli)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(linker, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(linker, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(linker, |t| t.ctx().ctx.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(linker, |t| t.ctx().ctx.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(linker, |t| t.ctx().ctx.random())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::BUILTIN_FORMATS;

    /// Every built-in format links against the basic linker, and links
    /// there: what Rust's standard library imports is all in [`BASIC`].
    #[test]
    fn the_built_in_formats_need_only_the_basic_interfaces() {
        let engine = Engine::new(&super::super::engine::config(super::super::Stop::Trap)).unwrap();
        let linkers = Linkers::default();
        for format in BUILTIN_FORMATS {
            // SAFETY: as in `precompiled::builtin_component`: the build
            // script's output for this engine configuration.
            let component =
                unsafe { Component::deserialize(&engine, format.precompiled.unwrap().code(super::super::Stop::Trap)) }
                    .unwrap();
            let linker = linkers.for_component(&engine, &component);
            assert!(
                std::ptr::eq(linker, linkers.basic.get().unwrap()),
                "{} needs more than the basic WASI",
                format.name
            );
            linker.instantiate_pre(&component).unwrap_or_else(|e| panic!("{}: {e:#}", format.name));
        }
        assert!(linkers.full.get().is_none());
    }
}
