//! The conformance corpus (`tests/corpus/tool-calls/<case>/`), run natively through
//! the plugin contract; see [`agent_apply_sdk::testing`] for the case layout.

use std::path::Path;

use agent_apply_format_tool_calls::ToolCalls;

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/tool-calls");
    agent_apply_sdk::testing::run_corpus(&ToolCalls, &dir).assert_passed(30);
}
