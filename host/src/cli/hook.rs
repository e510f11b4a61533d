//! `git agent-apply hook install|uninstall`: a `pre-commit` hook that runs
//! `git agent-apply lint --staged`, chained with any hook already there.
//!
//! A shell hook gets a delimited block right after its `#!` line; any other
//! hook is moved aside to `pre-commit.agent-apply-orig` and called from a
//! small wrapper. `uninstall` removes only what `install` added, so the
//! original hook comes back byte for byte.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{CommandError, Exit, GlobalArgs};

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    action: HookAction,
}

#[derive(Debug, Subcommand)]
enum HookAction {
    /// Install the pre-commit hook (chained with an existing one).
    Install,
    /// Remove the hook's part, restoring any original hook.
    Uninstall,
}

const BEGIN: &str = "# >>> git agent-apply hook >>>";
/// The begin line when install created the file (uninstall deletes it).
const BEGIN_CREATED: &str = "# >>> git agent-apply hook (created this file) >>>";
/// The begin line of the wrapper that calls a moved-aside hook.
const BEGIN_WRAPPER: &str = "# >>> git agent-apply hook (original moved to pre-commit.agent-apply-orig) >>>";
const END: &str = "# <<< git agent-apply hook <<<";
const MOVED: &str = "pre-commit.agent-apply-orig";

pub fn run(global: &GlobalArgs, args: &HookArgs) -> Result<Exit, CommandError> {
    let start = global.repo.clone().unwrap_or_else(|| PathBuf::from("."));
    let repo = crate::transaction::discover_repository(&start).map_err(|e| {
        CommandError::usage(format!("hooks need a git repository: {}", e.message()))
            .hint("run it inside a repository, or pass --repo DIR")
    })?;
    let dir = hooks_dir(&repo)?;
    let hook = dir.join("pre-commit");
    match args.action {
        HookAction::Install => install(&dir, &hook),
        HookAction::Uninstall => uninstall(&dir, &hook),
    }
}

/// `core.hooksPath` (relative to the working tree root) or `.git/hooks`.
fn hooks_dir(repo: &git2::Repository) -> Result<PathBuf, CommandError> {
    let configured = repo.config().ok().and_then(|c| c.get_path("core.hooksPath").ok());
    Ok(match configured {
        Some(path) if path.is_absolute() => path,
        Some(path) => repo.workdir().unwrap_or_else(|| repo.path()).join(path),
        None => repo.commondir().join("hooks"),
    })
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> CommandError {
    CommandError::usage(format!("cannot {what} {}: {e}", path.display()))
}

/// The lines that run the lint: the binary that installed the hook, or
/// `git agent-apply` when that binary is gone.
fn lint_lines() -> String {
    let fallback = "git agent-apply lint --staged || exit 1";
    match std::env::current_exe().ok().and_then(|p| p.to_str().map(str::to_string)) {
        Some(exe) => {
            let quoted = format!("'{}'", exe.replace('\'', r"'\''"));
            format!(
                "# Stops edit-format leftovers and merge-conflict markers in staged files.\n\
                 if [ -x {quoted} ]; then {quoted} lint --staged || exit 1; else {fallback}; fi\n"
            )
        }
        None => format!("# Stops edit-format leftovers and merge-conflict markers in staged files.\n{fallback}\n"),
    }
}

fn is_shell(first_line: &str) -> bool {
    let line = first_line.trim_end();
    let Some(interpreter) = line.strip_prefix("#!") else { return false };
    let mut words = interpreter.split_whitespace();
    let program = words.next().unwrap_or("");
    let program = if program.ends_with("/env") { words.next().unwrap_or("") } else { program };
    let name = program.rsplit('/').next().unwrap_or("");
    matches!(name, "sh" | "bash" | "dash" | "zsh" | "ksh")
}

fn install(dir: &Path, hook: &Path) -> Result<Exit, CommandError> {
    std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
    let existing = match std::fs::read(hook) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error("read", hook, e)),
    };
    let lint = lint_lines();
    let (content, how) = match existing {
        Some(bytes) if String::from_utf8_lossy(&bytes).contains(END) => {
            println!("the agent-apply pre-commit hook is already installed in {}", hook.display());
            return Ok(Exit::Ok);
        }
        None => (format!("#!/bin/sh\n{BEGIN_CREATED}\n{lint}{END}\n").into_bytes(), "installed".to_string()),
        Some(bytes) => {
            let first_end = bytes.iter().position(|&b| b == b'\n');
            match first_end {
                Some(at) if is_shell(&String::from_utf8_lossy(&bytes[..at])) => {
                    let mut content = bytes[..=at].to_vec();
                    content.extend_from_slice(format!("{BEGIN}\n{lint}{END}\n").as_bytes());
                    content.extend_from_slice(&bytes[at + 1..]);
                    (content, "added to the existing hook (it runs first)".to_string())
                }
                _ => {
                    let moved = dir.join(MOVED);
                    if moved.exists() {
                        return Err(CommandError::usage(format!(
                            "{} already exists; cannot move the existing hook aside",
                            moved.display()
                        ))
                        .hint("remove or rename it, then run `git agent-apply hook install` again"));
                    }
                    std::fs::rename(hook, &moved).map_err(|e| io_error("move aside", hook, e))?;
                    (
                        format!("#!/bin/sh\n{BEGIN_WRAPPER}\n{lint}{END}\nexec \"$(dirname \"$0\")/{MOVED}\" \"$@\"\n")
                            .into_bytes(),
                        format!("installed; the existing hook was moved to {MOVED} and still runs after the lint"),
                    )
                }
            }
        }
    };
    write_executable(hook, &content)?;
    println!("pre-commit hook {how}: {}", hook.display());
    Ok(Exit::Ok)
}

fn write_executable(path: &Path, content: &[u8]) -> Result<(), CommandError> {
    let existing_mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    std::fs::write(path, content).map_err(|e| io_error("write", path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // An executable hook keeps its mode, so uninstall leaves it as it was.
        let mode = existing_mode.map_or(0o755, |p| if p.mode() & 0o100 != 0 { p.mode() } else { p.mode() | 0o111 });
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io_error("chmod", path, e))?;
    }
    #[cfg(not(unix))]
    let _ = existing_mode;
    Ok(())
}

fn uninstall(dir: &Path, hook: &Path) -> Result<Exit, CommandError> {
    let bytes = match std::fs::read(hook) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("no pre-commit hook in {}", dir.display());
            return Ok(Exit::Ok);
        }
        Err(e) => return Err(io_error("read", hook, e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some((start, end)) = block(&bytes) else {
        println!("the agent-apply hook is not installed in {}", hook.display());
        return Ok(Exit::Ok);
    };
    let begin_line = text[start..].lines().next().unwrap_or("");
    if begin_line == BEGIN_WRAPPER {
        let moved = dir.join(MOVED);
        if moved.exists() {
            std::fs::rename(&moved, hook).map_err(|e| io_error("restore", &moved, e))?;
            println!("removed the agent-apply hook; restored the original {}", hook.display());
        } else {
            std::fs::remove_file(hook).map_err(|e| io_error("remove", hook, e))?;
            println!("removed the agent-apply hook {}", hook.display());
        }
        return Ok(Exit::Ok);
    }
    let mut rest = bytes[..start].to_vec();
    rest.extend_from_slice(&bytes[end..]);
    if begin_line == BEGIN_CREATED && rest == b"#!/bin/sh\n" {
        std::fs::remove_file(hook).map_err(|e| io_error("remove", hook, e))?;
        println!("removed the agent-apply hook {}", hook.display());
    } else {
        // Rewrite in place: the file keeps its permissions.
        std::fs::write(hook, &rest).map_err(|e| io_error("write", hook, e))?;
        println!("removed the agent-apply block from {}", hook.display());
    }
    Ok(Exit::Ok)
}

/// Byte range of the block, from its begin line to just past its end line.
fn block(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut at = 0;
    let mut start = None;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        if start.is_none() && [BEGIN, BEGIN_CREATED, BEGIN_WRAPPER].contains(&text) {
            start = Some(at);
        } else if start.is_some() && text == END {
            return start.map(|s| (s, at + line.len()));
        }
        at += line.len();
    }
    None
}
