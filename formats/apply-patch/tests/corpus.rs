//! The conformance corpus (`tests/corpus/apply-patch/<case>/`), run natively
//! through the plugin contract; see [`agent_apply_sdk::testing`] for the layout.

use std::path::Path;

use agent_apply_format_apply_patch::ApplyPatch;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/apply-patch");
    agent_apply_sdk::testing::run_corpus(&ApplyPatch, &dir).assert_passed(30);
}
