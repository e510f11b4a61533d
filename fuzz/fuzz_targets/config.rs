//! The config loader on arbitrary text: an error or a config whose limits
//! and options can be read, never a panic.
#![no_main]

use agent_apply::config::Config;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = Config::from_toml(text, std::path::Path::new("/repo/.agent-apply.toml")) {
        config.limits();
        config.input_limits();
        for format in config.options.keys() {
            config.format_options(format);
        }
    }
});
