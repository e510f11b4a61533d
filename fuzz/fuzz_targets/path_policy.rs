#![no_main]
//! The lexical path policy (`agent_apply_sdk::repo_path`) on arbitrary
//! strings: it never panics, and every path it accepts is a plain relative
//! path that git would index and every file system could hold.

use agent_apply_sdk::repo_path::{NAME_MAX, PATH_MAX, is_git_dir_name, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else { return };
    if validate(path).is_err() {
        return;
    }
    assert!(!path.is_empty() && path.len() <= PATH_MAX, "{path:?}");
    assert!(!path.starts_with('/') && !path.contains('\\') && !path.ends_with('/'), "{path:?}");
    assert!(!path.chars().any(char::is_control), "{path:?}");
    assert!(!path.contains('\u{202E}'), "{path:?}");
    for component in path.split('/') {
        assert!(!matches!(component, "" | "." | ".."), "{path:?}");
        assert!(!is_git_dir_name(component) && component.len() <= NAME_MAX, "{path:?}");
    }
    // Joined under a root, it stays under it: no component walks out.
    let joined = std::path::Path::new("/repo").join(path);
    let mut depth = 0i32;
    for component in joined.strip_prefix("/repo").unwrap().components() {
        match component {
            std::path::Component::Normal(_) => depth += 1,
            other => panic!("{path:?} has the component {other:?}"),
        }
    }
    assert!(depth >= 1);
});
