//! How the runtime's engine makes machine code executable, so that a
//! built-in format's code runs where it lies in the binary (#27).
//!
//! Why: the code build.rs compiled is embedded in the binary's read-only
//! data. Loaded from memory, wasmtime copies all of it into fresh pages (a
//! megabyte per format), so runs mapped a copy kept in the cache instead:
//! the entry's name hashed from the engine's settings, two files opened and
//! checked, a mapping made and protected, a dozen system calls per run.
//! Published in place, the code's pages are the binary's own, shared with
//! the page cache like the rest of it, and the cache is not read at all.
//!
//! Publishing a range makes it readable and executable, never writable, as
//! wasmtime's own publishing does. A range in the binary's image is never
//! unpublished: it is part of a static, and another component (the other
//! engine's, or the same format loaded again) may be running it. Code
//! anywhere else (a cached entry's mapping, a plugin compiled in memory)
//! goes back to readable and writable when its component is dropped, as
//! the trait asks.
//!
//! Only on Linux on x86-64: there wasmtime's own publishing is exactly this
//! `mprotect` (no branch-target marking, no cache maintenance), and adding
//! execute permission to a mapping of the running binary is always allowed.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use wasmtime::component::Component;
use wasmtime::{CustomCodeMemory, Engine};

use super::memory::page_size;

/// What the runtime's engine config is given (`Config::with_custom_code_memory`).
pub fn publisher() -> Arc<dyn CustomCodeMemory> {
    Arc::new(Publisher)
}

/// The component whose machine code is `code`, run where it lies, for
/// `engine` (configured with [`publisher`]); `None` when another engine
/// runs that code already. wasmtime registers each range of code once per
/// process, to tell a trap's code, so each embedded code is one component,
/// kept for the process (its code is a static anyway).
pub fn component_in_place(engine: &Engine, code: &'static [u8]) -> Option<Result<Component, String>> {
    static LOADED: Mutex<Vec<(usize, Component)>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let at = code.as_ptr() as usize;
    if let Some((_, component)) = loaded.iter().find(|(loaded_at, _)| *loaded_at == at) {
        return Engine::same(component.engine(), engine).then(|| Ok(component.clone()));
    }
    // SAFETY: `code` is what `Engine::precompile_component` produced in this
    // binary's build script, embedded unchanged in a static: it lives as
    // long as the process and nothing writes it (its pages are read-only,
    // and publishing only adds execute permission). wasmtime checks its
    // version, configuration and the CPU features in its header, and
    // refuses it rather than running it if any differs.
    let component = match unsafe { Component::deserialize_raw(engine, NonNull::from(code)) } {
        Ok(component) => component,
        Err(e) => return Some(Err(format!("{e:#}"))),
    };
    loaded.push((at, component.clone()));
    Some(Ok(component))
}

struct Publisher;

impl CustomCodeMemory for Publisher {
    fn required_alignment(&self) -> usize {
        page_size()
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        protect(ptr, len, libc::PROT_READ | libc::PROT_EXEC)
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        if in_image(ptr) {
            return Ok(());
        }
        protect(ptr, len, libc::PROT_READ | libc::PROT_WRITE)
    }
}

fn protect(ptr: *const u8, len: usize, protection: libc::c_int) -> wasmtime::Result<()> {
    // SAFETY: wasmtime passes a page-aligned range of a code memory it
    // owns (a mapping, or a static of this binary for code in place), and
    // no code runs from it while it is made writable.
    match unsafe { libc::mprotect(ptr.cast_mut().cast(), len, protection) } {
        0 => Ok(()),
        _ => Err(wasmtime::Error::msg(format!(
            "cannot change the protection of {len} bytes of plugin code: {}",
            std::io::Error::last_os_error()
        ))),
    }
}

/// Whether `ptr` lies in the binary's own image (its file's mapped
/// segments and its zero-filled data), as a static does.
fn in_image(ptr: *const u8) -> bool {
    unsafe extern "C" {
        // The linker's bounds of the image: its ELF header, its end.
        static __ehdr_start: u8;
        static _end: u8;
    }
    let (start, end) = (&raw const __ehdr_start as usize, &raw const _end as usize);
    (start..end).contains(&(ptr as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::BUILTIN_FORMATS;
    use crate::runtime::{ComponentCache, Limits, Runtime, Stop};

    const REPLY: &str = "a.txt\n```\nx\n```\n";

    #[test]
    fn a_built_in_runs_where_it_lies_and_keeps_no_code_in_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let whole = BUILTIN_FORMATS.iter().find(|f| f.name == "whole").unwrap();
        let code = whole.precompiled.expect("built natively, so precompiled").code(Stop::Trap);
        let load = || {
            let runtime = Runtime::new(ComponentCache::at(dir.path()), Limits::default()).unwrap();
            runtime.load_builtin(whole.name, whole.wasm, whole.sha256, Some(code)).unwrap()
        };
        let first = load();
        assert!(first.instantiate().unwrap().detect(REPLY).unwrap() > 0.0);
        // Another runtime's load of the same code, once the first is dropped.
        let second = load();
        drop(first);
        assert!(second.instantiate().unwrap().detect(REPLY).unwrap() > 0.0);
        let kept: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(kept.iter().all(|name| name.to_string_lossy().ends_with(".pruned")), "no code kept: {kept:?}");
    }

    #[test]
    fn code_another_engine_runs_in_place_is_not_loaded_in_place_again() {
        let whole = BUILTIN_FORMATS.iter().find(|f| f.name == "whole").unwrap();
        let code = whole.precompiled.unwrap().code(Stop::Trap);
        let runtime = Runtime::new(ComponentCache::disabled(), Limits::default()).unwrap();
        runtime.load_builtin(whole.name, whole.wasm, whole.sha256, Some(code)).unwrap();
        let mut config = crate::runtime::engine::config(Stop::Trap);
        config.enable_compiler(false).with_custom_code_memory(Some(publisher()));
        let other = Engine::new(&config).unwrap();
        assert!(component_in_place(&other, code).is_none());
        assert!(component_in_place(runtime.engine(), code).unwrap().is_ok(), "its own engine's, kept");
    }

    #[test]
    fn published_code_is_never_writable_and_what_is_not_in_the_image_is_given_back_writable() {
        let page = page_size();
        // SAFETY: a fresh private anonymous mapping of one page, unmapped below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let ptr = map.cast::<u8>().cast_const();
        Publisher.publish_executable(ptr, page).unwrap();
        assert_eq!(protection_of(ptr), "r-x");
        Publisher.unpublish_executable(ptr, page).unwrap();
        assert_eq!(protection_of(ptr), "rw-");
        // SAFETY: the mapping made above, used no more.
        unsafe { libc::munmap(map, page) };

        #[repr(C, align(4096))]
        struct Page([u8; 4096]);
        static IN_IMAGE: Page = Page([0xc3; 4096]);
        let ptr = IN_IMAGE.0.as_ptr();
        Publisher.publish_executable(ptr, IN_IMAGE.0.len()).unwrap();
        assert_eq!(protection_of(ptr), "r-x");
        Publisher.unpublish_executable(ptr, IN_IMAGE.0.len()).unwrap();
        assert_eq!(protection_of(ptr), "r-x", "a static stays as published");
    }

    /// The permissions `/proc/self/maps` gives the mapping holding `ptr`.
    fn protection_of(ptr: *const u8) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let at = ptr as usize;
        maps.lines()
            .find_map(|line| {
                let (range, rest) = line.split_once(' ')?;
                let (start, end) = range.split_once('-')?;
                let (start, end) = (usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?);
                (start..end).contains(&at).then(|| rest[..3].to_string())
            })
            .expect("the pointer is mapped")
    }

    #[test]
    fn a_static_lies_in_the_image_and_a_mapping_does_not() {
        static WITHIN: [u8; 4] = *b"code";
        assert!(in_image(WITHIN.as_ptr()));
        let heap = vec![0u8; 1 << 20];
        assert!(!in_image(heap.as_ptr()));
    }
}
