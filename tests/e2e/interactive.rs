//! `--interactive`: each edit's diff, a `git add -p` question on the
//! terminal, and one commit of the accepted edits, driven through a
//! pseudo-terminal as a person would; the rejected edits in the report.

use std::os::unix::process::CommandExt;

use agent_apply::pipeline::{self, ApplyOptions};
use agent_apply::report::ReportStatus;
use agent_apply::workspace::Workspace;

use crate::common::report_json;
use crate::pty::{OnTerminal, unstyled};
use crate::repo::TestRepo;

/// A SEARCH/REPLACE block turning `old` into `new` in `path`.
fn block(path: &str, old: &str, new: &str) -> String {
    format!("{path}\n```\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n\n")
}

fn repo() -> TestRepo {
    TestRepo::with(&[("a.txt", "one\ntwo\nthree\n"), ("b.txt", "alpha\nbeta\n")])
}

/// Answer each question as it comes: wait for `question`, type `keys`.
fn answer(terminal: &mut OnTerminal, dialogue: &[(&str, &str)]) {
    for (question, keys) in dialogue {
        terminal.read_until(question);
        terminal.type_keys(keys.as_bytes());
    }
}

/// The exit code and what the terminal showed, without styles.
fn finish(terminal: OnTerminal) -> (Option<i32>, String) {
    let (code, seen) = terminal.finish();
    (code, unstyled(&seen))
}

/// `git agent-apply --interactive` (and `args`) in `repo`, the reply piped
/// to it, the terminal its controlling one.
fn interactive(repo: &TestRepo, args: &[&str], reply: &str) -> OnTerminal {
    let mut command = repo.apply_process();
    command.arg("--interactive").args(args);
    OnTerminal::spawn_piping(command, reply.as_bytes())
}

/// The paths the last commit changed.
fn committed_paths(repo: &TestRepo) -> Vec<String> {
    repo.git(&["diff", "--name-only", "HEAD~1", "HEAD"]).lines().map(String::from).collect()
}

#[test]
fn accepting_one_edit_and_rejecting_another_commits_only_the_accepted_one() {
    let repo = repo();
    let reply = block("a.txt", "two", "TWO") + &block("b.txt", "beta", "BETA");
    // The reply comes on stdin, so the answers come from the terminal.
    let mut terminal = interactive(&repo, &[], &reply);
    answer(&mut terminal, &[("(1/2) Apply this edit", "y\n"), ("(2/2) Apply this edit", "n\n")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert!(seen.contains("edit 2 b.txt rejected: rejected by the user: not applied"), "{seen}");
    assert!(seen.contains("committed "), "{seen}");

    assert_eq!(committed_paths(&repo), ["a.txt"]);
    assert_eq!(repo.committed("a.txt").unwrap(), "one\nTWO\nthree\n");
    assert_eq!(repo.committed("b.txt").unwrap(), "alpha\nbeta\n");
    // The working tree and index are what git would have after committing
    // the accepted edit: clean, b.txt as it was.
    assert_eq!(repo.status(), "");
    assert_eq!(repo.read("b.txt").unwrap(), b"alpha\nbeta\n");
    assert_eq!(repo.read("a.txt").unwrap(), b"one\nTWO\nthree\n");
    repo.fsck();
}

#[test]
fn each_edit_is_shown_as_a_diff_on_top_of_the_accepted_ones() {
    let repo = repo();
    let reply = block("a.txt", "two", "TWO") + &block("a.txt", "TWO\nthree", "TWO\n3");
    std::fs::write(repo.path().join(".git/reply.md"), &reply).unwrap();
    let mut command = repo.apply_process();
    command.args(["--interactive", ".git/reply.md"]);
    // Here stdin is the terminal: the reply is a file.
    let mut terminal = OnTerminal::spawn(command);
    let first = unstyled(&terminal.read_until("(1/2) Apply this edit"));
    assert!(first.contains("edit 1 of the reply, a.txt (reply lines 3-7)"), "{first}");
    assert!(first.contains("--- a/a.txt") && first.contains("\n-two") && first.contains("\n+TWO"), "{first}");
    terminal.type_keys(b"y\n");
    let second = unstyled(&terminal.read_until("(2/2) Apply this edit"));
    // The second edit's text is the first one's: it is shown on top of it.
    assert!(second.contains("\n-three") && second.contains("\n+3"), "{second}");
    assert!(!second.contains("+TWO"), "the accepted edit is shown again: {second}");
    terminal.type_keys(b"y\n");
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert_eq!(repo.committed("a.txt").unwrap(), "one\nTWO\n3\n");
}

#[test]
fn an_edit_that_needs_a_rejected_one_says_so_and_fails_the_run_if_accepted() {
    let repo = repo();
    let before = repo.state();
    let reply = block("a.txt", "two", "TWO") + &block("a.txt", "TWO\nthree", "TWO\n3");
    let mut terminal = interactive(&repo, &[], &reply);
    answer(&mut terminal, &[("(1/2) Apply this edit", "n\n")]);
    let second = unstyled(&terminal.read_until("(2/2) Apply this edit"));
    assert!(second.contains("it no longer applies without the edits rejected before it"), "{second}");
    terminal.type_keys(b"y\n");
    // All or nothing still holds: the accepted edit fails, so nothing is written.
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(1), "{seen}");
    assert!(seen.contains("edit 2 a.txt FAILED (not-found)") && seen.contains("nothing was changed"), "{seen}");
    assert_eq!(repo.state(), before);
}

#[test]
fn q_quits_keeping_the_edits_accepted_before_it() {
    let repo = TestRepo::with(&[("a.txt", "one\n"), ("b.txt", "two\n"), ("c.txt", "three\n")]);
    let reply = block("a.txt", "one", "1") + &block("b.txt", "two", "2") + &block("c.txt", "three", "3");
    let mut terminal = interactive(&repo, &[], &reply);
    answer(&mut terminal, &[("(1/3) Apply this edit", "y\n"), ("(2/3) Apply this edit", "q\n")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert!(!seen.contains("(3/3)"), "asked after q: {seen}");
    assert!(seen.contains("edit 2 b.txt rejected") && seen.contains("edit 3 c.txt rejected"), "{seen}");
    assert_eq!(committed_paths(&repo), ["a.txt"]);
    assert_eq!(repo.status(), "");
}

#[test]
fn a_and_d_decide_the_later_edits_to_the_same_file() {
    let repo = repo();
    let reply = block("a.txt", "one", "1")
        + &block("b.txt", "alpha", "A")
        + &block("a.txt", "three", "3")
        + &block("b.txt", "beta", "B");
    let mut terminal = interactive(&repo, &[], &reply);
    // `a` on a.txt's first edit takes its second without asking; `d` on
    // b.txt's first leaves its second out without asking.
    answer(&mut terminal, &[("(1/4) Apply this edit", "a\n"), ("(2/4) Apply this edit", "d\n")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert!(!seen.contains("(3/4)") && !seen.contains("(4/4)"), "{seen}");
    assert_eq!(repo.committed("a.txt").unwrap(), "1\ntwo\n3\n");
    assert_eq!(repo.committed("b.txt").unwrap(), "alpha\nbeta\n");
    assert!(seen.contains("edit 2 b.txt rejected") && seen.contains("edit 4 b.txt rejected"), "{seen}");
    assert_eq!(repo.status(), "");
}

#[test]
fn question_mark_prints_the_help_and_asks_again() {
    let repo = repo();
    let mut terminal = interactive(&repo, &[], &block("a.txt", "one", "1"));
    answer(&mut terminal, &[("(1/1) Apply this edit", "?\n")]);
    let help = terminal.read_until("(1/1) Apply this edit");
    for line in ["y - apply this edit", "n - do not apply this edit", "q - quit;", "a - apply this edit and all later"]
    {
        assert!(help.contains(line), "{line:?} not in the help: {help}");
    }
    // A key that means nothing shows the help too, and asks again.
    terminal.type_keys(b"x\n");
    answer(
        &mut terminal,
        &[("d - do not apply this edit or any of the later edits", ""), ("(1/1) Apply this edit", "y\n")],
    );
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert_eq!(repo.committed("a.txt").unwrap(), "1\ntwo\nthree\n");
}

#[test]
fn rejecting_every_edit_changes_nothing_and_says_so() {
    let repo = repo();
    let before = repo.state();
    let reply = block("a.txt", "one", "1") + &block("b.txt", "beta", "B");
    let mut terminal = interactive(&repo, &[], &reply);
    // n, then the end of input (Ctrl-D), which quits as in `git add -p`.
    answer(&mut terminal, &[("(1/2) Apply this edit", "n\n"), ("(2/2) Apply this edit", "\x04")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert!(seen.contains("every edit that changes something was rejected: nothing was changed"), "{seen}");
    assert_eq!(repo.state(), before);
}

#[test]
fn with_partial_a_failing_edit_is_named_and_not_asked_about() {
    let repo = repo();
    let reply = block("a.txt", "no such line", "x") + &block("b.txt", "beta", "B");
    let mut terminal = interactive(&repo, &["--partial"], &reply);
    answer(&mut terminal, &[("(1/1) Apply this edit", "y\n")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(0), "{seen}");
    assert!(seen.contains("edit 1 of the reply, a.txt: FAILED (not-found)"), "{seen}");
    assert_eq!(committed_paths(&repo), ["b.txt"]);

    // Without --partial the reply does not apply at all: nothing is asked.
    let before = repo.state();
    let (code, seen) = finish(interactive(&repo, &[], &reply));
    assert_eq!(code, Some(1), "{seen}");
    assert!(seen.contains("nothing to review") && !seen.contains("Apply this edit"), "{seen}");
    assert_eq!(repo.state(), before);
}

#[test]
fn interactive_refuses_json_and_a_run_without_a_terminal() {
    let repo = repo();
    let reply = block("a.txt", "one", "1");
    let before = repo.state();
    let out = repo.apply().args(["--interactive", "--json"]).write_stdin(reply.as_str()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let value = report_json(&out.stdout);
    let message = value["error"]["message"].as_str().unwrap();
    assert!(message.contains("--interactive") && message.contains("--json"), "{value:#}");

    // No controlling terminal (a session of its own) and the reply on a pipe.
    let mut command = repo.apply_process();
    command.arg("--interactive");
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        command.pre_exec(|| if libc::setsid() < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
    }
    let out = assert_cmd::Command::from_std(command).write_stdin(reply.as_str()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--interactive needs a terminal to ask on"), "{stderr}");
    assert_eq!(repo.state(), before);
}

/// The library side, without a terminal: the report of a run with a
/// rejected edit, and of one with every edit rejected, as JSON that fits
/// the schema, and the reflection a model would get.
#[test]
fn rejected_edits_are_in_the_json_report_and_the_reflection() {
    let repo = repo();
    let reply = block("a.txt", "one", "1") + &block("b.txt", "beta", "B");
    let mut workspace = Workspace::open(repo.path()).unwrap();
    let prepared = pipeline::prepare(&mut workspace, reply.clone(), &ApplyOptions::default()).unwrap();
    assert_eq!(prepared.reviewable(), [0, 1]);
    let report = prepared.apply(&[1]).unwrap().report;
    assert_eq!(report.status, ReportStatus::Applied);
    let value = report_json(&serde_json::to_vec(&report).unwrap());
    assert_eq!(value["edits"][0]["status"], "applied");
    assert_eq!(value["edits"][1]["status"], "rejected");
    assert_eq!(value["edits"][1]["message"], "rejected by the user: not applied");
    assert!(report.reflection.contains("The user rejected edit 2 (to b.txt)"), "{}", report.reflection);
    assert_eq!(committed_paths(&repo), ["a.txt"]);

    let before = repo.state();
    let reply = block("a.txt", "two", "2") + &block("b.txt", "beta", "B");
    let mut workspace = Workspace::open(repo.path()).unwrap();
    let prepared = pipeline::prepare(&mut workspace, reply, &ApplyOptions::default()).unwrap();
    let report = prepared.apply(&[0, 1]).unwrap().report;
    assert_eq!(report.status, ReportStatus::Rejected);
    let value = report_json(&serde_json::to_vec(&report).unwrap());
    assert_eq!(value["status"], "rejected");
    assert_eq!(value["written"], false);
    assert!(report.reflection.contains("Nothing was changed"), "{}", report.reflection);
    assert_eq!(repo.state(), before);
}

#[test]
fn nothing_is_written_before_the_last_answer() {
    let repo = repo();
    let before = repo.state();
    let reply = block("a.txt", "one", "1") + &block("b.txt", "beta", "B");
    // Ctrl-C at the second question, after accepting the first: the run
    // dies and the repository is as it was.
    let mut terminal = interactive(&repo, &[], &reply);
    answer(&mut terminal, &[("(1/2) Apply this edit", "y\n"), ("(2/2) Apply this edit", "\x03")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, None, "not killed by the interrupt: {seen}");
    assert_eq!(repo.state(), before);

    // A file that changes while the person answers is not overwritten:
    // the run stops as a conflict and changes nothing.
    let mut terminal = interactive(&repo, &[], &reply);
    terminal.read_until("(1/2) Apply this edit");
    repo.write("a.txt", "changed meanwhile\n");
    let head = repo.head();
    terminal.type_keys(b"y\n");
    answer(&mut terminal, &[("(2/2) Apply this edit", "n\n")]);
    let (code, seen) = finish(terminal);
    assert_eq!(code, Some(4), "{seen}");
    assert!(seen.contains("a.txt changed while the edits were being applied; nothing was changed"), "{seen}");
    assert_eq!(repo.head(), head);
    assert_eq!(repo.read("a.txt").unwrap(), b"changed meanwhile\n");
}

/// What a person sees reviewing a two-edit reply, accepting the first and
/// rejecting the second: each edit's diff, the questions with the answers
/// the terminal echoes, and the summary. Colours off (NO_COLOR); the
/// repository's path and the commit id replaced, as in `snapshots.rs`.
#[test]
fn the_review_screen_of_a_two_edit_reply() {
    let repo = repo();
    let reply = block("a.txt", "two", "TWO") + &block("b.txt", "beta", "BETA");
    let mut command = repo.apply_process();
    command.env("NO_COLOR", "1").arg("--interactive");
    let mut terminal = OnTerminal::spawn_piping(command, reply.as_bytes());
    // The whole question is waited for, so the echoed answer follows it.
    let question = |n| format!("({n}/2) Apply this edit [y,n,q,a,d,?]? ");
    answer(&mut terminal, &[(question(1).as_str(), "y\n"), (question(2).as_str(), "n\n")]);
    let (code, seen) = terminal.finish();
    assert_eq!(code, Some(0), "{seen}");
    assert!(!seen.contains('\u{1b}'), "escape codes under NO_COLOR: {seen:?}");
    // The terminal ends lines with CR LF.
    let screen = crate::snapshots::stable(&repo, &seen.replace("\r\n", "\n"));
    insta::assert_snapshot!(screen);
}
