//! The built-in formats come compiled to machine code, with what `formats`
//! shows of them, from the build: a first run compiles and runs nothing to
//! list or load them (on Linux on x86-64 their code runs where it lies in
//! the binary; elsewhere loading keeps it in the cache, to be mapped by
//! later runs).

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

/// On Linux on x86-64 a run applies with a built-in format's code where it
/// lies in the binary: no cache is made for it, and in one that exists the
/// first run of a build only prunes what earlier builds kept (once, leaving
/// a marker) and keeps no code.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn a_run_with_a_built_in_format_keeps_no_code_in_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo::with(&[("a.txt", "a\n")]);
    let reply = "a.txt\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n";
    let missing = dir.path().join("cache");
    repo.apply().env("AGENT_APPLY_CACHE_DIR", &missing).arg("-").write_stdin(reply).assert().success();
    assert_eq!(repo.read("a.txt").unwrap(), b"b\n");
    assert!(!missing.exists(), "a cache was made");

    let old = dir.path().join("0123-of-an-old-build.cwasm");
    std::fs::write(&old, b"old machine code").unwrap();
    let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 24 * 3600);
    let times = std::fs::FileTimes::new().set_accessed(month_ago).set_modified(month_ago);
    std::fs::File::options().write(true).open(&old).unwrap().set_times(times).unwrap();
    let reply = reply.replace("a\n=", "b\n=").replace("=\nb", "=\nc");
    repo.apply().env("AGENT_APPLY_CACHE_DIR", dir.path()).arg("-").write_stdin(reply).assert().success();
    assert_eq!(repo.read("a.txt").unwrap(), b"c\n");
    let kept: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!old.exists(), "an old build's entry stays: {kept:?}");
    assert!(kept.iter().all(|n| n.to_string_lossy().ends_with(".pruned")), "{kept:?}");
}

#[test]
fn listing_the_built_in_formats_runs_none_and_says_what_each_says_of_itself() {
    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let listed: Vec<_> = registry.entries().iter().map(|entry| registry.summary(entry).unwrap()).collect();
    let written: Vec<_> = std::fs::read_dir(cache.path()).map(|d| d.collect()).unwrap_or_default();
    assert!(written.is_empty(), "listing wrote to the cache: {written:?}");
    for (entry, listed) in registry.entries().iter().zip(listed) {
        let info = registry.instantiate(entry).unwrap().info().unwrap();
        assert_eq!((listed.version, listed.summary), (info.version, info.summary), "{}", entry.name);
        // The name and aliases the registry takes from the format crate's
        // [package.metadata.agent-apply] are the ones the format gives.
        assert_eq!((&entry.name, &entry.aliases), (&info.name, &info.aliases), "{}", entry.name);
    }
    // Loading compiles nothing. On Linux on x86-64 each format's embedded
    // code runs where it lies and no code is kept in the cache; elsewhere
    // the cache keeps that code, byte for byte (and a checksum).
    let entries = std::fs::read_dir(cache.path()).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or(vec![]);
    let mut kept: Vec<Vec<u8>> = entries
        .iter()
        .filter(|path| path.extension().is_some_and(|x| x == "cwasm"))
        .map(|path| std::fs::read(path).unwrap())
        .collect();
    kept.iter_mut().for_each(|bytes| bytes.truncate(bytes.len() - 8));
    let mut embedded: Vec<Vec<u8>> = match cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        true => Vec::new(),
        false => agent_apply::registry::BUILTIN_FORMATS.iter().map(|f| f.precompiled.unwrap().trap.to_vec()).collect(),
    };
    kept.sort();
    embedded.sort();
    assert!(kept == embedded, "the cache holds something other than the built-ins' embedded code");
}

/// With the host's `keep-payloads` option a built-in format keeps its typed
/// payloads in the instance, and each edit's payload is a short reference:
/// the same edits apply again (the host retries them on other files, or
/// rebased), another instance cannot use them, and without the option the
/// payload is the JSON any instance reads.
#[test]
fn a_built_in_format_keeps_its_payloads_in_the_instance_that_parsed_them() {
    use agent_apply_sdk::KEEP_PAYLOADS;
    use agent_apply_sdk::types::{File, OptionValue};

    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let entry = registry.entries().iter().find(|e| e.name == "editblock").unwrap();
    let keep = [OptionValue { key: KEEP_PAYLOADS.into(), value: "on".into() }];
    let reply = "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n";
    let files = [File::new("a.py", "x = 1\n")];
    let applied = |output: agent_apply_sdk::types::ApplyOutput| output.outcomes[0].message.clone();

    let mut instance = registry.instantiate(entry).unwrap();
    let kept = instance.parse(reply, &keep).unwrap().edits;
    assert!(kept[0].payload.starts_with("kept:") && kept[0].payload.len() < 20, "{}", kept[0].payload);
    let first = applied(instance.apply(&files, &kept, &keep).unwrap().unwrap());
    assert_eq!(applied(instance.apply(&files, &kept, &keep).unwrap().unwrap()), first);

    let refused = registry.instantiate(entry).unwrap().apply(&files, &kept, &keep).unwrap().unwrap_err();
    assert!(refused.contains("payload reference"), "{refused}");

    let json = registry.instantiate(entry).unwrap().parse(reply, &[]).unwrap().edits;
    assert!(json[0].payload.starts_with('{'), "{}", json[0].payload);
    assert_eq!(applied(registry.instantiate(entry).unwrap().apply(&files, &json, &[]).unwrap().unwrap()), first);
}

/// A run that shows no summaries says so (`summaries = off`): every
/// built-in then gives its example's edits without one, kept or not, with
/// the same paths and spans, and they apply as the summarised ones do. A
/// plain run asks for none; a preview (`--interactive`) does, and gets them.
#[test]
fn a_built_in_format_leaves_out_the_summaries_a_run_does_not_show() {
    use agent_apply::pipeline::{self, ApplyOptions};
    use agent_apply::workspace::Workspace;
    use agent_apply_sdk::types::{Edit, OptionValue};
    use agent_apply_sdk::{KEEP_BY_INDEX, KEEP_PAYLOADS, SUMMARIES};

    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let option = |key: &str, value: &str| OptionValue { key: key.into(), value: value.into() };
    let keeping = [vec![], vec![option(KEEP_PAYLOADS, "on")], vec![option(KEEP_PAYLOADS, KEEP_BY_INDEX)]];
    for entry in registry.entries() {
        let mut instance = registry.instantiate(entry).unwrap();
        let info = instance.info().unwrap();
        let mut read_and_apply = |options: &[OptionValue]| {
            let edits = instance.parse(&info.example_reply, options).unwrap().edits;
            let indexes: Vec<u32> = (0..edits.len() as u32).collect();
            let kept = instance.latest_parse().map(|parse| (parse, indexes.as_slice()));
            let output = instance.apply_parsed(&info.example_files, &edits, kept, options).unwrap();
            (edits, output.expect("the example applies"))
        };
        for keep in &keeping {
            let name = &entry.name;
            let (shown, with) = read_and_apply(keep);
            let (without, applied) = read_and_apply(&[keep.clone(), vec![option(SUMMARIES, "off")]].concat());
            assert!(!shown.is_empty() && shown.iter().all(|e| !e.summary.is_empty()), "{name}: {shown:?}");
            assert!(without.iter().all(|e| e.summary.is_empty()), "{name}: {without:?}");
            let place = |edits: &[Edit]| edits.iter().map(|e| (e.path.clone(), e.span)).collect::<Vec<_>>();
            assert_eq!(place(&without), place(&shown), "{name}");
            assert_eq!(applied, with, "{name} applies its edits as before");
        }
    }

    let repo = TestRepo::with(&[("a.txt", "one\ntwo\n")]);
    let reply = "a.txt\n```\n<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n```\n";
    let summaries = |options: &ApplyOptions| {
        let mut workspace = Workspace::open(repo.path()).unwrap();
        let prepared = pipeline::prepare(&mut workspace, reply.to_string(), options).unwrap();
        prepared.edits().iter().map(|e| e.summary.clone()).collect::<Vec<_>>()
    };
    assert_eq!(summaries(&ApplyOptions::default()), [""]);
    assert_eq!(summaries(&ApplyOptions { summaries: true, ..ApplyOptions::default() }), ["replace 1 line with 1"]);
}

/// A built-in format exports contract 0.2's `kept-edits`: the edits its
/// latest `parse` kept apply by index, in any order and subset, as they do
/// by value; after another `parse` those indexes are stale, and the host
/// gives the edits back by value instead.
#[test]
fn a_built_in_format_applies_the_edits_its_latest_parse_kept_by_index() {
    use agent_apply_sdk::KEEP_PAYLOADS;
    use agent_apply_sdk::types::{ApplyOutput, Edit, File, OptionValue};

    let cache = tempfile::tempdir().unwrap();
    let registry = registry(cache.path());
    let keep = [OptionValue { key: KEEP_PAYLOADS.into(), value: "on".into() }];
    let reply = "a.py\n```\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n\
                 a.py\n```\n<<<<<<< SEARCH\ny = 1\n=======\ny = 3\n>>>>>>> REPLACE\n```\n";
    let files = [File::new("a.py", "x = 1\ny = 1\n")];
    for entry in registry.entries() {
        let mut instance = registry.instantiate(entry).unwrap();
        instance.parse("", &keep).unwrap();
        let kept_nothing = instance.latest_parse().unwrap();
        assert!(
            matches!(instance.apply_kept(&files, kept_nothing, &[0], &keep), Some(Ok(Err(e))) if e.contains("names no kept edit")),
            "{}: an index past the kept edits is refused",
            entry.name
        );
    }
    let entry = registry.entries().iter().find(|e| e.name == "editblock").unwrap();
    let mut instance = registry.instantiate(entry).unwrap();
    let edits = instance.parse(reply, &keep).unwrap().edits;
    let parse = instance.latest_parse().expect("a parse that kept its edits");
    let by_value = |instance: &mut agent_apply::runtime::PluginInstance, edits: &[&Edit]| {
        instance.apply(&files, edits, &keep).unwrap().unwrap()
    };
    let both = by_value(&mut instance, &[&edits[1], &edits[0]]);
    let second = by_value(&mut instance, &[&edits[1]]);
    let by_index = |instance: &mut agent_apply::runtime::PluginInstance, indexes: &[u32]| -> ApplyOutput {
        instance.apply_kept(&files, parse, indexes, &keep).expect("asked by index").unwrap().unwrap()
    };
    assert_eq!(by_index(&mut instance, &[1, 0]), both);
    assert_eq!(by_index(&mut instance, &[1]), second);
    assert_eq!(both.changes.len(), 1);
    assert_eq!(both.outcomes.iter().map(|o| o.edit).collect::<Vec<_>>(), [0, 1]);
    let twice = instance.apply_kept(&files, parse, &[0, 0], &keep).unwrap().unwrap().unwrap_err();
    assert!(twice.contains("edit 1 (index 0)") && twice.contains("given twice"), "{twice}");
    // Refused by index, the edits go back by value (and apply).
    let given: Vec<&Edit> = edits.iter().collect();
    let fell_back = instance.apply_parsed(&files, &given, Some((parse, &[0, 0])), &keep).unwrap().unwrap();
    assert_eq!(fell_back.outcomes.len(), 2);

    // Kept for `apply-kept` alone, the edits carry no payload: by index
    // they apply, by value they cannot, and a refusal by index stands.
    let by_index = [OptionValue { key: KEEP_PAYLOADS.into(), value: agent_apply_sdk::KEEP_BY_INDEX.into() }];
    let bare = instance.parse(reply, &by_index).unwrap().edits;
    assert!(bare.iter().all(|e| e.payload.is_empty()), "{bare:?}");
    let parse = instance.latest_parse().expect("a parse that kept its edits");
    let bare_given: Vec<&Edit> = bare.iter().collect();
    let applied = instance.apply_parsed(&files, &bare_given, Some((parse, &[1, 0])), &by_index).unwrap().unwrap();
    assert_eq!(applied, both);
    assert!(instance.apply(&files, &bare_given, &by_index).unwrap().unwrap_err().contains("cannot read"));
    let refused = instance.apply_parsed(&files, &bare_given, Some((parse, &[0, 0])), &by_index).unwrap();
    assert!(refused.unwrap_err().contains("given twice"));

    instance.parse(reply, &[]).unwrap();
    assert_eq!(instance.latest_parse(), None, "a parse without keep-payloads keeps nothing");
    assert!(instance.apply_kept(&files, parse, &[0], &keep).is_none(), "an earlier parse's indexes are not asked");
    let stale = instance.apply_parsed(&files, &given, Some((parse, &[0, 1])), &keep).unwrap().unwrap_err();
    assert!(stale.contains("earlier parse"), "{stale}");
}
