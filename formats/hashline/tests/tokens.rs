//! The measurement the hashline issue asks for: on a 1,000-line file with one
//! stale anchor, how many tokens the mismatch response (failure message and
//! hint: the ranges and the fresh view) costs, against re-reading the whole
//! file in hashline form. Counted with a real BPE tokenizer (tiktoken-rs,
//! which embeds OpenAI's vocabularies).

use agent_apply_format_hashline::Hashline;
use agent_apply_format_hashline::hash::{hex, line_hash};
use agent_apply_sdk::Plugin;
use agent_apply_sdk::types::*;

/// A 1,000-line Python-like module.
fn module() -> String {
    let mut lines = vec!["import math".to_string(), String::new()];
    let mut i = 0;
    while lines.len() < 1000 {
        i += 1;
        lines.push(format!("def step_{i}(values, scale=1.0):"));
        lines.push(format!("    total_{i} = sum(math.sqrt(abs(v)) * scale for v in values)"));
        lines.push(format!("    return total_{i} + {}", i * 7 % 13));
        lines.push(String::new());
    }
    lines.truncate(1000);
    lines.join("\n") + "\n"
}

#[test]
fn mismatch_response_is_at_least_20x_smaller_than_a_full_reread() {
    let content = module();
    let target = 500u32;
    // A hash that no line within the window (±8) carries: the anchor is stale.
    let near: Vec<String> = content.lines().skip(target as usize - 9).take(17).map(|l| hex(line_hash(l), 2)).collect();
    let stale = (0..=255u32).map(|h| format!("{h:02x}")).find(|h| !near.contains(h)).unwrap();
    let reply = format!(
        "```json\n{{\"path\": \"big.py\", \"edits\": [{{\"set_line\": {{\"anchor\": \"{target}:{stale}\", \"new_text\": \"    pass\"}}}}]}}\n```\n"
    );
    let parsed = Plugin::parse(&Hashline, &reply, &[]);
    let out = Plugin::apply(&Hashline, vec![File::new("big.py", content.as_str())], parsed.edits.clone(), &[]).unwrap();
    let failure = &out.outcomes[0];
    assert_eq!(failure.status, EditStatus::Failed);
    assert_eq!(failure.kind, Some(FailureKind::Stale));
    let response = format!("{}\n{}", failure.message, failure.hint.as_deref().unwrap());
    let full = Plugin::render(&Hashline, &File::new("big.py", content.as_str()), &[], &[]).unwrap();
    assert_eq!(full.lines().count(), 1001, "the file tag, then the lines");

    for (name, bpe) in
        [("o200k_base", tiktoken_rs::o200k_base().unwrap()), ("cl100k_base", tiktoken_rs::cl100k_base().unwrap())]
    {
        let ours = bpe.encode_with_special_tokens(&response).len();
        let reread = bpe.encode_with_special_tokens(&full).len();
        let ratio = reread as f64 / ours as f64;
        println!("{name}: mismatch response {ours} tokens, full hashline re-read {reread} tokens, {ratio:.1}x fewer");
        assert!(ours * 20 <= reread, "{name}: {ours} vs {reread} tokens is less than 20x");
    }
    println!("--- the mismatch response ---\n{response}");
}

#[test]
fn the_two_encodings_are_distinct() {
    let a = tiktoken_rs::o200k_base().unwrap().encode_with_special_tokens("    total_125 = sum(math.sqrt(abs(v)))");
    let b = tiktoken_rs::cl100k_base().unwrap().encode_with_special_tokens("    total_125 = sum(math.sqrt(abs(v)))");
    assert_ne!(a, b, "the two encodings are different vocabularies");
}
