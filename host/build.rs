//! Builds the built-in format plugins (and the test-only and example plugins) as
//! wasm components in their own target directory, then embeds the formats in
//! the binary. Names and aliases come from each format's
//! `[package.metadata.agent-apply]`, so resolving a name needs no plugin load.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use sha2::{Digest, Sha256};

const TARGET: &str = "wasm32-wasip2";
/// Test and example plugins also built as native libraries, for the tests and
/// benchmarks of trusted native plugins (`AGENT_APPLY_TEST_NATIVE_<PACKAGE>`).
const NATIVE_TEST_PLUGINS: &[&str] = &["ops-json", "hostile-plugin", "wrong-abi-plugin"];

struct WasmCrate {
    package: String,
    dir: PathBuf,
    format_name: Option<(String, Vec<String>)>,
}

fn main() {
    let host_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = host_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());

    let mut crates = crates_in(&workspace.join("formats"), true);
    crates.extend(crates_in(&workspace.join("tests/plugins"), false));
    // The example plugins are third-party formats: built for the tests, never embedded.
    crates.extend(crates_in(&workspace.join("examples"), false));
    for path in [
        "plugins-sdk/src",
        "plugins-sdk/wit",
        "plugins-sdk/Cargo.toml",
        "formats",
        "tests/plugins",
        "examples",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    for c in &crates {
        println!("cargo:rerun-if-changed={}", c.dir.display());
    }

    require_wasm_target();
    let wasm_target_dir = workspace.join("target").join("wasm-plugins");
    build_components(&workspace, &wasm_target_dir, &crates);

    let artifacts = wasm_target_dir.join(TARGET).join("release");
    let mut table = String::from(
        "/// Built-in formats, compiled to wasm components by build.rs.\npub static BUILTIN_FORMATS: &[BuiltinFormat] = &[\n",
    );
    for c in &crates {
        let file = artifacts.join(format!("{}.wasm", c.package.replace('-', "_")));
        let bytes = fs::read(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let copy = out_dir.join(file.file_name().unwrap());
        fs::write(&copy, &bytes).unwrap();
        match &c.format_name {
            Some((name, aliases)) => {
                table.push_str(&format!(
                    "    BuiltinFormat {{ name: {name:?}, aliases: &{aliases:?}, wasm: include_bytes!({copy:?}), sha256: {:?} }},\n",
                    hex(&Sha256::digest(&bytes)),
                ));
            }
            None => println!(
                "cargo:rustc-env=AGENT_APPLY_TEST_PLUGIN_{}={}",
                c.package.to_uppercase().replace('-', "_"),
                copy.display()
            ),
        }
    }
    table.push_str("];\n");
    fs::write(out_dir.join("builtin_formats.rs"), table).unwrap();

    let native_target_dir = workspace.join("target").join("native-plugins");
    build_native(&workspace, &native_target_dir);
    for package in NATIVE_TEST_PLUGINS {
        let file = native_target_dir.join("release").join(format!(
            "{}{}{}",
            env::consts::DLL_PREFIX,
            package.replace('-', "_"),
            env::consts::DLL_SUFFIX
        ));
        assert!(file.is_file(), "{} was not built", file.display());
        println!(
            "cargo:rustc-env=AGENT_APPLY_TEST_NATIVE_{}={}",
            package.to_uppercase().replace('-', "_"),
            file.display()
        );
    }
}

/// The crates under `dir`, one per subdirectory with a Cargo.toml.
fn crates_in(dir: &Path, are_formats: bool) -> Vec<WasmCrate> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut crates: Vec<WasmCrate> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|dir| {
            let manifest: toml::Table = fs::read_to_string(dir.join("Cargo.toml")).unwrap().parse().unwrap();
            let package = &manifest["package"];
            let name = package["name"].as_str().unwrap().to_string();
            let format_name = are_formats.then(|| {
                let meta = package
                    .get("metadata")
                    .and_then(|m| m.get("agent-apply"))
                    .unwrap_or_else(|| panic!("{name}: Cargo.toml lacks [package.metadata.agent-apply]"));
                let aliases = meta
                    .get("aliases")
                    .and_then(|a| a.as_array())
                    .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                (meta["name"].as_str().unwrap().to_string(), aliases)
            });
            WasmCrate { package: name, dir, format_name }
        })
        .collect();
    crates.sort_by(|a, b| a.package.cmp(&b.package));
    crates
}

fn require_wasm_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc).args(["--print", "target-libdir", "--target", TARGET]).output();
    let installed = libdir
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| Path::new(String::from_utf8_lossy(&o.stdout).trim()).is_dir());
    if !installed {
        panic!(
            "\n\nThe `{TARGET}` Rust target is not installed; the built-in formats are built for it.\n\
             Run:\n\n    rustup target add {TARGET}\n\nthen build again.\n\n"
        );
    }
}

fn build_components(workspace: &Path, target_dir: &Path, crates: &[WasmCrate]) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--release", "--target", TARGET, "--target-dir"]).arg(target_dir);
    for c in crates {
        cmd.args(["-p", &c.package]);
    }
    // The outer build's flags (coverage, sanitizers, a host target) do not apply to wasm.
    for var in
        ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR", "CARGO_BUILD_RUSTFLAGS"]
    {
        cmd.env_remove(var);
    }
    // Wasm SIMD (supported by every wasmtime we run on) speeds up line scanning.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false").env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo");
    let status = cmd.status().expect("failed to run cargo to build the wasm format plugins");
    if !status.success() {
        panic!("building the format plugins for {TARGET} failed (see the errors above)");
    }
}

/// The native test plugins, built for the host in their own target dir.
fn build_native(workspace: &Path, target_dir: &Path) {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--release", "--target-dir"]).arg(target_dir);
    for package in NATIVE_TEST_PLUGINS {
        cmd.args(["-p", package]);
    }
    for var in
        ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR", "CARGO_BUILD_RUSTFLAGS"]
    {
        cmd.env_remove(var);
    }
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false");
    let status = cmd.status().expect("failed to run cargo to build the native test plugins");
    if !status.success() {
        panic!("building the native test plugins failed (see the errors above)");
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
