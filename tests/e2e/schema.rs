//! `schema/report.v1.json` is generated from the report types: this test
//! fails when they disagree (`AGENT_APPLY_BLESS=1` rewrites the file), and
//! the schema is checked on real output of every kind.

use crate::common::{bin, report_json, report_schema_path};
use crate::repo::TestRepo;

#[test]
fn the_checked_in_schema_is_the_one_the_types_generate() {
    let generated = serde_json::to_string_pretty(&agent_apply::cli::json_schema()).unwrap() + "\n";
    let path = report_schema_path();
    if std::env::var_os("AGENT_APPLY_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "schema/report.v1.json is not what the report types generate; if the change is meant, run \
         AGENT_APPLY_BLESS=1 cargo test -p agent-apply --test e2e schema, and review the diff"
    );
}

#[test]
fn every_kind_of_json_output_validates() {
    let repo = TestRepo::with(&[("a.txt", "one\ntwo\n")]);
    let edit = "a.txt\n```\n<<<<<<< SEARCH\none\n=======\nfirst line\n>>>>>>> REPLACE\n```\n";
    let missing = "a.txt\n```\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n```\n";
    let cases: &[(&[&str], &str, &str)] = &[
        (&["parse", "--json", "-"], edit, "parse"),
        (&["--json", "--dry-run", "-"], edit, "applied"),
        (&["--json", "-"], missing, "failed"),
        (&["--json", "-"], edit, "applied"),
        (&["--json", "-"], edit, "unchanged"),
        (
            &["--json", "--check", "false", "-"],
            "a.txt\n```\n<<<<<<< SEARCH\ntwo\n=======\nsecond line\n>>>>>>> REPLACE\n```\n",
            "checks-failed",
        ),
        (&["--json", "--format", "nope", "-"], edit, "error"),
        (&["--json", "-"], "no edits here", "failed"),
    ];
    for (args, reply, status) in cases {
        let out = repo.apply().args(*args).write_stdin(*reply).output().unwrap();
        let value = report_json(&out.stdout);
        if *status != "parse" {
            assert_eq!(value["status"], *status, "{args:?}: {value:#}");
        }
    }
    let out = bin().args(["--json", "--repo", "/nonexistent/dir", "-"]).write_stdin(edit).output().unwrap();
    assert_eq!(report_json(&out.stdout)["status"], "error");
    // A command line clap refuses is one JSON error object too, under --json.
    let out = bin().args(["--json", "--no-such-flag", "-"]).write_stdin(edit).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let value = report_json(&out.stdout);
    assert_eq!(value["error"]["message"], "unexpected argument '--no-such-flag' found", "{value:#}");
}
