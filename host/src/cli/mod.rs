//! The command line: clap definitions, one file per subcommand, and the one
//! place that turns errors into messages, hints and exit codes.

mod apply;
mod completions;
mod error;
mod formats;
mod hook;
mod interactive;
mod lint;
mod mcp;
mod output;
mod parse;
mod plugin;
mod prompt;
mod read;
mod recover;
mod reply_input;
mod schema;
mod setup;
mod undo;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Parser, Subcommand};
use clap_complete::engine::ArgValueCandidates;

use crate::limits::{CheckedReply, InputLimits};
use crate::runtime::PluginError;
use crate::workspace::Workspace;
pub use error::{CommandError, Exit};
pub use schema::json_schema;

/// Turn a language model's code edits into a safe git commit, or change nothing.
#[derive(Debug, Parser)]
#[command(
    name = "git-agent-apply",
    bin_name = "git agent-apply",
    version,
    about,
    after_help = "With no subcommand, `apply` is assumed: `git agent-apply reply.md` applies reply.md."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    apply: ApplyArgs,
    #[command(flatten)]
    global: GlobalArgs,
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Work in this repository instead of the one around the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// Show plugin output and timings.
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Print one JSON object instead of text (apply, parse, formats, prompt,
    /// lint, undo, recover); errors are JSON objects too.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply a reply (the default command).
    Apply(Deferred<ApplyArgs>),
    /// Show what a format understood in a reply, edit by edit.
    Parse(Deferred<parse::ParseArgs>),
    /// Show a file the way a model should read it for a format.
    Read(Deferred<read::ReadArgs>),
    /// List the built-in and configured formats.
    Formats,
    /// Print a format's instructions for a model.
    Prompt(Deferred<prompt::PromptArgs>),
    /// Report edit-format leftovers and merge-conflict markers in files.
    Lint(Deferred<lint::LintArgs>),
    /// Install or remove the pre-commit hook that runs `lint --staged`.
    Hook(Deferred<hook::HookArgs>),
    /// Revert the last agent commit.
    Undo(Deferred<undo::UndoArgs>),
    /// Finish or undo a run that was interrupted.
    Recover,
    /// Serve this repository to an agent over the Model Context Protocol (stdio).
    Mcp(Deferred<mcp::McpArgs>),
    /// Scaffold or check a third-party format plugin.
    Plugin(Deferred<plugin::PluginArgs>),
    /// Print shell completions.
    Completions(Deferred<completions::CompletionsArgs>),
    /// Print the man page (roff).
    Man,
    /// Install the man page and shell completions for this user.
    Setup(Deferred<setup::SetupArgs>),
}

/// A subcommand's arguments, added to its `clap::Command` only when that
/// subcommand is parsed, or the whole tree is built (help, completions):
/// building every subcommand's arguments for each run was 4% of a one-edit
/// run's instructions and, with their builders' code fetched cold, a
/// ninth of its time (#27).
#[derive(Debug, Clone)]
struct Deferred<T>(T);

impl<T: Args> Args for Deferred<T> {
    fn augment_args(command: clap::Command) -> clap::Command {
        command.defer(T::augment_args)
    }
    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        command.defer(T::augment_args_for_update)
    }
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Deferred<T> {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Deferred)
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

/// `git agent-apply [apply] [OPTIONS] [REPLY|-]`.
#[derive(Debug, Clone, Default, Args)]
pub struct ApplyArgs {
    /// The reply to apply: a file, or `-` (the default) for stdin.
    #[arg(value_name = "REPLY|-")]
    reply: Option<PathBuf>,
    /// Edit format by name or alias, or `auto`.
    #[arg(short, long, value_name = "NAME|auto", add = ArgValueCandidates::new(completions::format_candidates))]
    format: Option<String>,
    /// The model that wrote the reply; picks its best-suited format.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The file edits apply to, for formats that edit one file.
    #[arg(long, value_name = "PATH")]
    file: Option<String>,
    /// Candidate files an edit may be retried on.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    files: Vec<String>,
    /// Apply to the working tree only; do not commit.
    #[arg(long)]
    no_commit: bool,
    /// Compute, report and show the diff; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Apply the edits that succeed and report the rest.
    #[arg(long)]
    partial: bool,
    /// Run this command on the result before committing (repeatable).
    #[arg(long, value_name = "CMD")]
    check: Vec<String>,
    /// Skip the pre-commit hook.
    #[arg(long)]
    no_verify: bool,
    /// Commit message.
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
    /// Edit files git ignores.
    #[arg(long)]
    allow_ignored: bool,
    /// What to do with uncommitted changes in edited files (default: commit-first).
    #[arg(long, value_enum, value_name = "POLICY")]
    dirty: Option<crate::transaction::DirtyPolicy>,
    /// Show a coloured unified diff of what was applied.
    #[arg(long)]
    diff: bool,
    /// Show each edit's diff and ask whether to apply it, as `git add -p`
    /// does (y, n, q, a, d; ? for help), then apply the accepted edits in one
    /// commit and report the rest as rejected. Asks on the terminal (the
    /// reply may come on stdin).
    #[arg(long, conflicts_with = "json")]
    interactive: bool,
    /// Count the reply's tokens (OpenAI `o200k_base`) into the JSON report's
    /// `stats`. Off by default: loading the vocabulary takes ~0.2 s. Needs a
    /// build with the `tokens` feature (`cargo install --features tokens`).
    #[arg(long)]
    tokens: bool,
    /// The version the reply was written against (repeatable): a revision
    /// (`HEAD~1`, a tree, `REV:path`) or a blob id for every file, or
    /// `PATH=REV` for one file. Its edits are applied there and three-way
    /// merged into the current file.
    #[arg(long, value_name = "[PATH=]REV")]
    base: Vec<String>,
}

impl Command {
    /// The name of a command that has no JSON output.
    fn without_json(&self) -> Option<&'static str> {
        match self {
            Command::Apply(_)
            | Command::Parse(_)
            | Command::Formats
            | Command::Prompt(_)
            | Command::Lint(_)
            | Command::Undo(_)
            | Command::Recover => None,
            Command::Read(_) => Some("read"),
            Command::Hook(_) => Some("hook"),
            Command::Mcp(_) => Some("mcp"),
            Command::Plugin(_) => Some("plugin"),
            Command::Completions(_) => Some("completions"),
            Command::Man => Some("man"),
            Command::Setup(_) => Some("setup"),
        }
    }
}

/// Run the command line `args` (the program's name first); returns the
/// process exit code. The binary passes what the C library gave its `main`:
/// a statically linked musl gives std's `args_os` nothing.
pub fn run(args: Vec<OsString>) -> u8 {
    if args.get(1).is_some_and(|first| first == crate::transaction::process_tree::SUPERVISE) {
        let code = crate::transaction::process_tree::supervise(&args[2..]);
        return u8::try_from(code).unwrap_or(1);
    }
    if completions::answer_request(Cli::command, &args) {
        return 0;
    }
    let asked_json = args.iter().any(|arg| arg == "--json");
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return usage_error(error, asked_json),
    };
    let json = cli.global.json;
    if json && let Some(name) = cli.command.as_ref().and_then(Command::without_json) {
        return CommandError::usage(format!("`{name}` does not print JSON"))
            .hint("--json works with apply, parse, formats, prompt, lint, undo and recover")
            .report(true);
    }
    crate::progress::enable_for_terminal(json);
    let result = match cli.command {
        None => apply::run(&cli.global, &cli.apply),
        Some(Command::Apply(Deferred(args))) => apply::run(&cli.global, &args),
        Some(Command::Parse(Deferred(args))) => parse::run(&cli.global, &args),
        Some(Command::Read(Deferred(args))) => read::run(&cli.global, &args),
        Some(Command::Formats) => formats::run(&cli.global),
        Some(Command::Prompt(Deferred(args))) => prompt::run(&cli.global, &args),
        Some(Command::Lint(Deferred(args))) => lint::run(&cli.global, &args),
        Some(Command::Hook(Deferred(args))) => hook::run(&cli.global, &args),
        Some(Command::Undo(Deferred(args))) => undo::run(&cli.global, &args),
        Some(Command::Recover) => recover::run(&cli.global),
        Some(Command::Mcp(Deferred(args))) => mcp::run(&cli.global, &args),
        Some(Command::Plugin(Deferred(args))) => plugin::run(&cli.global, &args),
        Some(Command::Completions(Deferred(args))) => completions::run(&args, Cli::command()),
        Some(Command::Man) => man(),
        Some(Command::Setup(Deferred(args))) => setup::run(&args, Cli::command()),
    };
    match result {
        Ok(exit) => exit.code(),
        Err(error) => error.report(json),
    }
}

/// A command line clap refused: as clap prints it, or, when `--json` was
/// asked for, as the one JSON error object every `--json` outcome is.
/// Help and version requests print as usual.
fn usage_error(error: clap::Error, asked_json: bool) -> u8 {
    use clap::error::ErrorKind;
    let informational = matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if !asked_json || informational || error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        error.exit();
    }
    let detail = error.render().to_string();
    let first = detail.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    CommandError { details: Some(detail), ..CommandError::usage(message) }
        .hint("`git agent-apply --help` lists the options")
        .report(true)
}

fn man() -> Result<Exit, CommandError> {
    setup::render_man(Cli::command(), &mut std::io::stdout().lock())
        .map_err(|e| CommandError::usage(format!("cannot write the man page: {e}")))?;
    Ok(Exit::Ok)
}

/// The workspace a command works in: `--repo`, or the current directory.
pub fn open_workspace(global: &GlobalArgs) -> Result<Workspace, CommandError> {
    Ok(Workspace::open(start_dir(global))?)
}

/// The same, for a command that writes nothing while plugins run and does
/// nothing after a plugin's error but report it: a plugin past its time
/// limit ends the process with that error, as [`CommandError::report`]
/// prints it, and the plugins run without time checks in their code
/// ([`Workspace::open_ending_at_timeout`]).
pub fn open_workspace_ending_at_timeout(global: &GlobalArgs) -> Result<Workspace, CommandError> {
    let json = global.json;
    let reporter =
        move |timeout: &PluginError| CommandError::from(crate::Error::Plugin(timeout.clone())).exit_report(json);
    Ok(Workspace::open_ending_at_timeout(start_dir(global), Box::new(reporter))?)
}

/// `--repo`, or the current directory.
fn start_dir(global: &GlobalArgs) -> &Path {
    global.repo.as_deref().unwrap_or(Path::new("."))
}

/// The reply text, from a file or stdin for `-` or no argument, read no
/// further than the reply limit and checked to be text with lines in limits.
pub fn read_reply(source: Option<&Path>, limits: &InputLimits) -> Result<CheckedReply, CommandError> {
    reply_input::read_reply(source, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent_once_every_deferred_subcommand_is_built() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_subcommand_gets_its_arguments_only_when_it_is_parsed_or_built() {
        let arguments = |command: &clap::Command, name: &str| {
            let sub = command.find_subcommand(name).unwrap();
            sub.get_arguments().filter(|a| !a.is_global_set()).count()
        };
        assert_eq!(arguments(&Cli::command(), "parse"), 0, "not built with the tree");
        let mut built = Cli::command();
        built.build();
        assert!(arguments(&built, "parse") > 0, "built for help and completions");

        let cli = Cli::try_parse_from(["git-agent-apply", "parse", "--format", "udiff", "reply.md"]).unwrap();
        let Some(Command::Parse(Deferred(args))) = cli.command else { panic!("parsed as {:?}", cli.command) };
        let parsed = format!("{args:?}");
        assert!(parsed.contains("\"udiff\"") && parsed.contains("\"reply.md\""), "{parsed}");
        let refused = Cli::try_parse_from(["git-agent-apply", "parse", "--no-such-option"]).unwrap_err();
        assert_eq!(refused.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}
