//! The real binary: formats, prompt, parse, read and apply --dry-run.

use predicates::prelude::*;
use serde_json::Value;

use crate::common::bin;
use crate::common::report_json as json;

/// `--json` is one option for every command, before or after its name;
/// a command without JSON output says so, as a JSON error.
#[test]
fn json_is_global_and_refused_where_there_is_none() {
    let before = bin().args(["--json", "formats"]).assert().success();
    assert!(json(&before.get_output().stdout)["formats"].is_array());
    let out = bin().args(["read", "--json", "--format", "whole", "a.txt"]).assert().code(2);
    let error = json(&out.get_output().stdout);
    assert_eq!(error["error"]["message"], "`read` does not print JSON");
    assert!(error["error"]["hints"][0].as_str().unwrap().contains("apply, parse, formats"));
}

#[test]
fn formats_json_lists_builtin_wasm_formats() {
    let cache = tempfile::tempdir().unwrap();
    let out = bin().env("AGENT_APPLY_CACHE_DIR", cache.path()).args(["formats", "--json"]).assert().success();
    let value: Value = crate::common::report_json(&out.get_output().stdout);
    let whole = value["formats"].as_array().unwrap().iter().find(|f| f["name"] == "whole").expect("whole listed");
    assert_eq!(whole["kind"], "wasm");
    assert_eq!(whole["source"], "builtin");
    assert_eq!(whole["aliases"][0], "whole-file");
    assert!(value["models"].as_array().unwrap().iter().any(|m| m["pattern"] == "claude-*"));
}

#[test]
fn prompt_prints_instructions_with_an_example() {
    bin()
        .args(["prompt", "whole"])
        .assert()
        .success()
        .stdout(predicate::str::contains("complete new contents").and(predicate::str::contains("For example:")));
}

#[test]
fn unknown_format_lists_every_valid_one_and_exits_2() {
    bin().args(["prompt", "nonsense"]).assert().code(2).stderr(
        predicate::str::contains("unknown format 'nonsense'").and(
            predicate::str::contains("valid formats: ")
                .and(predicate::str::contains("whole (or whole-file, wholefile)")),
        ),
    );
    let out = bin().args(["parse", "--json", "--format", "nonsense", "-"]).write_stdin("x").assert().code(2);
    let value = json(&out.get_output().stdout);
    assert_eq!(value["status"], "error");
    assert!(value["error"]["hints"][0].as_str().unwrap().contains("whole"));
}

#[test]
fn parse_reports_edits_and_reply_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["parse", "--format", "whole-file", "--json"])
        .write_stdin("Intro\n\nsrc/a.py\n```python\nx = 1\n```\n")
        .assert()
        .success();
    let value = json(&out.get_output().stdout);
    assert_eq!(value["format"]["name"], "whole");
    assert_eq!(value["format"]["by"], "flag");
    assert_eq!(value["edits"][0]["path"], "src/a.py");
    assert_eq!(value["edits"][0]["span"]["first_line"], 4);
}

#[test]
fn auto_detection_picks_whole_for_named_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        bin().current_dir(dir.path()).args(["parse", "--json"]).write_stdin("a.txt\n```\nhi\n```\n").assert().success();
    let value = json(&out.get_output().stdout);
    assert_eq!(value["format"]["by"], "auto");
}

#[test]
fn read_renders_ranges_with_gaps() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "1\n2\n3\n4\n5\n").unwrap();
    bin()
        .current_dir(dir.path())
        .args(["read", "--format", "whole", "f.txt", "--lines", "2,4-4"])
        .assert()
        .success()
        .stdout("...\n2\n...\n4\n...\n");
    bin()
        .current_dir(dir.path())
        .args(["read", "--format", "whole", "f.txt", "--lines", "4-2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ends before it starts"));
}

#[test]
fn dry_run_shows_the_diff_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old\r\n").unwrap();
    bin()
        .current_dir(dir.path())
        .args(["apply", "--dry-run", "--format", "whole"])
        .write_stdin("a.txt\n```\nnew\n```\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("-old").and(predicate::str::contains("+new")));
    assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"old\r\n");
}

#[test]
fn dry_run_of_an_elided_reply_fails_with_a_reflection() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "a = 1\nb = 2\n").unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["--dry-run", "--json", "--format", "whole"])
        .write_stdin("a.py\n```python\na = 2\n# ... rest of the file ...\n```\n")
        .assert()
        .code(1);
    let value = json(&out.get_output().stdout);
    assert_eq!(value["status"], "failed");
    assert_eq!(value["edits"][0]["kind"], "forbidden");
    assert!(value["reflection"].as_str().unwrap().contains("Edit 1 to a.py failed"));
    assert!(value["files"].as_array().unwrap().is_empty());
}

#[test]
fn paths_outside_the_repo_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .current_dir(dir.path())
        .args(["--dry-run", "--format", "whole"])
        .write_stdin("../escape.txt\n```\nx\n```\n")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAILED (forbidden)").and(predicate::str::contains("leaves the repository")));
}

#[test]
fn a_hostile_config_plugin_is_reported_and_the_host_survives() {
    let dir = tempfile::tempdir().unwrap();
    let config =
        format!("[plugins.hostile]\npath = {:?}\n[limits]\nplugin-timeout-ms = 200\n", crate::common::HOSTILE_WASM);
    std::fs::write(dir.path().join(".agent-apply.toml"), config).unwrap();
    bin()
        .current_dir(dir.path())
        .args(["parse", "--format", "hostile", "-"])
        .write_stdin("loop")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("plugin 'hostile' ran past its time limit of 200 ms"));
}

#[test]
fn a_detect_that_fails_stops_auto_detection_with_its_error_and_changes_nothing() {
    // The formats' detects run side by side; the failure must still be
    // reported as the one-by-one run reported it, and the branch untouched.
    let repo = crate::repo::TestRepo::with(&[("a.txt", "one\n")]);
    std::fs::write(
        repo.path().join(".agent-apply.toml"),
        format!("[plugins.hostile]\npath = {:?}\n", crate::common::HOSTILE_WASM),
    )
    .unwrap();
    let before = repo.state();
    for _ in 0..3 {
        let out = repo.apply().arg("-").write_stdin("detect:panic").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("plugin 'hostile' crashed in `detect`"), "{stderr}");
        assert_eq!(repo.state(), before);
    }
}

#[test]
fn completions_and_man_page() {
    bin().args(["completions", "bash"]).assert().success().stdout(predicate::str::contains("git-agent-apply"));
    bin().arg("man").assert().success().stdout(predicate::str::contains(".TH"));
}

#[test]
fn verbose_shows_plugin_output_and_timings() {
    let repo = crate::repo::TestRepo::with(&[("a.txt", "one\n")]);
    let edit = "a.txt\n```\n<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n```\n";
    let out = repo.apply().args(["-v", "-"]).write_stdin(edit).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("plugin editblock: nothing captured from its stderr"), "{stderr}");
    let timings = stderr.lines().find(|l| l.starts_with("timings: ")).unwrap_or_else(|| panic!("{stderr}"));
    for phase in ["parse ", "apply ", "git ", "checks ", "total "] {
        assert!(timings.contains(phase) && timings.ends_with(" ms"), "{timings}");
    }
    // stdout keeps only the report; without -v, none of it.
    assert!(!String::from_utf8_lossy(&out.get_output().stdout).contains("timings"));
    let quiet = repo.apply().args(["parse", "-"]).write_stdin(edit).assert().success();
    assert!(quiet.get_output().stderr.is_empty(), "{:?}", quiet.get_output());

    // What a plugin writes to stderr is shown, by parse and apply alike.
    std::fs::write(
        repo.path().join(".agent-apply.toml"),
        format!("[plugins.hostile]\npath = {:?}\n", crate::common::HOSTILE_WASM),
    )
    .unwrap();
    for command in [&["parse", "-v", "--format", "hostile", "-"][..], &["-v", "--format", "hostile", "-"]] {
        let out = repo.apply().args(command).write_stdin("chatter").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("plugin hostile wrote to stderr:\nhostile plugin chatters on stderr"), "{stderr}");
        assert!(stderr.contains("timings: parse "), "{stderr}");
    }
    // lint runs every format over the files: their output and its time.
    let out = repo.apply().args(["lint", "-v"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("plugin hostile: nothing captured") && stderr.contains("files linted, total "), "{stderr}");
}

#[test]
fn read_verbose_shows_the_plugin_output_and_timings() {
    let repo = crate::repo::TestRepo::with(&[("a.txt", "one\n")]);
    let read = |args: &[&str]| {
        let out = repo.apply().arg("read").args(args).arg("a.txt").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    // A built-in format: named with what it wrote (nothing), and the render time.
    let (view, stderr) = read(&["-v", "--format", "hashline"]);
    assert!(view.contains("one"), "{view}");
    assert!(stderr.contains("plugin hashline: nothing captured from its stderr"), "{stderr}");
    let timings = stderr.lines().find(|l| l.starts_with("timings: ")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(timings.contains("render ") && timings.contains(", total ") && timings.ends_with(" ms"), "{timings}");
    // `numbered` runs no plugin: only the time.
    let (_, stderr) = read(&["-v", "--format", "numbered"]);
    assert!(!stderr.contains("plugin ") && stderr.starts_with("timings: total "), "{stderr}");
    // Without -v, nothing on stderr.
    assert_eq!(read(&["--format", "hashline"]).1, "");

    // What a plugin writes to stderr while rendering is shown.
    std::fs::write(
        repo.path().join(".agent-apply.toml"),
        format!(
            "[plugins.hostile]\npath = {:?}\n\n[options.hostile]\nmisdeed = \"chatter\"\n",
            crate::common::HOSTILE_WASM
        ),
    )
    .unwrap();
    let (view, stderr) = read(&["-v", "--format", "hostile"]);
    assert_eq!(view, "one\n");
    assert!(
        stderr.contains("plugin hostile wrote to stderr:\nhostile plugin chatters on stderr while rendering\n"),
        "{stderr}"
    );
    assert!(stderr.contains("timings: render "), "{stderr}");
    assert_eq!(read(&["--format", "hostile"]).1, "", "plugin output without -v");
}

#[test]
fn suggested_commands_are_listed_in_text_too() {
    let repo = crate::repo::TestRepo::with(&[("a.txt", "one\n")]);
    let reply =
        "a.txt\n```\n<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n```\n\nThen run:\n\n```bash\ncargo test\n```\n";
    let out = repo.apply().arg("-").write_stdin(reply).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout);
    assert!(
        stdout.contains("suggested command (reply line ") && stdout.contains(", not run): cargo test\n"),
        "{stdout}"
    );
    assert!(stdout.contains("committed "), "{stdout}");
}
