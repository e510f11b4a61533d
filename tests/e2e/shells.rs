//! zsh and fish completing `git agent-apply`: the scripts `setup`
//! installs, loaded the way each shell loads them (zsh through git's own
//! completion and fpath, fish through its vendor directories), run by the
//! real shells against the real binary. A subcommand, a flag and a format
//! name (a configured plugin's too) must complete.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::common::OPS_JSON_WASM;
use crate::pty::OnTerminal;
use crate::repo::TestRepo;
use crate::terminal::{on_path, path_with_bin, setup};

/// Installations are one at a time: apt-get holds a lock.
static INSTALLING: Mutex<()> = Mutex::new(());

/// Whether `program` can be run, installing `package` with apt-get if it
/// is missing (as root, or through `sudo -n`). False, after saying why,
/// only when that is impossible here.
fn shell_available(program: &str, package: &str) -> bool {
    installed(program, package, || on_path(program))
}

/// Whether `present()` holds, installing `package` first if it does not.
fn installed(what: &str, package: &str, present: impl Fn() -> bool) -> bool {
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if present() {
        return true;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let apt = |args: &[&str]| {
        let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            command.args(["-n", "apt-get"]);
        }
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive").output().is_ok_and(|o| o.status.success())
    };
    // An image with no package lists needs an update before the install.
    if !apt(&["install", "-y", "-q", package]) && apt(&["update", "-q"]) {
        apt(&["install", "-y", "-q", package]);
    }
    if present() {
        return true;
    }
    eprintln!("SKIPPED: {what} is not installed and `apt-get install {package}` was not possible here");
    false
}

/// A repository whose config adds the plugin `my-ops`, and a HOME that
/// `setup` installed the completions into.
fn repo_and_home() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::with(&[]);
    std::fs::write(repo.path().join(".agent-apply.toml"), format!("[plugins.my-ops]\npath = {OPS_JSON_WASM:?}\n"))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    setup(home.path());
    (repo, home)
}

/// What zsh's completion offers for `line` typed at an interactive zsh in
/// `dir`, with compinit, git's own zsh completion and the installed
/// `_git-agent-apply` on fpath: every match it adds is written to a file
/// (compadd wrapped), and the shell exits once the completion is done.
fn zsh_completes(home: &Path, dir: &Path, line: &str) -> Vec<String> {
    let zdotdir = home.join("zdotdir");
    std::fs::create_dir_all(&zdotdir).unwrap();
    let capture = home.join("zsh-matches");
    let _ = std::fs::remove_file(&capture);
    // The system's zshrc could bind keys or start its own completion first.
    std::fs::write(zdotdir.join(".zshenv"), "unsetopt global_rcs\n").unwrap();
    let site_functions = home.join(".local/share/zsh/site-functions");
    std::fs::write(zdotdir.join(".zshrc"), ZSHRC.replace("SITE_FUNCTIONS", &site_functions.display().to_string()))
        .unwrap();
    let mut zsh = Command::new("zsh");
    zsh.arg("-i").current_dir(dir).env("ZDOTDIR", &zdotdir).env("CAPTURE", &capture).env("TERM", "vt100");
    shell_env(&mut zsh, home);
    let mut terminal = OnTerminal::spawn(zsh);
    assert!(terminal.wait_for("READY%"), "zsh never showed its prompt: {:?}", terminal.seen);
    terminal.type_keys(format!("{line}\t").as_bytes());
    let (_, seen) = terminal.finish();
    let matches = std::fs::read_to_string(&capture).unwrap_or_default();
    let mut lines: Vec<String> = matches.lines().map(str::to_string).collect();
    assert_eq!(lines.pop().as_deref(), Some("--done--"), "the completion never finished; zsh showed:\n{seen}");
    lines
}

/// The zshrc of the harness: compinit with the installed function first on
/// fpath, Tab bound to completion, and compadd wrapped to record matches.
const ZSHRC: &str = r#"PS1='READY%% '
fpath=(SITE_FUNCTIONS $fpath)
autoload -Uz compinit && compinit -u -D
bindkey '^I' complete-word
# compadd calls that only compute (-O, -A, -D: matches into an array) are
# helpers' own; the others add matches, which are recorded, then added.
compadd() {
    local -a opts=("${@[1,(i)(-|--)]}") recorded
    if (( ${opts[(Ie)-O]} || ${opts[(Ie)-A]} || ${opts[(Ie)-D]} )); then
        builtin compadd "$@"
        return
    fi
    builtin compadd -O recorded "$@"
    (( $#recorded )) && print -rl -- $recorded >> $CAPTURE
    builtin compadd "$@"
}
_harness_done() { print -r -- --done-- >> $CAPTURE; exit }
comppostfuncs=(_harness_done)
"#;

/// HOME, PATH with the binary under test, and no user config.
fn shell_env(command: &mut Command, home: &Path) {
    command
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env("PATH", path_with_bin())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml");
}

#[test]
fn zsh_completes_subcommands_flags_and_formats_under_git() {
    if !shell_available("zsh", "zsh") {
        return;
    }
    let (repo, home) = repo_and_home();
    let complete = |line: &str| zsh_completes(home.path(), repo.path(), line);

    // git's completion lists the command itself, from the _git-* file on fpath.
    assert!(complete("git agent-ap").contains(&"agent-apply".to_string()), "no agent-apply among git's commands");
    let commands = complete("git agent-apply form");
    assert_eq!(commands, ["formats"]);
    let flags = complete("git agent-apply --dry");
    assert_eq!(flags, ["--dry-run"]);
    let formats = complete("git agent-apply --format ");
    for name in ["editblock", "udiff", "my-ops", "auto"] {
        assert!(formats.contains(&name.to_string()), "{name} not offered: {formats:?}");
    }
    assert_eq!(complete("git agent-apply parse --format my-"), ["my-ops"]);
    // The same function completes the command typed as git-agent-apply.
    assert_eq!(complete("git-agent-apply formats --js"), ["--json"]);
}

/// What fish completes for `line` in `dir` (`complete -C`, as the Tab key
/// asks it), with HOME holding what `setup` installed: the values, without
/// their descriptions.
fn fish_completes(home: &Path, dir: &Path, line: &str) -> Vec<String> {
    let mut fish = Command::new("fish");
    fish.args(["-c", "complete -C $argv[1]", line]).current_dir(dir);
    shell_env(&mut fish, home);
    let output = fish.output().unwrap();
    assert!(output.status.success(), "fish failed: {}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.trim().is_empty(), "fish complained while completing {line:?}:\n{stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout.lines().map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

#[test]
fn fish_completes_subcommands_flags_and_formats_under_git() {
    if !shell_available("fish", "fish") {
        return;
    }
    let (repo, home) = repo_and_home();
    let complete = |line: &str| fish_completes(home.path(), repo.path(), line);

    assert!(complete("git agent-ap").contains(&"agent-apply".to_string()), "no agent-apply among git's commands");
    assert_eq!(complete("git agent-apply form"), ["formats"]);
    assert_eq!(complete("git agent-apply --for"), ["--format"]);
    assert_eq!(complete("git agent-apply --dry"), ["--dry-run"]);
    let formats = complete("git agent-apply --format ");
    for name in ["editblock", "udiff", "my-ops", "auto"] {
        assert!(formats.contains(&name.to_string()), "{name} not offered: {formats:?}");
    }
    // git's own options before the subcommand are skipped.
    assert_eq!(complete("git -C . agent-apply parse --format my-"), ["my-ops"]);
    // Other git commands keep git's own completion.
    assert!(complete("git chec").contains(&"checkout".to_string()));
    // The command typed as git-agent-apply completes through its own file.
    assert_eq!(complete("git-agent-apply formats --js"), ["--json"]);
}

/// Where `setup` put the zsh and fish files is where those shells look:
/// fish's own idea of its vendor directories, zsh's `#compdef` header.
#[test]
fn setup_puts_the_zsh_and_fish_files_where_the_shells_look() {
    let home = tempfile::tempdir().unwrap();
    setup(home.path());
    let share: PathBuf = home.path().join(".local/share");
    let zsh = std::fs::read_to_string(share.join("zsh/site-functions/_git-agent-apply")).unwrap();
    assert!(zsh.starts_with("#compdef git-agent-apply\n#description "), "{zsh}");
    if !shell_available("fish", "fish") {
        return;
    }
    let mut fish = Command::new("fish");
    fish.args(["-c", "printf '%s\\n' $__fish_vendor_completionsdirs $__fish_vendor_confdirs"]);
    shell_env(&mut fish, home.path());
    let dirs = String::from_utf8(fish.output().unwrap().stdout).unwrap();
    for dir in ["fish/vendor_completions.d", "fish/vendor_conf.d"] {
        let installed = share.join(dir);
        assert!(installed.join("git-agent-apply.fish").is_file(), "nothing in {}", installed.display());
        assert!(
            dirs.lines().any(|d| Path::new(d) == installed),
            "fish does not look in {}: {dirs}",
            installed.display()
        );
    }
}

/// bash finds the installed file by itself: git's completion asks
/// bash-completion's loader for `git-agent-apply` the first time
/// `git agent-apply` is completed, and the loader looks in the user's
/// ~/.local/share/bash-completion/completions (nothing is sourced by hand,
/// unlike `terminal::bash_completes_subcommands_flags_and_formats_under_git`).
#[test]
fn bash_completion_loads_the_installed_file_for_git() {
    const LOADER: &str = "/usr/share/bash-completion/bash_completion";
    if !installed("bash-completion", "bash-completion", || Path::new(LOADER).is_file()) {
        return;
    }
    let (repo, home) = repo_and_home();
    let script = format!(
        r#"source {LOADER}
# What a first Tab after `git` does (renamed in bash-completion 2.12).
_comp_load git 2>/dev/null || __load_completion git
COMP_WORDS=(git agent-apply --format my-); COMP_CWORD=3
COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}
__git_wrap__git_main
printf '%s\n' "${{COMPREPLY[@]}}"
"#
    );
    let mut bash = Command::new("bash");
    bash.args(["--norc", "--noprofile", "-c", &script]).current_dir(repo.path());
    shell_env(&mut bash, home.path());
    let output = bash.output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout, "my-ops\n", "stderr: {}", String::from_utf8_lossy(&output.stderr));
}
