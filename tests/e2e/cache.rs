//! The compiled-component cache: reused when sound, recompiled when not.

use std::path::PathBuf;

use crate::common::registry;

fn cache_entries(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
}

#[test]
fn compiles_once_then_reuses_the_entry() {
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let whole = registry.find("whole").unwrap().clone();
    registry.instantiate(&whole).unwrap();
    let entries = cache_entries(cache.path());
    assert_eq!(entries.len(), 1, "{entries:?}");
    let written = std::fs::metadata(&entries[0]).unwrap().modified().unwrap();
    crate::common::registry(cache.path()).instantiate(&whole).unwrap().info().unwrap();
    assert_eq!(std::fs::metadata(&entries[0]).unwrap().modified().unwrap(), written, "a sound entry is not rewritten");
}

#[test]
fn corrupt_truncated_and_garbage_entries_are_recompiled() {
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let whole = registry.find("whole").unwrap().clone();
    registry.instantiate(&whole).unwrap();
    let entry = cache_entries(cache.path()).remove(0);
    let sound = std::fs::read(&entry).unwrap();

    let mut flipped = sound.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0xff;
    for damaged in [flipped, sound[..sound.len() / 3].to_vec(), b"not a component".to_vec(), Vec::new()] {
        std::fs::write(&entry, &damaged).unwrap();
        // A new registry, as a new run makes: one keeps what it loaded.
        let info = crate::common::registry(cache.path()).instantiate(&whole).unwrap().info().unwrap();
        assert_eq!(info.name, "whole");
        assert_eq!(std::fs::read(&entry).unwrap().len(), sound.len(), "the entry is rewritten whole");
    }
}

#[test]
fn an_unwritable_cache_only_costs_a_compile() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let registry = registry(&not_a_dir.join("cache"));
    let whole = registry.find("whole").unwrap().clone();
    assert_eq!(registry.instantiate(&whole).unwrap().info().unwrap().name, "whole");
}

#[test]
fn listing_formats_twice_instantiates_none_the_second_time() {
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let first: Vec<_> = registry.entries().iter().map(|e| registry.summary(e).unwrap()).collect();
    // What each plugin said of itself is kept by digest; the second listing
    // needs no compiled component at all.
    for entry in cache_entries(cache.path()).into_iter().filter(|p| p.extension().is_some_and(|x| x == "cwasm")) {
        std::fs::remove_file(entry).unwrap();
    }
    let second: Vec<_> = registry.entries().iter().map(|e| registry.summary(e).unwrap()).collect();
    assert_eq!(first, second);
    assert!(cache_entries(cache.path()).iter().all(|p| p.extension().is_none_or(|x| x != "cwasm")), "nothing compiled");
    let whole = registry.entries().iter().position(|e| e.name == "whole").unwrap();
    let info = registry.instantiate(&registry.entries()[whole]).unwrap().info().unwrap();
    assert_eq!((info.version, info.summary), (first[whole].version.clone(), first[whole].summary.clone()));
}
