#[cfg(static_pie_entry)]
mod start;

#[global_allocator]
static ALLOCATOR: agent_apply::alloc::MappedAlloc = agent_apply::alloc::MappedAlloc;

fn main() -> std::process::ExitCode {
    agent_apply::alloc::serve_kept_pages(true);
    agent_apply::cli::run()
}
