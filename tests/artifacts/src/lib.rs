//! Paths of the test and example plugins, built by this crate's build script
//! for the host's tests and benchmarks (as wasmtime's test-programs-artifacts
//! does), so that installing the host never builds them.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));
