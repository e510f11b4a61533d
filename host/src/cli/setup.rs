//! `git agent-apply setup`: install the man page and the bash, zsh and fish
//! completions where each looks for them in the user's home (or under
//! `--prefix`, for packagers), so that `git agent-apply --help`, which git
//! turns into `man git-agent-apply`, opens the manual. Also renders the man
//! page for `git agent-apply man`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;
use clap_mangen::roff::{Roff, bold, roman};

use super::{CommandError, Exit, completions};

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Only show where each file would go; write nothing.
    #[arg(long)]
    print: bool,
    /// Install under DIR/share (man/man1, bash-completion, zsh, fish) instead
    /// of the user's directories, as a package would.
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
}

/// One installed file: where, and what.
struct Install {
    what: &'static str,
    path: PathBuf,
    contents: Vec<u8>,
}

pub fn run(args: &SetupArgs, command: clap::Command) -> Result<Exit, CommandError> {
    let share = match &args.prefix {
        Some(prefix) => prefix.join("share"),
        None => user_share().ok_or_else(|| {
            CommandError::usage("cannot tell where your home directory is")
                .hint("set HOME, or pass --prefix DIR to install under DIR/share")
        })?,
    };
    let mut man = Vec::new();
    render_man(command, &mut man).map_err(|e| CommandError::usage(format!("cannot render the man page: {e}")))?;
    let script = |shell| completions::script(shell).expect("bash, zsh and fish have scripts").into_bytes();
    let installs = [
        Install { what: "man page", path: share.join("man/man1/git-agent-apply.1"), contents: man },
        Install {
            what: "bash completion",
            path: share.join("bash-completion/completions/git-agent-apply"),
            contents: script(Shell::Bash),
        },
        Install {
            what: "zsh completion",
            path: share.join("zsh/site-functions/_git-agent-apply"),
            contents: script(Shell::Zsh),
        },
        Install {
            what: "fish completion",
            path: share.join("fish/vendor_completions.d/git-agent-apply.fish"),
            contents: script(Shell::Fish),
        },
        // fish loads a completion file for the command being completed
        // only, which for `git agent-apply` is `git`: this part completes
        // that, sourced at startup.
        Install {
            what: "fish git hook",
            path: share.join("fish/vendor_conf.d/git-agent-apply.fish"),
            contents: completions::fish_git_hook().as_bytes().to_vec(),
        },
    ];
    let mut out = std::io::stdout().lock();
    for install in &installs {
        if !args.print {
            write_file(&install.path, &install.contents)?;
        }
        let _ = writeln!(out, "{:<16} {}", install.what, install.path.display());
    }
    if args.prefix.is_none() {
        let _ = out.write_all(hints(&share, args.print).as_bytes());
    }
    Ok(Exit::Ok)
}

/// `$XDG_DATA_HOME`, else `~/.local/share`: where man, bash-completion and
/// fish look on every Unix (macOS's Application Support is not one of them).
fn user_share() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute());
    xdg.or_else(|| dirs::home_dir().map(|home| home.join(".local/share")))
}

fn write_file(path: &Path, contents: &[u8]) -> Result<(), CommandError> {
    let fail = |e: std::io::Error| CommandError::usage(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(path.parent().expect("every install path has a directory")).map_err(fail)?;
    std::fs::write(path, contents).map_err(fail)
}

/// What the user may still need to do for each shell to find its file.
fn hints(share: &Path, printing: bool) -> String {
    let man_dir = share.join("man");
    let mut text = String::new();
    if printing {
        text += "\n(--print: nothing was written)\n";
    }
    // man finds ~/.local/share/man on its own only when ~/.local/bin is on PATH.
    let on_manpath = std::process::Command::new("manpath")
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| std::env::split_paths(&String::from_utf8_lossy(&o.stdout).trim()).any(|p| p == man_dir));
    if !on_manpath {
        text += &format!(
            "\nman does not search {} yet; add to your shell's profile:\n    export MANPATH=\"{}:$MANPATH\"\n",
            man_dir.display(),
            man_dir.display()
        );
    }
    text += &format!(
        "\nzsh: add to ~/.zshrc, before compinit:\n    fpath=({} $fpath)\n",
        share.join("zsh/site-functions").display()
    );
    text += "bash and fish find their completions there by themselves (bash through the bash-completion package).\n";
    text
}

/// The manual: clap's sections, then the commands (without naming pages of
/// their own, which do not exist), exit status, files, environment, examples.
pub fn render_man(command: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(command.clone()).title("GIT-AGENT-APPLY");
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    let mut roff = Roff::default();
    roff.control("SH", ["COMMANDS"]);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        roff.control("TP", []);
        roff.text([bold(format!("git agent-apply {}", sub.get_name()))]);
        if let Some(about) = sub.get_about() {
            roff.text([roman(about.to_string())]);
        }
    }
    roff.control("PP", []).text([roman("Each command takes --help for its options.")]);
    for (title, paragraphs) in SECTIONS {
        roff.control("SH", [*title]);
        for paragraph in *paragraphs {
            match paragraph.split_once('\t') {
                Some((term, text)) => {
                    roff.control("TP", []).text([bold(term)]).text([roman(text)]);
                }
                None => {
                    roff.control("PP", []).text([roman(*paragraph)]);
                }
            }
        }
    }
    roff.to_writer(out)?;
    man.render_version_section(out)
}

/// Sections beyond clap's: a tab splits a term from its description.
const SECTIONS: &[(&str, &[&str])] = &[
    (
        "EXIT STATUS",
        &[
            "0\tApplied, or nothing to do (nothing to change, or every edit rejected under --interactive).",
            "1\tEdits failed; nothing changed.",
            "2\tUsage, config or plugin error.",
            "3\tA check or the pre-commit hook failed; everything was rolled back.",
            "4\tConflict: the repository moved during the run, or the dirty-file policy refused.",
        ],
    ),
    (
        "FILES",
        &[
            ".agent-apply.toml\tThe repository's config, at its root: format, checks, models, plugins, limits, protected paths. A reply can never edit it.",
            "$XDG_CONFIG_HOME/agent-apply/config.toml\tThe user's config (~/.config/agent-apply/config.toml), read after the repository's.",
            "$XDG_CACHE_HOME/agent-apply/components\tCompiled third-party plugins, kept between runs.",
            ".git/agent-apply/\tRun state: the journal that `recover` finishes, the sandbox worktree checks run in, the record `undo` reads.",
        ],
    ),
    (
        "ENVIRONMENT",
        &[
            "AGENT_APPLY_CONFIG\tThe user config file to read instead of the default one.",
            "AGENT_APPLY_CACHE_DIR\tWhere compiled plugins are kept.",
            "NO_COLOR\tWhen set, no colour is written.",
            "COMPLETE\tSet by the completion scripts to ask for completions; not for interactive use.",
        ],
    ),
    (
        "EXAMPLES",
        &[
            "git agent-apply formats\tList the formats.",
            "git agent-apply prompt editblock\tPrint the instructions to give a model.",
            "git agent-apply --dry-run reply.md\tShow what would change, writing nothing.",
            "git agent-apply reply.md\tApply a reply and commit it, all or nothing.",
            "model | git agent-apply --interactive\tShow each edit's diff and ask (y, n, q, a, d) on the terminal; commit the accepted ones.",
            "model-harness | git agent-apply --json -\tApply from stdin; print one JSON object.",
            "git agent-apply --check 'cargo test' reply.md\tCommit only if the check passes in a sandbox.",
            "git agent-apply undo\tRevert the last agent commit.",
        ],
    ),
];
