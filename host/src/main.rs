// Where the binary starts itself (see start.rs), std's `main` is not used;
// the test harness brings its own.
#![cfg_attr(all(static_pie_entry, not(test)), no_main)]

#[cfg(static_pie_entry)]
mod start;

#[global_allocator]
static ALLOCATOR: agent_apply::alloc::MappedAlloc = agent_apply::alloc::MappedAlloc;

/// The command line's work on `args`; returns the exit status.
fn run(args: Vec<std::ffi::OsString>) -> u8 {
    agent_apply::alloc::serve_kept_pages(true);
    agent_apply::cli::run(args)
}

#[cfg(any(not(static_pie_entry), test))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(run(std::env::args_os().collect()))
}
