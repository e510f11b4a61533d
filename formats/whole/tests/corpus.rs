//! The conformance corpus (`tests/corpus/whole/<case>/`), run natively through
//! the plugin contract; see [`agent_apply_sdk::testing`] for the case layout.

use std::path::Path;

use agent_apply_format_whole::Whole;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/whole");
    agent_apply_sdk::testing::run_corpus(&Whole, &dir).assert_passed(10);
}
