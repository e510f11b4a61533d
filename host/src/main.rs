#[global_allocator]
static ALLOCATOR: agent_apply::alloc::HugePageAlloc = agent_apply::alloc::HugePageAlloc;

fn main() -> std::process::ExitCode {
    agent_apply::cli::run()
}
