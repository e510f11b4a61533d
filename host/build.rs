//! Builds the built-in format plugins as wasm components in their own target
//! directory, precompiles them for this machine with each of the runtime's
//! engine configurations (one per way of stopping a call), and embeds the
//! wasm and the code in the binary: a first run loads machine code instead
//! of compiling. Names and aliases come from each format's
//! `[package.metadata.agent-apply]`, so resolving a name needs no plugin load.
//! The test and example plugins are built by tests/artifacts, for tests only.

#[path = "src/runtime/engine.rs"]
mod engine;
#[path = "build/wasm.rs"]
mod wasm;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::{env, fs};

use sha2::{Digest, Sha256};

fn main() {
    pack_relative_relocations();
    order_symbols();
    static_unwinder();
    let workspace = wasm::workspace();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let (crates, artifacts) = wasm::build_plugins_under(&workspace, &["formats"]);
    let precompiler = Precompiler::for_this_build(&out_dir);

    let mut table = String::from(
        "/// Built-in formats, compiled to wasm components by build.rs.\npub static BUILTIN_FORMATS: &[BuiltinFormat] = &[\n",
    );
    for c in &crates {
        let file = wasm::component_path(&artifacts, &c.package);
        let bytes = fs::read(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let copy = out_dir.join(file.file_name().unwrap());
        fs::write(&copy, &bytes).unwrap();
        let digest = hex(&Sha256::digest(&bytes));
        let (name, aliases) = format_name(c);
        let (precompiled, summary, hints) = match &precompiler {
            Some(p) => {
                let [trap, exit] = p.precompile(&c.package, &bytes, &digest);
                let (version, summary, hints) = p.info(&trap);
                (
                    format!("Some(Precompiled {{ trap: include_bytes!({trap:?}), exit: include_bytes!({exit:?}) }})"),
                    format!("Some(({version:?}, {summary:?}))"),
                    format!("Some(&{hints:?})"),
                )
            }
            None => ("None".into(), "None".into(), "None".into()),
        };
        table.push_str(&format!(
            "    BuiltinFormat {{ name: {name:?}, aliases: &{aliases:?}, wasm: include_bytes!({copy:?}), sha256: {digest:?}, \
             precompiled: {precompiled}, summary: {summary}, detect_hints: {hints} }},\n",
        ));
    }
    table.push_str("];\n");
    fs::write(out_dir.join("builtin_formats.rs"), table).unwrap();
}

/// Links the binary with packed relative relocations (DT_RELR) where the
/// loader takes them: a PIE this size has 45,000 of them, 1.1 MB that the
/// loader reads and applies at every start (a tenth of a millisecond and a
/// megabyte of memory). glibc loads DT_RELR from 2.36 and refuses a binary
/// that has them without, so the C library of the machine that builds it
/// (and, not cross-compiling, runs it) must say 2.36 or later. A linker
/// without the option warns and ignores it.
fn pack_relative_relocations() {
    if var("TARGET") != var("HOST") || var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    let version = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output();
    let version = version.map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string()).unwrap_or_default();
    if glibc_at_least(&version, (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Links the functions a run executes next to each other, in the order
/// `build/symbol-order.txt` lists them (made by `bench/symbol-order`). The
/// kernel maps a binary's code in 64 KiB windows around each first touch:
/// with a run's 2,800 functions spread over 18 MB of text, a 10 MB reply's
/// run held 7 MiB of it, a tenth of its peak memory, and paid a fault per
/// window at every start; packed, it holds 1.9 MiB. Only where the names
/// were made (x86_64 Linux, glibc) and the linker is rustc's own lld: a
/// configured linker may not take the option. A name the build no longer
/// has is skipped; a test says when the file is older than the lock.
/// (A path with a comma would be split by `-Wl,`: such a checkout goes
/// without.)
fn order_symbols() {
    let manifest = PathBuf::from(var("CARGO_MANIFEST_DIR"));
    let order = manifest.join("build").join("symbol-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    // The names are the release build's (a profile's settings are in them).
    let usable = var("TARGET") == "x86_64-unknown-linux-gnu" && var("PROFILE") == "release";
    if !usable || own_linker() || !order.is_file() || order.to_string_lossy().contains(',') {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}

/// Links GCC's unwinder (`libgcc_eh.a`) into the binaries instead of
/// loading `libgcc_s.so.1`, which std asks for by name (`-lgcc_s`): a
/// linker script of that name in `OUT_DIR`, searched first, stands for the
/// static archive. Why: loading the library costs every run about 0.2 ms
/// on a virtual machine, most of it its constructor asking the CPU its
/// features (`cpuid` traps to the hypervisor, 12 µs each here); the
/// 20-hunk diff of `bench/run` takes 5 ms. The unwinder works the same
/// from the binary: it finds each loaded object's frames through
/// `dl_iterate_phdr`, so panics still unwind and backtraces still walk.
/// Only for a native glibc build with the default linker driver, whose
/// `cc` knows where the archive is; elsewhere the binary goes as before.
fn static_unwinder() {
    let native_gnu =
        var("TARGET") == var("HOST") && var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if !native_gnu || own_linker() {
        return;
    }
    let answer = std::process::Command::new("cc").arg("-print-file-name=libgcc_eh.a").output();
    let archive = answer.map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string()).unwrap_or_default();
    // `cc` answers the bare name when it has no such file.
    if !Path::new(&archive).is_absolute() || !Path::new(&archive).is_file() || archive.contains(['(', ')', '"']) {
        return;
    }
    let dir = PathBuf::from(var("OUT_DIR")).join("static-unwinder");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("libgcc_s.so"), format!("INPUT({archive})\n")).unwrap();
    println!("cargo:rustc-link-search=native={}", dir.display());
}

/// Whether the build names its own linker: the options above are for
/// rustc's default one.
fn own_linker() -> bool {
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    !var("RUSTC_LINKER").is_empty()
        || var("CARGO_ENCODED_RUSTFLAGS").split('\x1f').any(|flag| flag.contains("linker") || flag.contains("fuse-ld"))
}

/// The build variable `name`, empty when unset.
fn var(name: &str) -> String {
    env::var(name).unwrap_or_default()
}

/// Whether `getconf GNU_LIBC_VERSION`'s answer (`glibc 2.36`) is `wanted` or later.
fn glibc_at_least(answer: &str, wanted: (u32, u32)) -> bool {
    let Some(version) = answer.strip_prefix("glibc ") else { return false };
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= wanted,
        _ => false,
    }
}

/// The format's name and aliases, from `[package.metadata.agent-apply]`.
fn format_name(c: &wasm::WasmCrate) -> (String, Vec<String>) {
    let manifest = wasm::manifest(&c.dir);
    let meta = manifest["package"]
        .get("metadata")
        .and_then(|m| m.get("agent-apply"))
        .unwrap_or_else(|| panic!("{}: Cargo.toml lacks [package.metadata.agent-apply]", c.package));
    let aliases = meta
        .get("aliases")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (meta["name"].as_str().unwrap().to_string(), aliases)
}

/// Compiles components to machine code for the machine that builds (and,
/// for `cargo install`, runs) the binary, once for each way of stopping a
/// call ([`engine::Stop`]), keeping each result in OUT_DIR by digest and
/// engine so an unchanged format is not compiled again.
struct Precompiler {
    /// An engine and its key for each way, in `Stop::ALL`'s order.
    engines: [(wasmtime::Engine, u64); 2],
    dir: PathBuf,
}

impl Precompiler {
    /// `None` when cross-compiling: code compiled for this machine would not
    /// load on the target, and the binary then compiles on first use instead.
    fn for_this_build(out_dir: &Path) -> Option<Self> {
        if env::var("TARGET").ok() != env::var("HOST").ok() {
            println!("cargo:warning=cross-compiling: the built-in formats are compiled on first use, not now");
            return None;
        }
        let engines = engine::Stop::ALL.map(|stop| {
            let engine =
                wasmtime::Engine::new(&engine::config(stop)).expect("the runtime's engine configuration is valid");
            let mut hasher = DefaultHasher::new();
            engine.precompile_compatibility_hash().hash(&mut hasher);
            (engine, hasher.finish())
        });
        Some(Precompiler { engines, dir: out_dir.join("precompiled") })
    }

    /// The paths of `wasm` compiled to machine code, one for each way of
    /// stopping a call.
    fn precompile(&self, package: &str, wasm: &[u8], digest: &str) -> [PathBuf; 2] {
        let paths = self
            .engines
            .each_ref()
            .map(|(_, key)| self.dir.join(format!("{package}-{}-{key:016x}.cwasm", &digest[..16])));
        fs::create_dir_all(&self.dir).unwrap();
        for ((engine, _), path) in self.engines.iter().zip(&paths) {
            if path.is_file() {
                continue;
            }
            let code = engine
                .precompile_component(wasm)
                .unwrap_or_else(|e| panic!("cannot precompile the `{package}` format: {e:#}"));
            let temp = path.with_extension("tmp");
            fs::write(&temp, code).unwrap();
            fs::rename(&temp, path).unwrap();
        }
        // Older builds of this format, or builds for engines no longer used,
        // are of no further use.
        for old in fs::read_dir(&self.dir).unwrap().filter_map(|e| e.ok()) {
            let name = old.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("{package}-")) && !paths.iter().any(|p| p.ends_with(&name)) {
                let _ = fs::remove_file(old.path());
            }
        }
        paths
    }
}

/// A plugin's store for the one `info` call made here: WASI with nothing
/// granted, as at run time.
struct InfoCall {
    wasi: wasmtime_wasi::WasiCtx,
    table: wasmtime::component::ResourceTable,
}

impl wasmtime_wasi::WasiView for InfoCall {
    fn ctx(&mut self) -> wasmtime_wasi::WasiCtxView<'_> {
        wasmtime_wasi::WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl Precompiler {
    /// The version, summary and detect hints the format's `info` gives, so
    /// that listing the built-in formats needs no plugin run at all, and a
    /// reply that holds none of a format's hints needs no run of its `detect`.
    /// `code` is the format compiled for the first engine (`Stop::Trap`).
    fn info(&self, code: &Path) -> (String, String, Vec<String>) {
        use wasmtime::component::{Component, Linker, Val};
        // SAFETY: `code` was just written by `precompile_component` of this engine.
        let engine = &self.engines[0].0;
        let component = unsafe { Component::deserialize_file(engine, code) }.expect("precompiled just now");
        let mut linker = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI links into a new linker");
        let state = InfoCall { wasi: wasmtime_wasi::WasiCtx::builder().build(), table: Default::default() };
        let mut store = wasmtime::Store::new(engine, state);
        store.set_epoch_deadline(u64::MAX);
        let instance = linker.instantiate(&mut store, &component).expect("a built-in format instantiates");
        let plugin = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_string())
            .find(|name| name.starts_with("agent-apply:format/plugin@"))
            .expect("a built-in format exports the plugin interface");
        let interface = instance.get_export_index(&mut store, None, &plugin).unwrap();
        let export = instance.get_export_index(&mut store, Some(&interface), "info").unwrap();
        let info = instance.get_func(&mut store, export).unwrap();
        let mut result = [Val::Bool(false)];
        info.call(&mut store, &[], &mut result).expect("`info` of a built-in format succeeds");
        let Val::Record(fields) = &result[0] else { panic!("`info` returns a record") };
        let field = |wanted: &str| match fields.iter().find(|(name, _)| name == wanted) {
            Some((_, Val::String(text))) => text.clone(),
            _ => panic!("`info` has no string field `{wanted}`"),
        };
        let hints = match fields.iter().find(|(name, _)| name == "detect-hints") {
            Some((_, Val::List(hints))) => hints
                .iter()
                .map(|hint| match hint {
                    Val::String(text) => text.clone(),
                    _ => panic!("a detect hint is a string"),
                })
                .collect(),
            _ => panic!("`info` has no list `detect-hints`"),
        };
        (field("version"), field("summary"), hints)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
