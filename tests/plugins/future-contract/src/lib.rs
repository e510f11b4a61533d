//! Implements `agent-apply:format@9.0.0`, a contract version the host does
//! not know, so tests can check it is refused with both versions named.

wit_bindgen::generate!({ path: "wit", world: "format" });

struct Future;

impl exports::agent_apply::format::plugin::Guest for Future {
    fn info() -> String {
        "from the future".into()
    }
}

export!(Future);
