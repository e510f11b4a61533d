//! One format, `ops-json`, as a wasm component (loaded from config), as a
//! trusted native library and, when `AGENT_APPLY_BENCH_PYTHON_WASM` names the
//! component `examples/python-plugin/build.sh` built, as the Python
//! component: load and call costs for a small reply and a 1 MB reply.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use agent_apply::config::{Config, PluginConfig};
use agent_apply::registry::Registry;
use agent_apply::runtime::{ComponentCache, Limits, NativePlugin, PluginInstance, Runtime};
use agent_apply_sdk::types::File;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const OPS_JSON_WASM: &str = agent_apply_test_artifacts::OPS_JSON_WASM;
const OPS_JSON_NATIVE: &str = agent_apply_test_artifacts::OPS_JSON_NATIVE;

fn registry(cache: ComponentCache, python: Option<&str>) -> Registry {
    let plugin = |path: &str| PluginConfig {
        path: path.into(),
        sha256: None,
        native: false,
        shadow: false,
        aliases: Vec::new(),
    };
    let mut plugins = vec![("ops-json".to_string(), plugin(OPS_JSON_WASM))];
    plugins.extend(python.map(|path| ("ops-json-py".to_string(), plugin(path))));
    let config = Config { plugins: plugins.into_iter().collect(), ..Config::default() };
    let limits = Limits { timeout: Duration::from_secs(60), ..Limits::default() };
    Registry::new(Runtime::new(cache, limits).unwrap(), &config).unwrap()
}

/// A 1 MB file and a reply (about 1 MB) replacing its second half.
fn big_case() -> (File, String) {
    let lines: Vec<String> = (0..25_000).map(|i| format!("line {i:>6} of the generated file\n")).collect();
    let content: String = lines.concat();
    let search: String = lines[12_500..].concat();
    let replace = search.replace("generated", "rewritten");
    let op = serde_json::json!([{ "targetFile": "big.txt", "operation": { "type": "replace", "search": search, "replace": replace } }]);
    (File::new("big.txt", content), format!("```json\n{op}\n```\n"))
}

fn run(instance: &mut PluginInstance, reply: &str, files: &[File]) {
    let parsed = instance.parse(reply, &[]).unwrap();
    let out = instance.apply(files, &parsed.edits, &[]).unwrap().unwrap();
    assert!(out.outcomes.iter().all(|o| o.kind.is_none()), "{:?}", out.outcomes);
    black_box(out);
}

fn plugin_kinds(c: &mut Criterion) {
    // The first native load (dlopen, relocations) happens once per process,
    // so it is timed once here rather than by criterion.
    let first = Instant::now();
    let native = NativePlugin::load("ops-json", Path::new(OPS_JSON_NATIVE)).unwrap();
    println!("native first load (dlopen + ABI check): {:?}", first.elapsed());

    let python = std::env::var("AGENT_APPLY_BENCH_PYTHON_WASM").ok();
    let cache_dir = tempfile::tempdir().unwrap();
    let warm = registry(ComponentCache::at(cache_dir.path()), python.as_deref());
    let cold = registry(ComponentCache::disabled(), None);
    let entry = warm.find("ops-json").unwrap().clone();
    warm.load(&entry).unwrap();
    // Compiling the Python component (CPython inside) takes seconds: timed once.
    let python_entry = warm.find("ops-json-py").ok().cloned();
    if let Some(entry) = &python_entry {
        let first = Instant::now();
        warm.load(entry).unwrap();
        println!("python component first compile: {:?}", first.elapsed());
    }

    let mut group = c.benchmark_group("ops-json load");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    group.bench_function("wasm: compile (no cache) + instantiate", |b| {
        b.iter(|| black_box(cold.instantiate(&entry).unwrap()))
    });
    group
        .bench_function("wasm: cached load + instantiate", |b| b.iter(|| black_box(warm.instantiate(&entry).unwrap())));
    if let Some(python_entry) = &python_entry {
        group.bench_function("python: cached load + instantiate", |b| {
            b.iter(|| black_box(warm.instantiate(python_entry).unwrap()))
        });
    }
    group.bench_function("native: load (already mapped) + instantiate", |b| {
        b.iter(|| black_box(NativePlugin::load("ops-json", Path::new(OPS_JSON_NATIVE)).unwrap()))
    });
    group.finish();

    let info = native.info().unwrap();
    let (big_file, big_reply) = big_case();
    let cases = [
        ("small reply", info.example_reply.clone(), info.example_files.clone()),
        ("1 MB reply", big_reply, vec![big_file]),
    ];
    for (label, reply, files) in &cases {
        let mut group = c.benchmark_group(format!("ops-json parse + apply, {label}"));
        group
            .throughput(Throughput::Bytes(reply.len() as u64))
            .sample_size(10)
            .measurement_time(Duration::from_secs(5));
        let mut wasm = warm.instantiate(&entry).unwrap();
        group.bench_function("wasm", |b| b.iter(|| run(&mut wasm, reply, files)));
        let mut native = PluginInstance::Native(native.clone());
        group.bench_function("native", |b| b.iter(|| run(&mut native, reply, files)));
        if let Some(python_entry) = &python_entry {
            let mut python = warm.instantiate(python_entry).unwrap();
            group.bench_function("python", |b| b.iter(|| run(&mut python, reply, files)));
        }
        group.finish();
    }
}

criterion_group!(benches, plugin_kinds);
criterion_main!(benches);
