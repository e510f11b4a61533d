//! Hostile plugins are stopped with a clear error, and the host survives.

use agent_apply::runtime::{Limits, PluginError};

use crate::common::{hostile, shared_cache, tight_limits};

#[test]
fn an_endless_loop_is_stopped_by_the_deadline() {
    let plugin = hostile(&shared_cache(), tight_limits());
    let mut instance = plugin.instantiate().unwrap();
    let started = std::time::Instant::now();
    let error = instance.parse("loop", &[]).unwrap_err();
    assert!(matches!(error, PluginError::Timeout { call: "parse", .. }), "{error:?}");
    assert_eq!(error.to_string(), "plugin 'hostile' ran past its time limit of 300 ms in `parse` and was stopped");
    assert!(started.elapsed().as_secs() < 10, "the deadline must stop it promptly");
    // The crashed instance refuses more calls; a new one works.
    assert!(matches!(instance.detect("x"), Err(PluginError::Poisoned { .. })));
    assert!(plugin.instantiate().unwrap().parse("fine", &[]).is_ok());
}

#[test]
fn unbounded_allocation_is_stopped_by_the_memory_limit() {
    // A generous deadline: on a loaded machine the memory limit must still be what stops it.
    let plugin = hostile(&shared_cache(), Limits { timeout: std::time::Duration::from_secs(30), ..tight_limits() });
    let error = plugin.instantiate().unwrap().parse("alloc", &[]).unwrap_err();
    assert!(matches!(error, PluginError::OutOfMemory { call: "parse", limit, .. } if limit == 64 << 20), "{error:?}");
    assert!(error.to_string().contains("more than its memory limit of 64 MiB"), "{error}");
}

#[test]
fn files_network_and_environment_are_denied() {
    let plugin = hostile(&shared_cache(), Limits::default());
    let output = plugin.instantiate().unwrap().parse("probe", &[]).unwrap();
    let messages: Vec<&str> = output.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    for message in &messages[..3] {
        assert!(message.contains(": denied: "), "the sandbox let something through: {messages:?}");
    }
    assert_eq!(messages[3], "env: 0 variables");
}

#[test]
fn a_panic_is_a_clear_crash_with_the_plugin_output() {
    let plugin = hostile(&shared_cache(), Limits::default());
    let error = plugin.instantiate().unwrap().parse("panic", &[]).unwrap_err();
    let PluginError::Trap { ref plugin, call, ref stderr, .. } = error else { panic!("{error:?}") };
    assert_eq!((plugin.as_str(), call), ("hostile", "parse"));
    assert!(stderr.contains("hostile plugin panics on purpose"), "{stderr}");
    assert!(error.to_string().starts_with("plugin 'hostile' crashed in `parse`"), "{error}");
}
