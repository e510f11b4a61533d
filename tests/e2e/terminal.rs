//! At the terminal: `setup` then `git agent-apply --help` opening the manual,
//! completion under git's own bash completion, and the messages a person
//! typing (or mistyping) gets.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_apply::style::ERROR;

use crate::common::{OPS_JSON_WASM, bin};
use crate::pty::OnTerminal;
use crate::repo::{TestRepo, whole_reply};

/// The directory of the binary under test, for PATH: git finds
/// `git-agent-apply` there, as the completion scripts do.
fn bin_dir() -> PathBuf {
    crate::common::binary_path().parent().unwrap().to_path_buf()
}

pub(crate) fn path_with_bin() -> std::ffi::OsString {
    let mut dirs = vec![bin_dir()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap()
}

/// `setup` into `home`; returns where the files went.
pub(crate) fn setup(home: &Path) -> String {
    let output = bin().env("HOME", home).env_remove("XDG_DATA_HOME").arg("setup").assert().success();
    String::from_utf8(output.get_output().stdout.clone()).unwrap()
}

pub(crate) fn on_path(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

#[test]
fn setup_installs_the_manual_that_git_help_opens() {
    let home = tempfile::tempdir().unwrap();
    let listed = setup(home.path());
    let share = home.path().join(".local/share");
    for file in [
        "man/man1/git-agent-apply.1",
        "bash-completion/completions/git-agent-apply",
        "zsh/site-functions/_git-agent-apply",
        "fish/vendor_completions.d/git-agent-apply.fish",
    ] {
        assert!(share.join(file).is_file(), "{file} missing; setup said:\n{listed}");
        assert!(listed.contains(&share.join(file).display().to_string()), "{listed}");
    }
    if !on_path("man") {
        eprintln!("SKIPPED: `man` is not installed (apt-get install man-db), so `--help` cannot open the manual");
        return;
    }
    let output = Command::new("git")
        .args(["agent-apply", "--help"])
        .env("HOME", home.path())
        .env("PATH", path_with_bin())
        .env("MANPATH", share.join("man"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    let page = strip_overstrike(&String::from_utf8_lossy(&output.stdout));
    assert!(output.status.success(), "{page}\n{}", String::from_utf8_lossy(&output.stderr));
    for section in ["NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "FILES", "ENVIRONMENT", "EXAMPLES"] {
        assert!(page.contains(section), "no {section} in:\n{page}");
    }
    assert!(page.contains("git agent-apply formats"), "{page}");
    assert!(!page.contains("git-agent-apply-formats(1)"), "the page names pages that do not exist:\n{page}");
}

/// The text without man's bold and underline (`X\bX`, `_\bX`), which it
/// may write even into a pipe.
fn strip_overstrike(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{8}' {
            plain.pop();
            plain.extend(chars.next());
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn setup_print_writes_nothing_and_prefix_installs_under_it() {
    let home = tempfile::tempdir().unwrap();
    let printed = bin().env("HOME", home.path()).args(["setup", "--print"]).assert().success();
    let printed = String::from_utf8(printed.get_output().stdout.clone()).unwrap();
    assert!(printed.contains("man/man1/git-agent-apply.1"), "{printed}");
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none(), "--print wrote files");

    let prefix = home.path().join("pkg");
    bin().arg("setup").arg("--prefix").arg(&prefix).assert().success();
    assert!(prefix.join("share/man/man1/git-agent-apply.1").is_file());
    assert!(prefix.join("share/bash-completion/completions/git-agent-apply").is_file());
}

/// git's own bash completion script, which the git package installs.
fn git_completion_script() -> Option<&'static str> {
    ["/usr/share/bash-completion/completions/git", "/etc/bash_completion.d/git"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
}

/// What bash completes for `line` typed after `git `, with git's own
/// completion script and the installed one loaded, in `dir`.
fn complete_under_git(git_completion: &str, home: &Path, dir: &Path, line: &str) -> Vec<String> {
    let ours = home.join(".local/share/bash-completion/completions/git-agent-apply");
    let script = format!(
        r#"source {git_completion}
source {ours}
COMP_LINE="git {line}"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
__git_wrap__git_main
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        ours = ours.display()
    );
    let output = Command::new("bash")
        .args(["--norc", "-c", &script])
        .current_dir(dir)
        .env("HOME", home)
        .env("PATH", path_with_bin())
        .env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-test-config.toml")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(|l| l.trim().to_string()).collect()
}

#[test]
fn bash_completes_subcommands_flags_and_formats_under_git() {
    let Some(git_completion) = git_completion_script() else {
        eprintln!("SKIPPED: git's bash completion script is not installed (it comes with the git package)");
        return;
    };
    let complete_under_git = |home: &Path, dir: &Path, line: &str| complete_under_git(git_completion, home, dir, line);
    let home = tempfile::tempdir().unwrap();
    setup(home.path());
    let repo = TestRepo::with(&[]);
    std::fs::write(repo.path().join(".agent-apply.toml"), format!("[plugins.my-ops]\npath = {OPS_JSON_WASM:?}\n"))
        .unwrap();

    let commands = complete_under_git(home.path(), repo.path(), "agent-apply form");
    assert!(commands.contains(&"formats".to_string()), "{commands:?}");
    let flags = complete_under_git(home.path(), repo.path(), "agent-apply --dry");
    assert!(flags.contains(&"--dry-run".to_string()), "{flags:?}");
    let formats = complete_under_git(home.path(), repo.path(), "agent-apply --format ");
    for name in ["editblock", "udiff", "my-ops", "auto"] {
        assert!(formats.contains(&name.to_string()), "{name} not offered: {formats:?}");
    }
    let in_subcommand = complete_under_git(home.path(), repo.path(), "agent-apply parse --format editb");
    assert_eq!(in_subcommand, ["editblock"]);
}

#[test]
fn an_empty_reply_says_so() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply().write_stdin("  \n").assert().code(2).stderr(predicates::str::contains("the reply is empty"));
}

#[test]
fn a_misspelt_command_is_suggested_not_read_as_a_reply() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .arg("formts")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("did you mean the command `git agent-apply formats`?"));
}

#[test]
fn one_line_is_not_one_lines() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .write_stdin(whole_reply(&[("a.txt", "b\n")]))
        .assert()
        .success()
        .stdout(predicates::str::contains("(1 line)"));
}

#[test]
fn errors_are_plain_text_off_a_terminal() {
    // Tests capture stderr (not a terminal): no escape codes, with or without NO_COLOR.
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    for no_color in [false, true] {
        let mut command = repo.apply();
        if no_color {
            command.env("NO_COLOR", "1");
        }
        let output = command.arg("no-such-reply.md").output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.starts_with("error: cannot read the reply no-such-reply.md"), "{stderr:?}");
        assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    }
}

#[test]
fn at_a_terminal_stdin_says_how_to_paste_and_an_empty_paste_is_named() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let mut terminal = OnTerminal::spawn(repo.apply_process());
    assert!(terminal.wait_for("Ctrl-D"), "no paste hint: {:?}", terminal.seen);
    terminal.type_keys(b"\x04");
    let (code, seen) = terminal.finish();
    assert_eq!(code, Some(2), "{seen}");
    assert!(seen.contains("the reply is empty"), "{seen:?}");
    assert!(seen.contains(&in_style(ERROR, "error:")), "error: is in colour at a terminal: {seen:?}");
}

/// `text` as anstyle writes it in `style`.
fn in_style(style: anstyle::Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

#[test]
fn failed_is_in_colour_at_a_terminal_unless_no_color() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let reply = repo.path().join(".git/reply.md");
    std::fs::write(&reply, "a.txt\n```\n<<<<<<< SEARCH\nnot there\n=======\nb\n>>>>>>> REPLACE\n```\n").unwrap();
    let mut command = repo.apply_process();
    command.arg(&reply);
    let (code, seen) = OnTerminal::spawn(command).finish();
    assert_eq!(code, Some(1), "{seen}");
    assert!(seen.contains(&format!("edit 1 a.txt {} (not-found)", in_style(ERROR, "FAILED"))), "{seen:?}");

    let mut command = repo.apply_process();
    command.env("NO_COLOR", "1").arg(&reply);
    let (code, seen) = OnTerminal::spawn(command).finish();
    assert_eq!(code, Some(1), "{seen}");
    assert!(seen.contains("edit 1 a.txt FAILED (not-found)"), "{seen:?}");
    assert!(!seen.contains('\u{1b}'), "{seen:?}");

    // A failed check, and off a terminal: plain.
    let check = ["--check", "false"];
    let edit = whole_reply(&[("a.txt", "b\n")]);
    let mut command = repo.apply_process();
    command.args(check).arg("--dry-run").arg("-");
    let (code, seen) = OnTerminal::spawn_piping(command, edit.as_bytes()).finish();
    assert_eq!(code, Some(3), "{seen}");
    assert!(seen.contains(&format!("check `false` {}", in_style(ERROR, "FAILED"))), "{seen:?}");
    let out = repo.apply().args(check).write_stdin(edit).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("check `false` FAILED") && !stdout.contains('\u{1b}'), "{stdout:?}");
}

#[test]
fn no_color_is_honoured_at_a_terminal() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let mut command = repo.apply_process();
    command.env("NO_COLOR", "1").arg("no-such-reply.md");
    let (code, seen) = OnTerminal::spawn(command).finish();
    assert_eq!(code, Some(2), "{seen}");
    assert!(seen.contains("error: cannot read the reply"), "{seen:?}");
    assert!(!seen.contains('\u{1b}'), "{seen:?}");
}

#[test]
fn a_running_check_shows_its_name_and_time_at_a_terminal_but_not_under_json() {
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let reply = repo.path().join("reply.md");
    std::fs::write(&reply, whole_reply(&[("a.txt", "b\n")])).unwrap();
    std::fs::write(repo.path().join(".git/info/exclude"), "reply.md\n").unwrap();
    let check = ["--check", "sleep 1"];
    let mut command = repo.apply_process();
    command.args(check).arg(&reply);
    let mut terminal = OnTerminal::spawn(command);
    assert!(terminal.wait_for("running sleep 1 ("), "no status line: {:?}", terminal.seen);
    let (code, seen) = terminal.finish();
    assert_eq!(code, Some(0), "{seen}");

    std::fs::write(&reply, whole_reply(&[("a.txt", "c\n")])).unwrap();
    let mut command = repo.apply_process();
    command.args(check).args(["--json", "--dry-run"]).arg(&reply);
    let (code, seen) = OnTerminal::spawn(command).finish();
    assert_eq!(code, Some(0), "{seen}");
    assert!(seen.contains("\"checks\""), "{seen:?}");
    assert!(!seen.contains("running sleep"), "a status line under --json: {seen:?}");
}

#[test]
fn escape_codes_a_reply_holds_never_reach_a_pipe() {
    // The refusal quotes the reply's placeholder line, escape codes and all:
    // off a terminal they are stripped, whatever the report's own styling.
    let repo = TestRepo::with(&[("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n")]);
    let reply = whole_reply(&[("a.rs", "fn a() {}\n// ... existing code \u{1b}]0;owned\u{7}\u{1b}[2J ...\n")]);
    let out = repo.apply().arg("--format").arg("whole").write_stdin(reply).output().unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(stdout.contains("existing code"), "the refusal quotes the line: {stdout:?}");
    assert!(!stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'), "{stdout:?} {stderr:?}");
}

#[test]
fn a_report_of_a_thousand_edits_reaches_a_pipe_whole_in_order_and_without_escape_codes() {
    // The CLI writes a long report as it goes, 64 KiB at a time, rather than
    // whole: every line still arrives, in order, and the escape codes the
    // reply's lines hold (quoted in each message) are stripped in every
    // piece, wherever a piece ends.
    // A long path, named twice in each line: a report of several pieces
    // within the default limit of 1,000 edits.
    let count = 1000;
    let path = format!("{}a.txt", "deeply/nested/".repeat(8));
    let file: String = (0..count).map(|i| format!("line {i} \u{1b}[31mred\u{1b}[0m\n")).collect();
    let repo = TestRepo::with(&[(path.as_str(), &file)]);
    let reply: String = (0..count)
        .map(|i| {
            let line = format!("line {i} \u{1b}[31mred\u{1b}[0m\n");
            format!("{path}\n```\n<<<<<<< SEARCH\n{line}=======\nline {i} changed\n>>>>>>> REPLACE\n```\n\n")
        })
        .collect();
    let out = repo.apply().args(["--format", "editblock", "--no-commit"]).write_stdin(reply.clone()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.len() > 3 * (64 << 10), "a report of several pieces: {} bytes", stdout.len());
    assert!(!stdout.contains('\u{1b}'), "an escape code reached the pipe");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), count + 1, "{:?}", &lines[lines.len().saturating_sub(3)..]);
    for (i, line) in lines[..count].iter().enumerate() {
        let want = format!("edit {} {path}: block {} (reply line ", i + 1, i + 1);
        assert!(line.starts_with(&want), "line {i}: {line:?}");
    }
    assert_eq!(lines[count], format!("{path} was modified ({count} lines)"));

    // The JSON report and `parse` are written as they are made too.
    repo.git(&["checkout", "--", "."]);
    let (code, report) = crate::rebase::run(&repo, &["--format", "editblock", "--dry-run"], &reply);
    assert_eq!(code, 0, "{}", report["status"]);
    assert_eq!(report["edits"].as_array().map(Vec::len), Some(count), "{}", report["status"]);
    let out = repo.apply().args(["parse", "--format", "editblock", "-"]).write_stdin(reply).output().unwrap();
    let parsed = String::from_utf8(out.stdout).unwrap();
    let edit_lines = parsed.lines().filter(|l| l.starts_with("edit ")).count();
    assert_eq!(edit_lines, count, "{}", &parsed[..parsed.len().min(300)]);
    assert!(!parsed.contains('\u{1b}'));
}
