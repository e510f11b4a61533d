//! Hostile plugins are stopped with a clear error, and the host survives.

use agent_apply::runtime::{Limits, PluginError};
use agent_apply_sdk::types as sdk;

use crate::common::{HOSTILE_WASM, OLD_CONTRACT_WASM, hostile, load_test_plugin, shared_cache, tight_limits};
use crate::repo::TestRepo;

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
    assert!(stderr.contains("hostile plugin panics in parse on purpose"), "{stderr}");
    assert!(error.to_string().starts_with("plugin 'hostile' crashed in `parse`"), "{error}");
}

#[test]
fn a_plugin_built_for_another_contract_version_is_refused_by_name() {
    let error = load_test_plugin(OLD_CONTRACT_WASM, "old", &shared_cache(), Limits::default()).err().unwrap();
    assert!(
        matches!(&error, PluginError::ContractVersion { found, supported: "0.1.0", .. } if found == "0.0.1"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("'old'") && message.contains("0.0.1") && message.contains("0.1.0"), "{message}");
}

/// A hostile edit of a.txt (the hostile format's payload is `()`).
fn hostile_edit() -> sdk::Edit {
    let span = sdk::Span { start: 0, end: 0, first_line: 1, last_line: 1 };
    sdk::Edit { path: "a.txt".into(), related_paths: Vec::new(), span, summary: "edit".into(), payload: "null".into() }
}

#[test]
fn a_trap_in_each_export_names_the_plugin_and_the_export_and_the_host_survives() {
    let plugin = hostile(&shared_cache(), Limits::default());
    let misdeed = [sdk::OptionValue { key: "misdeed".into(), value: "panic".into() }];
    let file = sdk::File { path: "a.txt".into(), content: "a\n".into() };
    let panicking = sdk::File { content: "panic".into(), ..file.clone() };
    type Call = Box<dyn Fn(&mut agent_apply::runtime::PluginInstance) -> Result<(), PluginError>>;
    let calls: Vec<(&str, Call)> = vec![
        ("info", Box::new(|i| i.parse("poison-info", &[]).and_then(|_| i.info()).map(drop))),
        ("detect", Box::new(|i| i.detect("detect:panic").map(drop))),
        ("parse", Box::new(|i| i.parse("panic", &[]).map(drop))),
        (
            "apply",
            Box::new({
                let misdeed = misdeed.clone();
                move |i| i.apply(std::slice::from_ref(&file), &[hostile_edit()], &misdeed).map(drop)
            }),
        ),
        ("render", Box::new(move |i| i.render(&panicking, &[], &misdeed).map(drop))),
        ("lint", Box::new(|i| i.lint(&sdk::File { path: "a.txt".into(), content: "panic".into() }).map(drop))),
    ];
    for (export, call) in calls {
        let mut instance = plugin.instantiate().unwrap();
        let error = call(&mut instance).unwrap_err();
        let PluginError::Trap { call, ref stderr, .. } = error else { panic!("{export}: {error:?}") };
        assert_eq!(call, export);
        assert!(error.to_string().starts_with(&format!("plugin 'hostile' crashed in `{export}`")), "{error}");
        assert!(stderr.contains(&format!("panics in {export} on purpose")), "{export}: {stderr}");
        assert!(plugin.instantiate().unwrap().detect("fine").is_ok(), "a new instance works after {export}");
    }
}

#[test]
fn invalid_utf8_in_an_output_is_a_clear_error_naming_the_plugin() {
    let plugin = hostile(&shared_cache(), Limits::default());
    let error = plugin.instantiate().unwrap().parse("bad-utf8", &[]).unwrap_err();
    assert!(matches!(error, PluginError::Trap { call: "parse", .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with("plugin 'hostile' crashed in `parse`"), "{message}");
    assert!(message.to_lowercase().contains("utf-8"), "{message}");
}

#[test]
fn a_huge_output_is_survived_and_the_edit_limit_refuses_it() {
    let plugin = hostile(&shared_cache(), Limits::default());
    let mut instance = plugin.instantiate().unwrap();
    assert_eq!(instance.parse("huge", &[]).unwrap().edits.len(), 100_000);
    let text = instance.parse("huge-text", &[]).unwrap();
    assert_eq!(text.diagnostics[0].message.len(), 32 << 20);

    let repo = TestRepo::with(&[(".agent-apply.toml", &format!("[plugins.hostile]\npath = {HOSTILE_WASM:?}\n"))]);
    let before = repo.state();
    let out = repo.apply().args(["--format", "hostile", "-"]).write_stdin("huge").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: the reply holds 100000 edits, over the limit of 1000 per reply\n"), "{stderr}");
    assert_eq!(repo.state(), before);
}
