//! A plugin built against `agent-apply:format@0.0.1`, a contract version the
//! host does not speak, to prove the host refuses it with a clear error
//! instead of calling into it.
//!
//! Only the wasm build has anything in it: natively, the component's export
//! names are not valid linker symbols.
#![cfg(target_family = "wasm")]

wit_bindgen::generate!({ path: "wit", world: "format" });

struct Old;

impl exports::agent_apply::format::plugin::Guest for Old {
    fn info() -> String {
        "old".into()
    }
}

export!(Old);
