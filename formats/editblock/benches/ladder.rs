//! One SEARCH/REPLACE block on a large file: exact match beside indentation
//! drift (found at the leading-whitespace level), at 5,000 and 50,000 lines.
//! Target (issue 4): the ladder costs at most 5x the exact match, and both
//! grow linearly with the file.

use std::hint::black_box;

use agent_apply_format_editblock::EditBlock;
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::File;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

/// A Python-ish file of `lines` lines, with one distinctive function in the middle.
fn file(lines: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    while n < lines {
        if n == lines / 2 {
            out.push_str(
                "class Target:\n    def special(self, value):\n        total = value * 3\n        return total\n",
            );
            n += 4;
        }
        out.push_str(&format!("def f{n}(x):\n    y = x + {n}\n    return y\n\n"));
        n += 4;
    }
    out
}

fn reply(indent: &str) -> String {
    format!(
        "big.py\n```python\n<<<<<<< SEARCH\n{indent}def special(self, value):\n{indent}    total = value * 3\n=======\n{indent}def special(self, value):\n{indent}    total = value * 4\n>>>>>>> REPLACE\n```\n"
    )
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("editblock");
    for lines in [5_000usize, 50_000] {
        let content = file(lines);
        for (name, indent) in [("exact", "    "), ("indent-drift", "")] {
            let parsed = Plugin::parse(&EditBlock, &reply(indent), &[]);
            let edits = parsed.edits;
            // Sanity: the edit applies.
            let out =
                Plugin::apply(&EditBlock, vec![File::new("big.py", content.clone())], edits.clone(), &[]).unwrap();
            assert_eq!(out.outcomes[0].kind, None, "{:?}", out.outcomes[0]);
            group.bench_with_input(BenchmarkId::new(name, lines), &content, |b, content| {
                b.iter(|| {
                    let files = vec![File::new("big.py", content.clone())];
                    black_box(Plugin::apply(&EditBlock, files, edits.clone(), &[]).unwrap())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
