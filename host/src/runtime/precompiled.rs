//! The built-in formats, compiled to machine code when the binary was built
//! (host/build.rs) and embedded beside their wasm. Where the engine can
//! publish code in place (`code_memory`: Linux on x86-64) that code runs
//! where it lies in the binary and nothing is read from disk. Elsewhere a
//! first run loads it from memory and keeps a copy in the on-disk cache;
//! later runs map that file instead, since loading from memory copies the
//! whole code into fresh pages, the largest part of a small run (#27). Only
//! when the code does not fit this engine or CPU (a binary built elsewhere,
//! or cross-compiled) is the wasm compiled, once, into the cache, with a
//! notice, since that takes seconds.

use wasmtime::Engine;
use wasmtime::component::Component;

use super::{ComponentCache, Stop};
use crate::progress;

/// A built-in format's embedded machine code, as an engine loads it.
#[derive(Debug, Clone, Copy)]
pub enum Embedded {
    /// Run where it lies: the engine publishes code with `code_memory`.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    InPlace(&'static [u8]),
    /// Loaded from memory once and kept in the cache, whose file later
    /// runs map (where code in place is not had, or another engine runs it).
    ViaCache(&'static [u8]),
    /// The binary carries none (it was cross-compiled).
    Missing,
}

/// The component of built-in format `name`: its embedded machine code if
/// it fits `engine` (which stops calls `stop`'s way), otherwise compiled
/// (or fetched from `cache`).
pub fn builtin_component(
    engine: &Engine,
    stop: Stop,
    cache: &ComponentCache,
    name: &str,
    wasm: &[u8],
    digest: &str,
    embedded: Embedded,
) -> Result<Component, String> {
    let why_not = match embedded {
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        Embedded::InPlace(code) => match super::code_memory::component_in_place(engine, code) {
            Some(Ok(component)) => {
                cache.prune_once_for(digest);
                return Ok(component);
            }
            // Not run in place (another engine runs it, or it could not be
            // published where it lies): a copy through the cache, which
            // compiles the wasm when the code fits no engine here.
            Some(Err(_)) | None => {
                return builtin_component(engine, stop, cache, name, wasm, digest, Embedded::ViaCache(code));
            }
        },
        Embedded::ViaCache(code) => {
            if let Some(component) = cache.cached(engine, digest) {
                return Ok(component);
            }
            // SAFETY: the bytes are what `Engine::precompile_component`
            // produced in this binary's build script, embedded unchanged;
            // wasmtime checks its version, configuration and the CPU
            // features in their header and refuses them, rather than
            // running them, if any differs.
            match unsafe { Component::deserialize(engine, code) } {
                Ok(component) => {
                    cache.store(engine, digest, code);
                    return Ok(component);
                }
                Err(e) => format!("{e:#}"),
            }
        }
        Embedded::Missing => "this binary was built without them (cross-compiled)".to_string(),
    };
    cache.component_with(engine, stop, wasm, digest, || {
        eprintln!(
            "agent-apply: compiling the built-in format `{name}` for this machine (once; kept in the cache): \
             its precompiled code does not fit: {}",
            first_line(&why_not)
        );
        progress::Status::start(format!("compiling the `{name}` format"))
    })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::BUILTIN_FORMATS;

    fn engine() -> Engine {
        engine_for(Stop::Trap)
    }

    fn engine_for(stop: Stop) -> Engine {
        Engine::new(&super::super::engine::config(stop)).unwrap()
    }

    #[test]
    fn the_embedded_code_fits_the_runtime_engine_of_each_way_to_stop_and_no_other() {
        for stop in Stop::ALL {
            let engine = engine_for(stop);
            for format in BUILTIN_FORMATS {
                let precompiled = format.precompiled.expect("built natively, so precompiled");
                for (other, code) in Stop::ALL.map(|s| (s, precompiled.code(s))) {
                    // SAFETY: as in `builtin_component`.
                    let loaded = unsafe { Component::deserialize(&engine, code) };
                    match other == stop {
                        true => assert!(loaded.is_ok(), "{}: {:#}", format.name, loaded.err().unwrap()),
                        // Code compiled without epoch checks must never run
                        // where a call is meant to trap (nor the reverse).
                        false => assert!(loaded.is_err(), "{}'s {other:?} code loaded for {stop:?}", format.name),
                    }
                }
            }
        }
    }

    /// Code that cannot run where it lies is loaded as on other targets:
    /// this code fits no engine, so the wasm is compiled once into the
    /// cache, and later loads take it from there.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn code_that_cannot_run_in_place_is_loaded_through_the_cache() {
        let runtime = super::super::Runtime::new(ComponentCache::disabled(), super::super::Limits::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::at(dir.path());
        let whole = whole();
        let foreign = Embedded::InPlace(b"machine code for another CPU");
        let engine = runtime.engine();
        builtin_component(engine, Stop::Trap, &cache, whole.name, whole.wasm, whole.sha256, foreign).unwrap();
        let compiled: Vec<_> = entries(dir.path()).into_iter().map(|(path, _)| path).collect();
        assert_eq!(compiled.len(), 1, "compiled into the cache: {compiled:?}");
        assert!(builtin_component(engine, Stop::Trap, &cache, whole.name, whole.wasm, whole.sha256, foreign).is_ok());
        assert_eq!(entries(dir.path()).len(), 1, "and taken from there");
    }

    #[test]
    fn code_that_does_not_fit_is_compiled_once_into_the_cache() {
        let engine = engine();
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::at(dir.path());
        let whole = whole();
        let foreign = Embedded::ViaCache(b"machine code for another CPU");
        builtin_component(&engine, Stop::Trap, &cache, whole.name, whole.wasm, whole.sha256, foreign).unwrap();
        let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "compiled into the cache: {entries:?}");
    }

    /// The cache's entries (not their stamps), as (path, bytes).
    fn entries(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let mut found: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|path| path.extension().is_some_and(|x| x == "cwasm"))
            .map(|path| {
                let bytes = std::fs::read(&path).unwrap();
                (path, bytes)
            })
            .collect();
        found.sort();
        found
    }

    /// A cache in a fresh directory, and `whole` loaded into it once from
    /// its embedded code, as where code is not published in place.
    struct LoadedOnce {
        engine: Engine,
        dir: tempfile::TempDir,
        cache: ComponentCache,
        code: &'static [u8],
    }

    fn whole() -> &'static crate::registry::BuiltinFormat {
        BUILTIN_FORMATS.iter().find(|f| f.name == "whole").unwrap()
    }

    impl LoadedOnce {
        fn new() -> Self {
            let (engine, dir) = (engine(), tempfile::tempdir().unwrap());
            let cache = ComponentCache::at(dir.path());
            let code = whole().precompiled.unwrap().code(Stop::Trap);
            let loaded = LoadedOnce { engine, dir, cache, code };
            loaded.load();
            loaded
        }

        fn load(&self) {
            let whole = whole();
            builtin_component(
                &self.engine,
                Stop::Trap,
                &self.cache,
                whole.name,
                whole.wasm,
                whole.sha256,
                Embedded::ViaCache(self.code),
            )
            .unwrap();
        }

        fn cached(&self) -> bool {
            self.cache.cached(&self.engine, whole().sha256).is_some()
        }
    }

    #[test]
    fn the_first_load_keeps_the_embedded_code_in_the_cache_and_later_loads_map_it() {
        let once = LoadedOnce::new();
        let kept = entries(once.dir.path());
        assert_eq!(kept.len(), 1, "one entry: {:?}", kept.iter().map(|e| &e.0).collect::<Vec<_>>());
        let (path, bytes) = &kept[0];
        assert_eq!(&bytes[..once.code.len()], once.code, "the embedded code, unchanged");
        assert_eq!(bytes.len(), once.code.len() + 8, "and its checksum");
        assert!(once.cached(), "a sound entry, mapped from the file");

        // A later load takes the entry; one torn by a crash is written again.
        std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(!once.cached(), "a torn entry is not used");
        once.load();
        assert_eq!(entries(once.dir.path()), kept, "the torn entry was replaced by a sound one");
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_others_may_write_is_not_run() {
        use std::os::unix::fs::PermissionsExt;
        let once = LoadedOnce::new();
        let (path, _) = entries(once.dir.path()).remove(0);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!once.cached(), "sound, but anyone could have written it");
        once.load();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "written again, for this user only: {mode:o}");
        assert!(once.cached());
    }

    /// The stamps beside the cache's entries.
    fn stamps(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let paths = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
        paths.filter(|path| path.extension().is_some_and(|x| x == "verified")).collect()
    }

    /// Flip a byte in the middle of `path`, in place: same file, same size.
    fn flip_in_place(path: &std::path::Path) {
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        let middle = file.metadata().unwrap().len() / 2;
        let mut byte = [0u8];
        file.seek(SeekFrom::Start(middle)).unwrap();
        file.read_exact(&mut byte).unwrap();
        file.seek(SeekFrom::Start(middle)).unwrap();
        file.write_all(&[byte[0] ^ 0xff]).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_settled_entry_is_stamped_and_any_rewrite_is_checked_again() {
        let once = LoadedOnce::new();
        assert!(once.cached());
        assert!(stamps(once.dir.path()).is_empty(), "just written: its times could still be a rewrite's");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert!(once.cached(), "checked, synced and stamped");
        let stamped = stamps(once.dir.path());
        assert_eq!(stamped.len(), 1, "{stamped:?}");
        assert!(once.cached(), "the stamp vouches for the entry");

        // Rewritten in place (a byte of machine code changed, the size kept):
        // the stamp no longer describes the file, so the checksum is read.
        let (path, _) = entries(once.dir.path()).remove(0);
        flip_in_place(&path);
        assert!(!once.cached(), "a rewritten entry is never run on an old stamp");
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert!(!once.cached(), "nor once its new times have settled");
        once.load();
        assert!(once.cached(), "written again, sound");
    }

    #[cfg(unix)]
    #[test]
    fn a_stamp_others_may_write_vouches_for_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let once = LoadedOnce::new();
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert!(once.cached());
        let stamp = stamps(once.dir.path()).remove(0);
        std::fs::set_permissions(&stamp, std::fs::Permissions::from_mode(0o666)).unwrap();
        // A damaged entry under a stamp that claims it: what the stamp says
        // is not taken, since anyone could have written it.
        let (path, _) = entries(once.dir.path()).remove(0);
        flip_in_place(&path);
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let damaged = std::fs::metadata(&path).unwrap();
        let claim = super::super::cache::identity(&damaged).expect("settled");
        std::fs::write(&stamp, claim).unwrap();
        std::fs::set_permissions(&stamp, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!once.cached(), "the checksum is read, and the damaged entry refused");
    }
}
