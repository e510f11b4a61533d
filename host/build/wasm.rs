//! Building workspace crates as wasm components (and native libraries) from a
//! build script, in their own target directory. Shared by host/build.rs (the
//! built-in formats) and tests/artifacts/build.rs (test and example plugins).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

pub const TARGET: &str = "wasm32-wasip2";

pub struct WasmCrate {
    pub package: String,
    pub dir: PathBuf,
}

/// The crates under `dir`, one per subdirectory with a Cargo.toml, by name.
pub fn crates_in(dir: &Path) -> Vec<WasmCrate> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut crates: Vec<WasmCrate> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|dir| {
            let package = manifest(&dir)["package"]["name"].as_str().unwrap().to_string();
            WasmCrate { package, dir }
        })
        .collect();
    crates.sort_by(|a, b| a.package.cmp(&b.package));
    crates
}

/// The crate's Cargo.toml, parsed.
pub fn manifest(dir: &Path) -> toml::Table {
    fs::read_to_string(dir.join("Cargo.toml")).unwrap().parse().unwrap()
}

/// The workspace root, above the crate whose build script runs.
pub fn workspace() -> PathBuf {
    let mut dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    while !dir.join("rust-toolchain.toml").is_file() {
        assert!(dir.pop(), "no workspace root above {}", env::var("CARGO_MANIFEST_DIR").unwrap());
    }
    dir
}

pub fn require_wasm_target() {
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

/// A `cargo build --release` of `packages` in `target_dir`, for `target`
/// (the host when `None`), free of the outer build's flags (coverage,
/// sanitizers, a host target do not apply to plugins).
pub fn cargo_build(workspace: &Path, target_dir: &Path, target: Option<&str>, packages: &[&str]) -> Command {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--release", "--target-dir"]).arg(target_dir);
    if let Some(target) = target {
        cmd.args(["--target", target]);
    }
    for package in packages {
        cmd.args(["-p", package]);
    }
    for var in
        ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR", "CARGO_BUILD_RUSTFLAGS"]
    {
        cmd.env_remove(var);
    }
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false");
    cmd
}

/// Build `crates` as wasm components; returns where the `.wasm` files are.
pub fn build_components(workspace: &Path, target_dir: &Path, crates: &[&WasmCrate]) -> PathBuf {
    require_wasm_target();
    let packages: Vec<&str> = crates.iter().map(|c| c.package.as_str()).collect();
    let mut cmd = cargo_build(workspace, target_dir, Some(TARGET), &packages);
    // Wasm SIMD (supported by every wasmtime we run on) speeds up line scanning.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-feature=+simd128");
    // Without the name section: a precompiled component carries a table of
    // its functions' names, and loading it was a tenth of a one-edit run
    // (#27; the 20-hunk diff of `bench/run` row 3 took 3-4% less time
    // stripped). `AGENT_APPLY_WASM_NAMES=1` keeps the names, for profiles
    // and for traps' backtraces to name functions.
    println!("cargo:rerun-if-env-changed=AGENT_APPLY_WASM_NAMES");
    let names = env::var_os("AGENT_APPLY_WASM_NAMES").is_some_and(|v| v == "1");
    cmd.env("CARGO_PROFILE_RELEASE_STRIP", if names { "debuginfo" } else { "symbols" });
    let status = cmd.status().expect("failed to run cargo to build the wasm plugins");
    if !status.success() {
        panic!("building the plugins for {TARGET} failed (see the errors above)");
    }
    target_dir.join(TARGET).join("release")
}

/// Where `build_components` put `package`'s component.
/// Build every plugin crate under `dirs` (relative to the workspace) as a
/// wasm component, telling cargo to rerun when they or the SDK change.
/// Returns the crates and the directory holding their components.
pub fn build_plugins_under(workspace: &Path, dirs: &[&str]) -> (Vec<WasmCrate>, PathBuf) {
    let sdk = ["plugins-sdk/src", "plugins-sdk/wit", "plugins-sdk/Cargo.toml", "Cargo.lock"];
    for path in sdk.iter().chain(dirs) {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    let crates: Vec<WasmCrate> = dirs.iter().flat_map(|dir| crates_in(&workspace.join(dir))).collect();
    for c in &crates {
        println!("cargo:rerun-if-changed={}", c.dir.display());
    }
    let artifacts =
        build_components(workspace, &workspace.join("target").join("wasm-plugins"), &crates.iter().collect::<Vec<_>>());
    (crates, artifacts)
}

pub fn component_path(artifacts: &Path, package: &str) -> PathBuf {
    artifacts.join(format!("{}.wasm", package.replace('-', "_")))
}
