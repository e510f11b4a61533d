//! The built-in formats come compiled to machine code, with what `formats`
//! shows of them, from the build: a first run compiles and runs nothing to
//! list or load them.

use predicates::prelude::*;

use crate::common::registry;
use crate::repo::TestRepo;

#[test]
fn built_in_formats_load_precompiled_without_compiling() {
    let cache = tempfile::tempdir().unwrap();
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    repo.apply()
        .env("AGENT_APPLY_CACHE_DIR", cache.path())
        .arg("formats")
        .assert()
        .success()
        .stderr(predicates::str::contains("compiling").not());
    let compiled: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    assert!(compiled.is_empty(), "built-in formats were compiled into the cache: {compiled:?}");
}

#[test]
fn listing_the_built_in_formats_runs_none_and_says_what_each_says_of_itself() {
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    for entry in registry.entries() {
        let listed = registry.summary(entry).unwrap();
        let info = registry.instantiate(entry).unwrap().info().unwrap();
        assert_eq!((listed.version, listed.summary), (info.version, info.summary), "{}", entry.name);
        // The name and aliases the registry takes from the format crate's
        // [package.metadata.agent-apply] are the ones the format gives.
        assert_eq!((&entry.name, &entry.aliases), (&info.name, &info.aliases), "{}", entry.name);
    }
    let written: Vec<_> = std::fs::read_dir(cache.path()).map(|d| d.collect()).unwrap_or_default();
    assert!(written.is_empty(), "nothing is cached for built-in formats: {written:?}");
}
