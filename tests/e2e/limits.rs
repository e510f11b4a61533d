//! Input limits through the real binary: each limit, and each kind of input
//! that is not text, is refused with a message that says what was over which
//! limit and which `[limits]` key raises it, and the repository is left
//! byte-identical (HEAD, index, working tree, objects).

use crate::repo::{TestRepo, whole_reply};

/// A repository whose `.agent-apply.toml` sets `limits` under `[limits]`,
/// holding `files` (raw bytes) committed.
fn repo_with_limits(limits: &str, files: &[(&str, &[u8])]) -> TestRepo {
    let repo = TestRepo::with(&[(".agent-apply.toml", &format!("[limits]\n{limits}\n"))]);
    for (path, bytes) in files {
        std::fs::write(repo.path().join(path), bytes).unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "files"]);
    repo
}

/// Run `apply --format whole` with `reply`; assert the exit code and that
/// nothing changed; return stdout and stderr.
fn refused(repo: &TestRepo, reply: impl Into<Vec<u8>>, code: i32) -> (String, String) {
    let before = repo.state();
    let out = repo.apply().args(["--format", "whole", "-"]).write_stdin(reply.into()).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(repo.state(), before, "nothing may be written");
    (stdout.into_owned(), stderr.into_owned())
}

#[test]
fn a_reply_over_max_reply_bytes_is_refused_before_parsing() {
    let repo = repo_with_limits("max-reply-bytes = 100", &[("a.txt", b"a\n")]);
    let (_, stderr) = refused(&repo, whole_reply(&[("a.txt", &"x\n".repeat(100))]), 2);
    assert_eq!(
        stderr,
        "error: the reply is larger than the 100-byte limit; nothing was read past it\n\
         hint: nothing was changed; if this input is legitimate, raise `max-reply-bytes` under [limits] in .agent-apply.toml\n"
    );
}

#[test]
fn a_reply_with_more_than_max_edits_is_refused_before_applying() {
    let repo = repo_with_limits("max-edits = 2", &[("a.txt", b"a\n")]);
    let reply = whole_reply(&[("a.txt", "1\n"), ("b.txt", "2\n"), ("c.txt", "3\n")]);
    let (_, stderr) = refused(&repo, reply, 2);
    assert_eq!(
        stderr,
        "error: the reply holds 3 edits, over the limit of 2 per reply\n\
         hint: nothing was changed; if this input is legitimate, raise `max-edits` under [limits] in .agent-apply.toml\n"
    );
}

#[test]
fn a_reply_line_over_max_line_bytes_is_refused_before_parsing() {
    let repo = repo_with_limits("max-line-bytes = 20", &[("a.txt", b"a\n")]);
    let (_, stderr) = refused(&repo, whole_reply(&[("a.txt", &format!("{}\n", "y".repeat(30)))]), 2);
    assert_eq!(
        stderr,
        "error: line 3 of the reply is 30 bytes long, over the 20-byte line limit\n\
         hint: nothing was changed; if this input is legitimate, raise `max-line-bytes` under [limits] in .agent-apply.toml\n"
    );
}

#[test]
fn a_target_file_line_over_max_line_bytes_is_refused_with_the_key_to_raise() {
    let long = format!("{}\n", "z".repeat(30));
    let repo = repo_with_limits("max-line-bytes = 20", &[("wide.txt", long.as_bytes())]);
    let (stdout, _) = refused(&repo, whole_reply(&[("wide.txt", "short\n")]), 1);
    assert!(stdout.contains("line 1 of wide.txt is 30 bytes long, over the 20-byte line limit"), "{stdout}");
    assert!(stdout.contains("raise `max-line-bytes` under [limits]"), "{stdout}");
}

#[test]
fn a_target_file_over_max_file_bytes_is_refused_with_the_key_to_raise() {
    let repo = repo_with_limits("max-file-bytes = 100", &[("big.txt", "b\n".repeat(100).as_bytes())]);
    let (stdout, _) = refused(&repo, whole_reply(&[("big.txt", "small\n")]), 1);
    assert!(stdout.contains("big.txt is 200 bytes, over the 100-byte limit for edited files"), "{stdout}");
    assert!(stdout.contains("raise `max-file-bytes` under [limits]"), "{stdout}");
}

#[test]
fn a_reply_that_is_not_utf8_is_refused_with_the_byte_offset() {
    let repo = repo_with_limits("", &[("a.txt", b"a\n")]);
    let mut reply = b"a.txt\n```\nok\n".to_vec();
    reply.extend(b"\xc3\x28\n```\n");
    let (_, stderr) = refused(&repo, reply, 2);
    assert_eq!(
        stderr,
        "error: the reply is not valid UTF-8 (first bad byte at offset 13)\n\
         hint: nothing was changed; save the model's reply as UTF-8 text\n"
    );
}

#[test]
fn a_reply_with_a_nul_byte_is_refused_with_the_byte_offset() {
    let repo = repo_with_limits("", &[("a.txt", b"a\n")]);
    let (_, stderr) = refused(&repo, b"a.txt\n```\nx\0y\n```\n".to_vec(), 2);
    assert!(stderr.starts_with("error: the reply holds a NUL byte at offset 11; a reply must be text\n"), "{stderr}");
}

#[test]
fn a_target_file_that_is_not_utf8_is_refused_with_the_byte_offset() {
    let repo = repo_with_limits("", &[("latin1.txt", b"caf\xe9\n")]);
    let (stdout, _) = refused(&repo, whole_reply(&[("latin1.txt", "cafe\n")]), 1);
    assert!(stdout.contains("latin1.txt is not valid UTF-8 (first bad byte at offset 3)"), "{stdout}");
}

#[test]
fn a_binary_target_file_is_refused_with_the_offset_of_its_nul() {
    let repo = repo_with_limits("", &[("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")]);
    let (stdout, _) = refused(&repo, whole_reply(&[("image.png", "text\n")]), 1);
    assert!(stdout.contains("image.png looks binary (it holds a NUL byte at offset 8)"), "{stdout}");
}

#[test]
fn read_refuses_a_file_over_max_file_bytes_or_max_line_bytes_with_the_key_to_raise() {
    let long = format!("{}\n", "z".repeat(30));
    let repo = repo_with_limits(
        "max-file-bytes = 100\nmax-line-bytes = 20",
        &[("big.txt", "b\n".repeat(100).as_bytes()), ("wide.txt", long.as_bytes()), ("ok.txt", b"fine\n")],
    );
    for (path, message, key) in [
        ("big.txt", "big.txt is 200 bytes, over the 100-byte limit", "max-file-bytes"),
        ("wide.txt", "line 1 of wide.txt is 30 bytes long, over the 20-byte line limit", "max-line-bytes"),
    ] {
        let out = repo.apply().args(["read", "--format", "hashline", path]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with(&format!("error: {message}")), "{stderr}");
        assert!(stderr.contains(&format!("raise `{key}` under [limits]")), "{stderr}");
    }
    repo.apply().args(["read", "--format", "hashline", "ok.txt"]).assert().success();
}

#[test]
fn lint_skips_files_over_the_limits_and_says_why_in_the_working_tree_and_staged() {
    let long = format!("{}\n", "z".repeat(30));
    let repo = repo_with_limits("max-file-bytes = 100\nmax-line-bytes = 20", &[("ok.txt", b"fine\n")]);
    // Leftovers a lint would report, if it read these files.
    let big = format!("<<<<<<< HEAD\n{}", "b\n".repeat(100));
    repo.write("big.txt", &big);
    repo.write("wide.txt", &format!("<<<<<<< HEAD\n{long}"));
    repo.git(&["add", "big.txt", "wide.txt"]);
    for staged in [false, true] {
        let mut command = repo.apply();
        command.args(["lint", "--json"]);
        if staged {
            command.arg("--staged");
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        let report: serde_json::Value = crate::common::report_json(&out.stdout);
        let skipped = report["skipped"].as_array().unwrap();
        let reason = |path: &str| skipped.iter().find(|s| s["path"] == path).map(|s| s["reason"].clone());
        assert_eq!(reason("big.txt").unwrap(), "213 bytes, over max-file-bytes (100)", "staged: {staged}");
        assert_eq!(reason("wide.txt").unwrap(), "line 2 is over max-line-bytes (20)", "staged: {staged}");
    }
}

/// An agent harness gets, for each reply over a limit, a JSON error with a
/// reflection telling the model what to send instead.
#[test]
fn with_json_a_reply_over_a_limit_gets_a_reflection_for_the_model() {
    let repo = repo_with_limits("max-edits = 2\nmax-reply-bytes = 400\nmax-line-bytes = 40", &[("a.txt", b"a\n")]);
    let cases: [(Vec<u8>, &str); 4] = [
        (
            whole_reply(&[("a.txt", "1\n"), ("b.txt", "2\n"), ("c.txt", "3\n")]).into_bytes(),
            "Your reply holds 3 edits; at most 2 are accepted in one reply. \
             Send the edits again in replies of at most 2 edits each.\nNone of your edits were applied.\n",
        ),
        (whole_reply(&[("a.txt", &"x\n".repeat(300))]).into_bytes(), "longer than the 400 bytes"),
        (whole_reply(&[("a.txt", &format!("{}\n", "y".repeat(50)))]).into_bytes(), "Line 3 of your reply is 50 bytes"),
        (b"a.txt\n```\nx\0y\n```\n".to_vec(), "bytes that are not text (at byte 11)"),
    ];
    for (reply, reflection) in cases {
        let before = repo.state();
        let out = repo.apply().args(["--format", "whole", "--json", "-"]).write_stdin(reply).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let report = crate::common::report_json(&out.stdout);
        assert_eq!(report["status"], "error");
        let text = report["reflection"].as_str().unwrap();
        assert!(text.contains(reflection) && text.ends_with("None of your edits were applied.\n"), "{text}");
        assert_eq!(repo.state(), before, "nothing may be written");
    }
}

/// A repository configured to load the hostile plugin under `limits`.
fn hostile_repo(limits: &str) -> TestRepo {
    let config = format!("[plugins.hostile]\npath = {:?}\n", crate::common::HOSTILE_WASM);
    repo_with_limits(&format!("{limits}\n{config}"), &[("a.txt", b"a\n")])
}

/// A plugin past `plugin-timeout-ms` is stopped, in `parse` and in
/// `detect` (auto-detection asks the formats side by side, on threads of
/// their own where there are cores: the reply holds `whole`'s hints too).
#[test]
fn a_plugin_over_plugin_timeout_ms_is_stopped_and_nothing_is_written() {
    let repo = hostile_repo("plugin-timeout-ms = 200");
    let before = repo.state();
    for (args, reply, call) in
        [(&["--format", "hostile"][..], "loop", "parse"), (&[], "detect:loop\n```\nx\n```\n", "detect")]
    {
        let out = repo.apply().args(args).arg("-").write_stdin(reply).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let error = format!("error: plugin 'hostile' ran past its time limit of 200 ms in `{call}` and was stopped\n");
        assert!(stderr.starts_with(&error), "{stderr}");
        assert!(stderr.contains("raise `plugin-timeout-ms` under [limits]"), "{stderr}");
        assert_eq!(repo.state(), before);
    }
}

/// In the CLI a plugin's code carries no time checks: one past its time
/// ends the process from its timer's signal handler. What that prints, on
/// which stream, and the exit code are what the library reports for the
/// same call stopped by a trap (text and JSON), and nothing is written.
#[test]
fn a_plugin_past_its_time_ends_the_run_with_the_report_of_a_trapped_call() {
    use agent_apply::cli::CommandError;
    use std::time::{Duration, Instant};

    let limits = crate::common::tight_limits();
    let trapped = crate::common::hostile(&crate::common::shared_cache(), limits)
        .instantiate()
        .unwrap()
        .parse("loop", &[])
        .unwrap_err();
    for json in [false, true] {
        let repo = hostile_repo(&format!("plugin-timeout-ms = {}", limits.timeout.as_millis()));
        let before = repo.state();
        let mut command = repo.apply();
        if json {
            command.arg("--json");
        }
        let started = Instant::now();
        let out = command.args(["--format", "hostile", "-"]).write_stdin("loop").output().unwrap();
        let took = started.elapsed();
        let expected = CommandError::from(agent_apply::Error::Plugin(trapped.clone())).exit_report(json);
        let (written, other) = if json { (&out.stdout, &out.stderr) } else { (&out.stderr, &out.stdout) };
        let expected_text = anstream::adapter::strip_str(std::str::from_utf8(&expected.text).unwrap()).to_string();
        assert_eq!(String::from_utf8_lossy(written), expected_text, "json: {json}");
        assert!(other.is_empty(), "json: {json}: {}", String::from_utf8_lossy(other));
        assert_eq!(out.status.code(), Some(i32::from(expected.code)));
        assert!(took >= limits.timeout && took < Duration::from_secs(10), "{took:?}");
        assert_eq!(repo.state(), before);
    }
}

#[test]
fn a_plugin_over_plugin_memory_mib_is_stopped_and_nothing_is_written() {
    let repo = hostile_repo("plugin-memory-mib = 64\nplugin-timeout-ms = 30000");
    let before = repo.state();
    let out = repo.apply().args(["--format", "hostile", "-"]).write_stdin("alloc").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: plugin 'hostile' tried to use more than its memory limit of 64 MiB in `parse` and was stopped\n"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("raise `plugin-memory-mib` under [limits]"), "{stderr}");
    assert_eq!(repo.state(), before);
}
