//! How host/build.rs links the binary: settings that make a start cheaper
//! where the toolchain allows them, each falling back to the default link
//! where it does not (#27).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// Every link setting below, for a build that runs where it is built.
pub fn configure() {
    println!("cargo::rustc-check-cfg=cfg(native_host)");
    println!("cargo::rustc-check-cfg=cfg(static_pie_entry)");
    pack_relative_relocations();
    order_symbols();
    static_unwinder();
    static_c_library();
    static_musl_start();
}

/// Whether the binary runs on the machine that builds it: the same
/// architecture and system, whatever its C library (a musl build runs on
/// the glibc machine that makes it).
pub fn runs_where_built() -> bool {
    let host = var("HOST");
    let mut parts = host.split('-');
    let arch = parts.next().unwrap_or_default();
    let os_matches = parts.any(|part| part == var("CARGO_CFG_TARGET_OS"));
    arch == var("CARGO_CFG_TARGET_ARCH") && os_matches
}

/// Links the binary with packed relative relocations (DT_RELR) where the
/// loader takes them: a PIE this size has 45,000 of them, 1.1 MB that the
/// loader reads and applies at every start (a tenth of a millisecond and a
/// megabyte of memory). glibc loads DT_RELR from 2.36 and refuses a binary
/// that has them without, so the C library of the machine that builds it
/// (and, not cross-compiling, runs it) must say 2.36 or later. A linker
/// without the option warns and ignores it.
fn pack_relative_relocations() {
    // Rust's musl (1.2.5) relocates a static PIE from DT_RELR since 1.2.4.
    if native_musl() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if !native_gnu() {
        return;
    }
    let version = Command::new("getconf").arg("GNU_LIBC_VERSION").output();
    let version = version.map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string()).unwrap_or_default();
    if glibc_at_least(&version, (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Links the functions a run executes next to each other, in the order
/// `build/symbol-order/TARGET.txt` lists them (made by `bench/symbol-order`).
/// The kernel maps a binary's code in 64 KiB windows around each first
/// touch: with a run's 2,800 functions spread over 18 MB of text, a 10 MB
/// reply's run held 7 MiB of it, a tenth of its peak memory, and paid a
/// fault per window at every start; packed, it holds 1.9 MiB. Only for a
/// target with a file (the names are each target's own) and rustc's lld as
/// the linker (a configured linker may not take the option). A name the
/// build no longer has is skipped; a test says when a file is older than
/// the lock. (A path with a comma would be split by `-Wl,`: such a
/// checkout goes without.)
fn order_symbols() {
    let manifest = PathBuf::from(var("CARGO_MANIFEST_DIR"));
    let order = manifest.join("build").join("symbol-order").join(format!("{}.txt", var("TARGET")));
    println!("cargo:rerun-if-changed={}", order.display());
    // The names are the release build's (a profile's settings are in them).
    let usable = var("PROFILE") == "release" && order.is_file() && !order.to_string_lossy().contains(',');
    if !usable || own_linker() || !rust_lld() {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}

/// Whether the binary is linked by rustc's own lld: the glibc target's
/// default linker; for the musl build, the `ld.lld` rustc ships for `cc`,
/// chosen here as `-C link-self-contained=+linker` would (not stable).
fn rust_lld() -> bool {
    if var("TARGET") == "x86_64-unknown-linux-gnu" {
        return true;
    }
    if !native_musl() {
        return false;
    }
    let sysroot = Command::new(var("RUSTC")).args(["--print", "sysroot"]).output();
    let sysroot = sysroot.map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string()).unwrap_or_default();
    let wrappers = Path::new(&sysroot).join("lib/rustlib").join(var("HOST")).join("bin/gcc-ld");
    if sysroot.is_empty() || !wrappers.join("ld.lld").is_file() || wrappers.to_string_lossy().contains(',') {
        return false;
    }
    println!("cargo:rustc-link-arg-bins=-B{}", wrappers.display());
    println!("cargo:rustc-link-arg-bins=-fuse-ld=lld");
    true
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
    if !native_gnu() || own_linker() {
        return;
    }
    let Some(archive) = archive("libgcc_eh.a") else { return };
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

/// Links the binaries with the C library inside them (a static PIE, still
/// loaded at a random address) instead of loading `libc.so.6` and
/// `libm.so.6` at each start. Why: the dynamic loader opening, mapping and
/// relocating them, resolving the binary's 350 symbols against them, and
/// the page faults that follow, cost every run 0.36 ms (1.50 -> 1.14 ms for
/// `--version`), a tenth of the 20-hunk diff of `bench/run`.
///
/// How, given that rustc links std's `-lc`, `-lm`, ... dynamically unless
/// the whole build says `crt-static` (which no build of proc macros can):
/// a linker script of each name, in a directory only the binaries search,
/// stands for the static archive, and `-static-pie` picks the start files
/// that relocate the binary themselves.
///
/// A statically linked glibc cannot load a shared library (its `dlopen`
/// gives the library a second C library, which crashes it), so trusted
/// native plugins then run in a small dynamically linked helper, compiled
/// here from `native_host.c` and embedded (cfg `native_host`).
///
/// Only for a native glibc build with the default linker driver, where
/// `cc` finds every archive and compiles the helper; elsewhere the binary
/// is linked as before and loads native plugins itself.
fn static_c_library() {
    println!("cargo:rerun-if-env-changed=AGENT_APPLY_DYNAMIC_LIBC");
    if !native_gnu() || own_linker() || !var("AGENT_APPLY_DYNAMIC_LIBC").is_empty() {
        return;
    }
    let lib = |name: &str| archive(&format!("lib{name}.a"));
    // rcrt1.o: the start file of a static PIE (glibc 2.27 and later).
    let [Some(c), Some(gcc), Some(gcc_eh), Some(_)] = [lib("c"), lib("gcc"), lib("gcc_eh"), archive("rcrt1.o")] else {
        return;
    };
    // std names these too; since glibc 2.34 they are empty archives.
    let mut inputs = vec![("c".to_string(), format!("GROUP({c} {gcc} {gcc_eh})"))];
    for name in ["m", "dl", "rt", "pthread", "util"] {
        let Some(path) = lib(name) else { return };
        inputs.push((name.to_string(), format!("INPUT({path})")));
    }
    if !native_plugin_helper() {
        println!("cargo:warning=the native plugin helper did not compile; the binary loads the C library dynamically");
        return;
    }
    let dir = PathBuf::from(var("OUT_DIR")).join("static-libc");
    fs::create_dir_all(&dir).unwrap();
    for (name, script) in inputs {
        fs::write(dir.join(format!("lib{name}.so")), format!("{script}\n")).unwrap();
    }
    // `-L` counts for every `-l`, wherever it stands; given to the binaries
    // alone, the test executables keep the shared C library.
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    println!("cargo:rustc-link-arg-bins=-static-pie");
    static_pie_entry();
}

/// The musl build (`--target x86_64-unknown-linux-musl`), a static PIE by
/// default, starts with less than glibc's: no dynamic loader to skip, and
/// none of the 68 `cpuid` instructions (7 µs each on a virtual machine)
/// with which a static glibc sizes its caches at every start. It gets the
/// same entry point and native plugin helper as the static glibc build.
/// The helper is compiled with this machine's `cc`, against its glibc: it
/// loads plugins built for that C library.
fn static_musl_start() {
    if !native_musl() || own_linker() || !var("HOST").ends_with("-gnu") {
        return;
    }
    if !native_plugin_helper() {
        println!("cargo:warning=the native plugin helper did not compile; native plugins will not load");
        return;
    }
    static_pie_entry();
}

/// Compiles `native_host.c` into OUT_DIR for the binary to embed (cfg
/// `native_host`); false when this machine's `cc` cannot.
fn native_plugin_helper() -> bool {
    let source = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("build").join("native_host.c");
    println!("cargo:rerun-if-changed={}", source.display());
    let helper = PathBuf::from(var("OUT_DIR")).join("native-host");
    let compiled = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&helper)
        .arg(&source)
        .arg("-ldl")
        .status()
        .is_ok_and(|status| status.success());
    if compiled {
        println!("cargo:rustc-cfg=native_host");
    }
    compiled
}

/// The entry point of src/start.rs, which prefaults the relocated data.
fn static_pie_entry() {
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64" {
        println!("cargo:rustc-link-arg-bins=-Wl,-e,agent_apply_start");
        println!("cargo:rustc-cfg=static_pie_entry");
    }
}

/// Whether this build makes a binary for the glibc Linux it runs on.
fn native_gnu() -> bool {
    var("TARGET") == var("HOST") && var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu"
}

/// Whether this build makes a static musl binary for the Linux it runs on.
fn native_musl() -> bool {
    runs_where_built() && var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "musl"
}

/// Where `cc` finds the library file `file`: `None` when it has none (it
/// then answers the bare name), or a path a linker script cannot quote.
fn archive(file: &str) -> Option<String> {
    let answer = Command::new("cc").arg(format!("-print-file-name={file}")).output().ok()?;
    let path = String::from_utf8_lossy(&answer.stdout).trim().to_string();
    let usable = Path::new(&path).is_absolute() && Path::new(&path).is_file() && !path.contains(['(', ')', '"', ' ']);
    usable.then_some(path)
}
