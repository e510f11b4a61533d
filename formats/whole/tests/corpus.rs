//! The conformance corpus (`tests/corpus/whole/<case>/`), run natively through
//! the plugin contract; see [`agent_apply_sdk::testing`] for the case layout.

use std::path::Path;

use agent_apply_format_whole::Whole;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/whole");
    agent_apply_sdk::testing::run_corpus(&Whole, &dir).assert_passed(10);
}

/// The host skips `detect` for a reply that holds none of the format's
/// hints: every reply of the corpus and the detection set it detects holds one.
#[test]
fn every_detected_reply_holds_a_hint() {
    agent_apply_sdk::testing::assert_hints_cover_detect_in(
        &Whole,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    );
}
