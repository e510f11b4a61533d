//! Shell completion: `git agent-apply completions SHELL` prints a script
//! (the one `setup` installs). Bash, zsh and fish complete through the
//! binary itself (clap_complete's dynamic engine, `COMPLETE=<shell>`), so
//! `--format <TAB>` offers the formats this repository's config adds, and
//! each script also hooks into git's own completion, which is what runs for
//! `git agent-apply <TAB>`.

use std::ffi::OsString;
use std::io::Write;

use clap::Args;
use clap_complete::Shell;
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::EnvCompleter;

use super::{CommandError, Exit};
use crate::config::Config;
use crate::registry::BUILTIN_FORMATS;

/// The command the scripts run: found on PATH, as git finds it.
const BIN: &str = "git-agent-apply";
/// The variable that asks the binary for completions instead of a run.
const VAR: &str = "COMPLETE";

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    shell: Shell,
}

pub fn run(args: &CompletionsArgs, mut command: clap::Command) -> Result<Exit, CommandError> {
    let mut out = std::io::stdout().lock();
    match script(args.shell) {
        Some(script) => out
            .write_all(script.as_bytes())
            .map_err(|e| CommandError::usage(format!("cannot write the completion script: {e}")))?,
        // Other shells get clap's static script, without git's hook.
        None => clap_complete::generate(args.shell, &mut command, BIN, &mut out),
    }
    Ok(Exit::Ok)
}

/// Answer a completion request (`COMPLETE=<shell> git-agent-apply -- WORDS`)
/// and return true, or return false when this run is not one.
pub fn answer_request(factory: fn() -> clap::Command, args: &[OsString]) -> bool {
    if std::env::var_os(VAR).is_none_or(|shell| shell.is_empty() || shell == "0") {
        return false;
    }
    let current_dir = std::env::current_dir().ok();
    // Only requests (words after `--`) are answered; registration scripts
    // come from `completions SHELL`, which knows about git.
    if !args.iter().any(|a| a == "--") {
        return false;
    }
    let done = clap_complete::CompleteEnv::with_factory(factory)
        .var(VAR)
        .bin(BIN)
        .completer(BIN)
        .try_complete(args.iter().cloned(), current_dir.as_deref());
    match done {
        Ok(answered) => answered,
        Err(error) => {
            eprintln!("git-agent-apply: completion failed: {error}");
            true
        }
    }
}

/// The format names (and aliases) `--format` takes here: the built-ins and
/// the plugins of the config that applies in the current directory.
pub fn format_candidates() -> Vec<CompletionCandidate> {
    let builtin = BUILTIN_FORMATS.iter().flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()));
    let mut names: Vec<String> = builtin.map(str::to_string).collect();
    let root = crate::transaction::discover_repository(std::path::Path::new("."))
        .ok()
        .and_then(|r| r.workdir().map(|w| w.to_path_buf()));
    if let Ok(config) = Config::load(root.as_deref()) {
        for (name, plugin) in config.plugins {
            names.push(name);
            names.extend(plugin.aliases);
        }
    }
    names.push("auto".into());
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The script for `shell`, or `None` for shells completed statically.
pub fn script(shell: Shell) -> Option<String> {
    let mut registration = Vec::new();
    let git_hook = match shell {
        Shell::Bash => {
            clap_complete::env::Bash.write_registration(VAR, BIN, BIN, BIN, &mut registration).ok()?;
            BASH_GIT
        }
        // The zsh function serves both: zsh's git completion calls
        // `_git-agent-apply` with the subcommand as the first word.
        Shell::Zsh => return Some(ZSH.into()),
        Shell::Fish => {
            clap_complete::env::Fish.write_registration(VAR, BIN, BIN, BIN, &mut registration).ok()?;
            FISH_GIT
        }
        _ => return None,
    };
    Some(format!("{}{git_hook}", String::from_utf8_lossy(&registration)))
}

/// The part of the fish script that completes `git agent-apply`, on its
/// own: `setup` installs it where fish sources it at startup, because fish
/// loads a completion file only for the command being completed (`git`,
/// whose completion file is fish's own).
pub fn fish_git_hook() -> &'static str {
    FISH_GIT
}

/// What git's bash completion calls for `git agent-apply`: the words from
/// the subcommand on, completed as if `git-agent-apply` had been typed.
const BASH_GIT: &str = r#"
# git's completion calls _git_<subcommand> for `git agent-apply ...`.
_git_agent_apply() {
    local IFS=$'\013'
    local cmd_idx=${__git_cmd_idx:-1}
    local args=("${words[@]:cmd_idx+1}")
    COMPREPLY=( $( \
        _CLAP_IFS="$IFS" \
        _CLAP_COMPLETE_INDEX=$((cword - cmd_idx)) \
        _CLAP_COMPLETE_COMP_TYPE=9 \
        _CLAP_COMPLETE_SPACE=true \
        COMPLETE=bash \
        git-agent-apply -- git-agent-apply "${args[@]}" 2>/dev/null \
    ) )
}
"#;

// The second line is what zsh's git completion shows beside `agent-apply`
// when it lists commands: it reads the `_git-*` files on fpath for it.
const ZSH: &str = r#"#compdef git-agent-apply
#description apply a language model's code edits as one commit
# Completion for git-agent-apply, and for `git agent-apply`: zsh's git
# completion calls _git-agent-apply with the subcommand as the first word.
local -a candidates dirs other
candidates=("${(@f)$( \
    _CLAP_IFS=$'\n' \
    _CLAP_COMPLETE_INDEX=$((CURRENT - 1)) \
    COMPLETE=zsh \
    git-agent-apply -- git-agent-apply "${(@)words[2,-1]}" 2>/dev/null \
)}")
[[ -n $candidates ]] || return 1
# Directories (clap ends them with /) take no space after them, so that
# completing a path can go on into them.
local candidate value
for candidate in $candidates; do
    value=${candidate%%:*}
    if [[ $value == */ ]]; then
        dirs+=("${value%/}${candidate:$#value}")
    else
        other+=("$candidate")
    fi
done
(( $#dirs )) && _describe -V values dirs -S / -r /
(( $#other )) && _describe -V values other
return 0
"#;

// fish up to 3.6 never hands `git <third-party-command> ...` to that
// command's completions (its git completion looks the commands up through a
// variable its functions cannot see), so `git agent-apply` is completed
// here, by the binary, with the words after the subcommand. Where fish's git
// completion does delegate (3.7+), both give the same candidates, and fish
// keeps one of each.
const FISH_GIT: &str = r#"
# `git agent-apply ...`: the words after the subcommand, or a failure when
# the command line is not one (git's own options before it are skipped).
function __git_agent_apply_args
    set -l words (commandline --current-process --tokenize --cut-at-cursor)
    set -e words[1]
    while set -q words[1]
        switch $words[1]
            case -C -c --git-dir --work-tree --namespace
                set -e words[1..2]
            case '-*'
                set -e words[1]
            case agent-apply
                set -e words[1]
                set -q words[1]; and printf '%s\n' $words
                return 0
            case '*'
                return 1
        end
    end
    return 1
end
function __git_agent_apply_complete
    set -l args (__git_agent_apply_args); or return
    COMPLETE=fish git-agent-apply -- git-agent-apply $args (commandline --current-token)
end
complete --command git --no-files --keep-order --condition '__git_agent_apply_args >/dev/null' --arguments '(__git_agent_apply_complete)'
complete --command git --no-files --condition 'functions -q __fish_git_needs_command; and __fish_git_needs_command' --arguments agent-apply --description "Apply a language model's code edits"
"#;
