//! The engine configuration, shared by the runtime and by host/build.rs,
//! which precompiles the built-in formats: a precompiled component loads
//! only into an engine configured exactly as the one that compiled it.

/// The configuration every engine of this tool is made from.
pub fn config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true).epoch_interruption(true);
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
