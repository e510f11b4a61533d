//! The conformance corpus (`tests/corpus/udiff/<case>/`), run natively through
//! the plugin contract; see [`agent_apply_sdk::testing`] for the case layout.

use std::path::Path;

use agent_apply_format_udiff::UnifiedDiff;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/udiff");
    agent_apply_sdk::testing::run_corpus(&UnifiedDiff, &dir).assert_passed(20);
}
