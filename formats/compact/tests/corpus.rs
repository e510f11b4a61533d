//! The conformance corpus (`tests/corpus/compact/<case>/`), run natively through
//! the plugin contract; see [`agent_apply_sdk::testing`] for the case layout.

use std::path::Path;

use agent_apply_format_compact::Compact;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/compact");
    agent_apply_sdk::testing::run_corpus(&Compact, &dir).assert_passed(20);
}
