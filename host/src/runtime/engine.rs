//! The engine configuration, shared by the runtime and by host/build.rs,
//! which precompiles the built-in formats: a precompiled component loads
//! only into an engine configured exactly as the one that compiled it.

/// How a plugin call that runs past its time limit is stopped. Each way is
/// its own engine configuration, so its own machine code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    /// The call traps and the process goes on: the code checks the
    /// engine's epoch at every function entry and loop back edge. For
    /// callers that outlive a failed call (the MCP server, library users).
    Trap,
    /// The process ends, reporting the timeout as the run's error: the code
    /// has no checks (they were a fifth of a large reply's instructions,
    /// #27). Only for one-shot runs that write nothing while a plugin runs.
    Exit,
}

impl Stop {
    /// Every way, in the order build.rs embeds their code.
    pub const ALL: [Stop; 2] = [Stop::Trap, Stop::Exit];
}

/// The configuration of every engine of this tool that stops calls `stop`'s way.
pub fn config(stop: Stop) -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true).epoch_interruption(stop == Stop::Trap);
    // The runtime maps plugins' memories itself (`runtime::memory`), which
    // wasmtime's copy-on-write images cannot be laid over: data segments
    // are copied in instead (a format's are a few pages).
    config.memory_init_cow(false);
    // No `.eh_frame` for the compiled code: nothing unwinds natively through
    // a plugin's frames (traps and wasm backtraces use wasmtime's own walk,
    // a host panic is caught at the call's boundary), and registering it
    // with the system unwinder at each load cost a short run 1.6% of its
    // time (`__register_frame`, #27).
    config.native_unwind_info(false);
    // For profiling: `perf report` then names the components' functions.
    if std::env::var_os("AGENT_APPLY_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}
