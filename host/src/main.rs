fn main() -> std::process::ExitCode {
    agent_apply::cli::run()
}
