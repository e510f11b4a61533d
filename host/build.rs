//! Builds the built-in format plugins as wasm components in their own target
//! directory, precompiles them for this machine with each of the runtime's
//! engine configurations (one per way of stopping a call), and embeds the
//! wasm and the code in the binary: a first run loads machine code instead
//! of compiling. Names and aliases come from each format's
//! `[package.metadata.agent-apply]`, so resolving a name needs no plugin load.
//! The test and example plugins are built by tests/artifacts, for tests only.

#[path = "src/runtime/engine.rs"]
mod engine;
#[path = "build/link.rs"]
mod link;
#[path = "build/wasm.rs"]
mod wasm;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::{env, fs};

use sha2::{Digest, Sha256};

fn main() {
    link::configure();
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
                    format!(
                        "Some(Precompiled {{ trap: include_page_aligned!({trap:?}), \
                         exit: include_page_aligned!({exit:?}) }})"
                    ),
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
    /// `None` when cross-compiling to another architecture or system: code
    /// compiled for this machine would not load there, and the binary then
    /// compiles on first use instead. Another C library on this machine
    /// (the musl build) runs the same code: wasmtime checks only those two.
    fn for_this_build(out_dir: &Path) -> Option<Self> {
        if !link::runs_where_built() {
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
