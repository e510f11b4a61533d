//! One macro makes each format target, so every target runs the same
//! driver from `agent_apply_sdk::fuzzing` that the stable tests replay.

/// A fuzz target running `driver` (`parse_bytes` or `apply_bytes`) on `format`.
#[macro_export]
macro_rules! format_target {
    ($format:expr, $driver:ident) => {
        libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            if let Err(broken) = agent_apply_sdk::fuzzing::$driver(&$format, data) {
                panic!("contract broken: {broken}");
            }
        });
    };
}
