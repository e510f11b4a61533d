//! Builds the test-only plugins (tests/plugins) and the example plugins
//! (examples) as wasm components, and some of them as native libraries, for
//! the host's tests and benchmarks. A dev-dependency only: `cargo install`
//! never builds them. Their paths become constants in this crate.

#[path = "../../host/build/wasm.rs"]
mod wasm;

use std::path::PathBuf;
use std::{env, fs};

/// Plugins also built as native libraries, for the tests and benchmarks of
/// trusted native plugins.
const NATIVE: &[&str] = &["ops-json", "hostile-plugin", "wrong-abi-plugin"];

fn main() {
    let workspace = wasm::workspace();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let (crates, artifacts) = wasm::build_plugins_under(&workspace, &["tests/plugins", "examples"]);
    let mut constants = String::new();
    for c in &crates {
        let path = wasm::component_path(&artifacts, &c.package);
        assert!(path.is_file(), "{} was not built", path.display());
        constants.push_str(&format!(
            "/// The `{}` wasm component.\npub const {}_WASM: &str = {:?};\n",
            c.package,
            constant(&c.package),
            path.display().to_string()
        ));
    }

    let native_dir = workspace.join("target").join("native-plugins");
    let status = wasm::cargo_build(&workspace, &native_dir, None, NATIVE)
        .status()
        .expect("failed to run cargo to build the native test plugins");
    assert!(status.success(), "building the native test plugins failed (see the errors above)");
    for package in NATIVE {
        let file = native_dir.join("release").join(format!(
            "{}{}{}",
            env::consts::DLL_PREFIX,
            package.replace('-', "_"),
            env::consts::DLL_SUFFIX
        ));
        assert!(file.is_file(), "{} was not built", file.display());
        constants.push_str(&format!(
            "/// The `{package}` plugin as a native library.\npub const {}_NATIVE: &str = {:?};\n",
            constant(package),
            file.display().to_string()
        ));
    }
    fs::write(out_dir.join("artifacts.rs"), constants).unwrap();
}

fn constant(package: &str) -> String {
    package.to_uppercase().replace('-', "_")
}
