//! A clean 20-hunk diff applied to a 20,000-line file: this plugin natively,
//! beside `git apply` and GNU `patch` (run as processes on the same diff, in
//! the same run, when they are installed). The target: within 2x of
//! `git apply`.

use std::hint::black_box;
use std::process::Command;

use agent_apply_format_udiff::UnifiedDiff;
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::File;
use criterion::{Criterion, criterion_group, criterion_main};

const LINES: usize = 20_000;
const HUNKS: usize = 20;

fn file() -> String {
    (0..LINES).map(|i| format!("    value_{i} = compute({i}, {})\n", i % 7)).collect()
}

/// A `diff -u` style diff: each hunk replaces one line, with 3 context lines.
fn diff() -> String {
    let mut out = String::from("--- a/big.py\n+++ b/big.py\n");
    for h in 0..HUNKS {
        let line = 500 + h * (LINES - 1000) / HUNKS; // 0-based changed line
        out.push_str(&format!("@@ -{},7 +{},7 @@\n", line - 2, line - 2));
        for i in line - 3..line {
            out.push_str(&format!("     value_{i} = compute({i}, {})\n", i % 7));
        }
        out.push_str(&format!("-    value_{line} = compute({line}, {})\n", line % 7));
        out.push_str(&format!("+    value_{line} = compute_fast({line}, {})\n", line % 7));
        for i in line + 1..line + 4 {
            out.push_str(&format!("     value_{i} = compute({i}, {})\n", i % 7));
        }
    }
    out
}

fn tool_works(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn bench(c: &mut Criterion) {
    let content = file();
    let diff = diff();
    let parsed = Plugin::parse(&UnifiedDiff, &diff, &[]);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let edits = parsed.edits;
    let out = Plugin::apply(&UnifiedDiff, vec![File::new("big.py", content.clone())], edits.clone(), &[]).unwrap();
    assert!(out.outcomes.iter().all(|o| o.kind.is_none()), "{:?}", out.outcomes);

    let mut group = c.benchmark_group("udiff-20-hunks-20k-lines");
    group.sample_size(30);
    group.bench_function("udiff (native, parse+apply)", |b| {
        b.iter(|| {
            let parsed = Plugin::parse(&UnifiedDiff, black_box(&diff), &[]);
            let files = vec![File::new("big.py", content.clone())];
            black_box(Plugin::apply(&UnifiedDiff, files, parsed.edits.clone(), &[]).unwrap())
        })
    });
    group.bench_function("udiff strict (native, parse+apply)", |b| {
        let strict = [agent_apply_sdk::types::OptionValue { key: "strict".into(), value: "true".into() }];
        b.iter(|| {
            let parsed = Plugin::parse(&UnifiedDiff, black_box(&diff), &strict);
            let files = vec![File::new("big.py", content.clone())];
            black_box(Plugin::apply(&UnifiedDiff, files, parsed.edits.clone(), &strict).unwrap())
        })
    });

    // The peers, as processes on real files (the file is restored each time).
    let dir = std::env::temp_dir().join(format!("udiff-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("change.diff"), &diff).unwrap();
    let reset = || std::fs::write(dir.join("big.py"), &content).unwrap();
    if tool_works("git") {
        group.bench_function("git apply (process)", |b| {
            b.iter(|| {
                reset();
                let status = Command::new("git").args(["apply", "change.diff"]).current_dir(&dir).status().unwrap();
                assert!(status.success());
            })
        });
    }
    if tool_works("patch") {
        group.bench_function("GNU patch (process)", |b| {
            b.iter(|| {
                reset();
                let status =
                    Command::new("patch").args(["-s", "-p1", "-i", "change.diff"]).current_dir(&dir).status().unwrap();
                assert!(status.success());
            })
        });
    }
    group.bench_function("file restore alone (baseline for the processes)", |b| b.iter(reset));
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
