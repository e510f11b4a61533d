//! What the CLI prints, pinned by insta snapshots (`tests/e2e/snapshots/`):
//! human and JSON output of `parse`, `apply` (applied, failed, partial,
//! error), `formats` and `undo`, and the main errors. Commit ids and
//! timings vary from run to run and are replaced by placeholders.
//! After a meant change: `INSTA_UPDATE=always cargo test -p agent-apply --test e2e snapshots`,
//! then review the diff.

use serde_json::Value;

use crate::repo::TestRepo;

const EDIT: &str = "Here is the change.\n\napp.py\n```python\n<<<<<<< SEARCH\n    return \"hello\"\n=======\n    return \"hello, world\"\n>>>>>>> REPLACE\n```\n";
const MISSING: &str =
    "app.py\n```python\n<<<<<<< SEARCH\n    return \"goodbye\"\n=======\n    return \"bye\"\n>>>>>>> REPLACE\n```\n";

const SECOND: &str = "b.txt\n```\n<<<<<<< SEARCH\ntwo\n=======\n2\n>>>>>>> REPLACE\n```\n";

fn repo() -> TestRepo {
    TestRepo::with(&[("app.py", "def greet():\n    return \"hello\"\n"), ("b.txt", "one\ntwo\n")])
}

/// `text` with the repository's path and commit ids (runs of 12 to 40
/// hex digits) replaced.
pub(crate) fn stable(repo: &TestRepo, text: &str) -> String {
    let text = text.replace(repo.path().to_str().unwrap(), "<repo>");
    let mut out = String::new();
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
            continue;
        }
        out += if (12..=40).contains(&run.len()) { "<commit>" } else { &run };
        run.clear();
        out.push(c);
    }
    out.pop();
    // Check durations: "(8 ms)".
    out.split_inclusive('\n')
        .map(|line| match (line.rfind(" ("), line.rfind(" ms)")) {
            (Some(open), Some(close)) if line[open + 2..close].bytes().all(|b| b.is_ascii_digit()) => {
                format!("{}(<n> ms){}", &line[..open + 1], &line[close + 4..])
            }
            _ => line.to_string(),
        })
        .collect()
}

/// A JSON report with what varies between runs replaced.
fn stable_json(repo: &TestRepo, output: &[u8]) -> Value {
    let mut value = crate::common::report_json(output);
    if let Some(timings) = value.get_mut("timings").and_then(Value::as_object_mut) {
        timings.values_mut().for_each(|v| *v = Value::from(0));
    }
    if let Some(checks) = value.get_mut("checks").and_then(Value::as_array_mut) {
        checks.iter_mut().for_each(|c| c["millis"] = Value::from(0));
    }
    serde_json::from_str(&stable(repo, &value.to_string())).unwrap()
}

fn run(repo: &TestRepo, args: &[&str], reply: &str) -> (Option<i32>, String, String) {
    let out = repo.apply().args(args).write_stdin(reply).output().unwrap();
    let text = |bytes: &[u8]| stable(repo, &String::from_utf8_lossy(bytes));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn human_output() {
    let repo = repo();
    let mut shown = String::new();
    let mut show = |title: &str, args: &[&str], reply: &str| {
        let (code, stdout, stderr) = run(&repo, args, reply);
        shown += &format!("== {title}: exit {code:?}\n{stdout}{stderr}\n");
    };
    show("parse", &["parse", "-"], EDIT);
    show("dry run", &["--dry-run", "-"], EDIT);
    show("failed", &["-"], MISSING);
    show("applied", &["-"], EDIT);
    show("unchanged", &["-"], EDIT);
    show(
        "partial",
        &["--partial", "-"],
        &format!("{MISSING}\nb.txt\n```\n<<<<<<< SEARCH\ntwo\n=======\n2\n>>>>>>> REPLACE\n```\n"),
    );
    show("undo", &["undo"], "");
    show("unknown format", &["--format", "nope", "-"], EDIT);
    show("no edit", &["-"], "Sure, I can help with that.");
    show("checks failed", &["--check", "false", "-"], SECOND);
    insta::assert_snapshot!(shown);
}

#[test]
fn json_output() {
    let repo = repo();
    let mut shown = serde_json::Map::new();
    let mut show = |title: &str, args: &[&str], reply: &str| {
        let out = repo.apply().args(args).write_stdin(reply).output().unwrap();
        shown.insert(title.into(), stable_json(&repo, &out.stdout));
    };
    show("parse", &["parse", "--json", "-"], EDIT);
    show("failed", &["--json", "-"], MISSING);
    show("applied", &["--json", "-"], EDIT);
    show("unknown format", &["--json", "--format", "nope", "-"], EDIT);
    let undo = repo.apply().args(["undo", "--json"]).output().unwrap();
    shown.insert("undo".into(), serde_json::from_str(&stable(&repo, &String::from_utf8_lossy(&undo.stdout))).unwrap());
    insta::assert_json_snapshot!(Value::Object(shown));
}

#[test]
fn formats_listing() {
    let repo = repo();
    let (code, stdout, _) = run(&repo, &["formats"], "");
    assert_eq!(code, Some(0));
    insta::assert_snapshot!(stdout);
}
