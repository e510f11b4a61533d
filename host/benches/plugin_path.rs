//! The plugin path: compiling a built-in format vs loading it from the
//! cache, instantiating it, and parse + apply of a 1 MB whole-file reply.
//! Target: with a warm cache, load + instantiate under 2 ms.

use std::hint::black_box;

use agent_apply::config::Config;
use agent_apply::registry::Registry;
use agent_apply::runtime::{ComponentCache, Limits, Runtime};
use agent_apply_sdk::types::File;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn registry(cache: ComponentCache) -> Registry {
    Registry::new(Runtime::new(cache, Limits::default()).unwrap(), &Config::default()).unwrap()
}

fn plugin_path(c: &mut Criterion) {
    let cache_dir = tempfile::tempdir().unwrap();
    let warm = registry(ComponentCache::at(cache_dir.path()));
    let cold = registry(ComponentCache::disabled());
    let whole = warm.find("whole").unwrap().clone();
    warm.load(&whole).unwrap();

    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("compile (no cache)", |b| b.iter(|| black_box(cold.load(&whole).unwrap())));
    group.finish();

    let mut group = c.benchmark_group("load");
    group.bench_function("cached", |b| b.iter(|| black_box(warm.load(&whole).unwrap())));
    group.bench_function("cached + instantiate", |b| b.iter(|| black_box(warm.instantiate(&whole).unwrap())));
    let loaded = warm.load(&whole).unwrap();
    group.bench_function("instantiate", |b| b.iter(|| black_box(loaded.instantiate().unwrap())));
    group.finish();

    let body: String = (0..25_000).map(|i| format!("line {i:>6} of the generated file\n")).collect();
    let reply = format!("big.txt\n```\n{body}```\n");
    let original = File::new("big.txt", body.replace("line", "LINE"));
    let mut group = c.benchmark_group("whole 1 MB reply");
    group.throughput(Throughput::Bytes(reply.len() as u64));
    group.sample_size(20);
    group.bench_function("instantiate + parse + apply", |b| {
        b.iter(|| {
            let mut instance = loaded.instantiate().unwrap();
            let parsed = instance.parse(&reply, &[]).unwrap();
            black_box(instance.apply(std::slice::from_ref(&original), &parsed.edits, &[]).unwrap().unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, plugin_path);
criterion_main!(benches);
