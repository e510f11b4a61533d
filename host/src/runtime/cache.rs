//! Compiled components on disk, keyed by the engine's compatibility hash and
//! the wasm's digest. Each file ends with a checksum of its contents; a
//! missing, stale, truncated or corrupt entry is recompiled, never fatal.
//!
//! The checksum is read once per entry: then the entry is synced to disk
//! (once, a few milliseconds) and a stamp beside it records the file it
//! vouches for (device, inode, size, modification and change times). Later
//! runs compare the stamp with the file instead of reading its megabyte,
//! about a twentieth of a small run's time. Any rewrite of the entry, in
//! place or by rename, changes what the stamp records (a change time cannot
//! be set back), so it is checked again.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use super::Stop;

const CHECKSUM_BYTES: usize = 8;

/// What `formats` shows of a plugin, kept beside its compiled form.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InfoSummary {
    pub version: String,
    pub summary: String,
}

/// Where compiled components live. `None` compiles every time.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
}

/// Feeds `Hash` output into xxh3, which, unlike std's hasher, is stable
/// across Rust releases.
struct StableHasher(Xxh3);

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0.digest()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl ComponentCache {
    /// A cache in `dir` (created on first write).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        ComponentCache { dir: Some(dir.into()) }
    }

    /// No cache: compile on every load.
    pub fn disabled() -> Self {
        ComponentCache { dir: None }
    }

    /// `$AGENT_APPLY_CACHE_DIR`, else the user's cache directory.
    pub fn default_location() -> Self {
        match std::env::var_os("AGENT_APPLY_CACHE_DIR") {
            Some(dir) => ComponentCache::at(dir),
            None => dirs::cache_dir().map_or_else(ComponentCache::disabled, |d| {
                ComponentCache::at(d.join("agent-apply").join("components"))
            }),
        }
    }

    /// The cache directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The key is the run's engine's: its configuration, not the CPU
    /// features the code was compiled for (an engine without a compiler has
    /// none). A cache shared by two CPUs is still sound: wasmtime refuses
    /// code that needs features this CPU lacks, and it is compiled again.
    fn entry_path(&self, engine: &Engine, digest: &str) -> Option<PathBuf> {
        let mut hasher = StableHasher(Xxh3::new());
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Some(self.dir.as_ref()?.join(format!("{:016x}-{}.cwasm", hasher.finish(), short(digest))))
    }

    fn info_path(&self, digest: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{}.info.json", short(digest))))
    }

    /// What the plugin with this digest said of itself, if it was asked before.
    pub fn info(&self, digest: &str) -> Option<InfoSummary> {
        serde_json::from_slice(&std::fs::read(self.info_path(digest)?).ok()?).ok()
    }

    /// Keep what the plugin with this digest said of itself. Best effort: a
    /// cache that cannot be written only costs the next listing a call.
    pub fn store_info(&self, digest: &str, info: &InfoSummary) {
        if let Some(path) = self.info_path(digest) {
            let _ = write_atomically(&path, &[&serde_json::to_vec(info).expect("info serializes")]);
        }
    }

    /// The compiled component for `wasm` (hex sha256 `digest`) for
    /// `engine`, which stops calls `stop`'s way: from the cache when a sound
    /// entry exists, otherwise compiled and stored.
    pub fn component(&self, engine: &Engine, stop: Stop, wasm: &[u8], digest: &str) -> Result<Component, String> {
        self.component_with(engine, stop, wasm, digest, || ())
    }

    /// The same, calling `before_compile` when there is no sound entry; what
    /// it returns (a status line, say) lives until the compile is done.
    pub fn component_with<T>(
        &self,
        engine: &Engine,
        stop: Stop,
        wasm: &[u8],
        digest: &str,
        before_compile: impl FnOnce() -> T,
    ) -> Result<Component, String> {
        if let Some(component) = self.cached(engine, digest) {
            return Ok(component);
        }
        let entry = self.entry_path(engine, digest);
        let _during = before_compile();
        // The run's engine may only load code: compiled by an engine that
        // is configured as it is, save for the compiler.
        let compiler = Engine::new(&super::engine::config(stop)).map_err(|e| format!("cannot compile: {e:#}"))?;
        let artifact = compiler.precompile_component(wasm).map_err(|e| format!("not a valid wasm component: {e:#}"))?;
        if let Some(path) = entry {
            // A cache that cannot be written only costs the next run a compile.
            let _ = write_entry(&artifact, &path);
        }
        // SAFETY: `artifact` was made just now by `precompile_component`, and
        // wasmtime checks that it fits `engine` before using it.
        unsafe { Component::deserialize(engine, &artifact) }
            .map_err(|e| format!("cannot load the compiled code: {e:#}"))
    }

    /// The sound entry for the wasm with this digest, mapped from the file.
    pub fn cached(&self, engine: &Engine, digest: &str) -> Option<Component> {
        read_entry(engine, &self.entry_path(engine, digest)?)
    }

    /// Make room in the cache once for each build of a built-in format
    /// whose code runs where it lies: it stores no entry, and what earlier
    /// builds stored would otherwise stay for good (see [`write_entry`]).
    /// A marker named by the format's digest says this build has pruned;
    /// a cache that does not exist has nothing to prune and is not made.
    /// Best effort, as every cache write.
    pub fn prune_once_for(&self, digest: &str) {
        let Some(dir) = self.dir.as_deref() else { return };
        let marker = dir.join(format!("{}.pruned", short(digest)));
        if marker.symlink_metadata().is_err() && std::fs::write(&marker, b"").is_ok() {
            prune(dir, &Budget::DEFAULT, std::time::SystemTime::now());
        }
    }

    /// Keep `artifact`, the compiled form of the wasm with this digest for
    /// `engine` (what `Engine::precompile_component` made). Best effort, as
    /// every cache write.
    pub fn store(&self, engine: &Engine, digest: &str, artifact: &[u8]) {
        if let Some(path) = self.entry_path(engine, digest) {
            let _ = write_entry(artifact, &path);
        }
    }
}

/// The part of a digest the cache's file names carry.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(32)]
}

fn read_entry(engine: &Engine, path: &Path) -> Option<Component> {
    // Mapped, not read: a read copies the whole artifact twice (into the heap,
    // then into executable memory), which costs more than the rest of a run.
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !only_ours(&meta) {
        return None;
    }
    let identity = identity(&meta);
    let stamp = stamp_path(path);
    if identity.is_none() || read_stamp(&stamp) != identity {
        if !checksum_holds(&file)? {
            return None;
        }
        // Durable before it is vouched for: a stamp that outlived a crash
        // must never speak for bytes that did not reach the disk.
        if let Some(identity) = identity.filter(|_| file.sync_all().is_ok()) {
            let _ = write_atomically(&stamp, &[identity.as_bytes()]);
        }
    }
    // SAFETY: the artifact was written by `Component::serialize` of an engine
    // with the same compatibility hash (it is in the file name), and the
    // checksum (or the stamp of the file it was read from) shows the bytes
    // are the ones written. A concurrent run can only rename another sound
    // entry for the same key over it.
    unsafe { Component::deserialize_file(engine, path) }.ok()
}

/// Whether the entry's last bytes are the checksum of the rest; `None` when
/// it cannot be read or is too short to hold one.
fn checksum_holds(file: &std::fs::File) -> Option<bool> {
    // SAFETY: entries are only ever replaced by rename, never rewritten in
    // place, so the mapped bytes cannot change while they are checked.
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    let split = map.len().checked_sub(CHECKSUM_BYTES)?;
    let (artifact, checksum) = map.split_at(split);
    Some(xxh3_64(artifact).to_le_bytes() == checksum)
}

/// Where the stamp of a verified entry is kept.
fn stamp_path(entry: &Path) -> PathBuf {
    entry.with_extension("verified")
}

/// How long after its last change an entry may be stamped. File times
/// are coarse (a clock tick; a second on some file systems): a rewrite in
/// the same tick as the stamped version would keep its times. Once this has
/// passed, any rewrite gets other times.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// What a stamp records of the file it vouches for; `None` where the
/// platform does not tell, or the file changed too recently to be told
/// apart from a rewrite (the checksum is then read).
#[cfg(unix)]
pub(super) fn identity(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let changed =
        std::time::UNIX_EPOCH + std::time::Duration::new(meta.ctime().try_into().ok()?, meta.ctime_nsec() as u32);
    if std::time::SystemTime::now().duration_since(changed).ok()? < SETTLED {
        return None;
    }
    Some(format!(
        "v1 {} {} {} {}.{} {}.{}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    ))
}

#[cfg(not(unix))]
pub(super) fn identity(_: &std::fs::Metadata) -> Option<String> {
    None
}

/// The stamp at `path`, if there is one that only this user could have
/// written (as for entries: it decides whether machine code is checked).
fn read_stamp(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    if !only_ours(&file.metadata().ok()?) {
        return None;
    }
    let mut text = String::new();
    file.take(256).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Whether only this user could have written the file of `meta`: an entry
/// is machine code run in this process (the built-in formats' too), so one
/// another user owns or may write is not used, whatever its checksum says.
#[cfg(unix)]
fn only_ours(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    #[cfg(target_os = "linux")]
    // SAFETY: geteuid has no preconditions and cannot fail.
    if meta.uid() != unsafe { libc::geteuid() } {
        return false;
    }
    meta.mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn only_ours(_: &std::fs::Metadata) -> bool {
    true
}

/// Store an entry, then make room: a new entry is written by a new build's
/// (or a new plugin's) first runs, and the ones before it would otherwise
/// stay for good (#27: 180 MB of old builds' entries on one machine).
fn write_entry(artifact: &[u8], path: &Path) -> std::io::Result<()> {
    let checksum = xxh3_64(artifact).to_le_bytes();
    write_atomically(path, &[artifact, &checksum])?;
    if let Some(dir) = path.parent() {
        prune(dir, &Budget::DEFAULT, std::time::SystemTime::now());
    }
    Ok(())
}

/// How much the cache keeps.
struct Budget {
    /// Anything not used for this long goes.
    unused_for: std::time::Duration,
    /// Past this many bytes of entries, the least recently used go first.
    bytes: u64,
}

impl Budget {
    const DEFAULT: Budget = Budget { unused_for: std::time::Duration::from_secs(30 * 24 * 3600), bytes: 512 << 20 };
}

/// A file of the cache, with when it was last used.
struct CacheFile {
    path: PathBuf,
    used: std::time::SystemTime,
    bytes: u64,
}

/// Remove from the cache directory what `budget` does not keep: entries
/// (each with its stamp), plugin summaries, markers of a prune
/// ([`ComponentCache::prune_once_for`]: one gone has the next run prune
/// again) and temporary files left by a crash that were not used for
/// `budget.unused_for`, then, while the
/// entries take more than `budget.bytes`, the least recently used entry.
/// "Used" is the file's access time (a run maps the entry, or reads the
/// summary), which the default `relatime` mount keeps to within a day; where
/// access times are not kept it is the time the file was written, and an
/// entry still in use is only written again by its next run. Best effort;
/// files of other names are left alone.
fn prune(dir: &Path, budget: &Budget, now: std::time::SystemTime) {
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    let mut entries = Vec::new();
    for file in listing.flatten() {
        let name = file.file_name();
        let name = name.to_string_lossy();
        let Ok(meta) = file.metadata() else { continue };
        let used = meta.accessed().into_iter().chain(meta.modified()).max().unwrap_or(now);
        let cached = CacheFile { path: file.path(), used, bytes: meta.len() };
        let stale = now.duration_since(cached.used).is_ok_and(|unused| unused > budget.unused_for);
        match name.rsplit_once('.').map_or("", |(_, extension)| extension) {
            "cwasm" if stale => remove_entry(&cached.path),
            "cwasm" => entries.push(cached),
            // A stamp speaks for its entry and goes with it.
            "verified" if !cached.path.with_extension("cwasm").exists() => drop(std::fs::remove_file(&cached.path)),
            _ if stale && (name.ends_with(".info.json") || name.ends_with(".pruned") || name.starts_with(".tmp")) => {
                drop(std::fs::remove_file(&cached.path))
            }
            _ => {}
        }
    }
    entries.sort_by_key(|entry| std::cmp::Reverse(entry.used));
    let mut total = 0;
    // The most recently used entry (the one just stored) stays, however big.
    for entry in entries.iter().skip(1) {
        total += entry.bytes;
        if total + entries[0].bytes > budget.bytes {
            remove_entry(&entry.path);
        }
    }
}

/// Remove an entry and its stamp. A run that has it mapped keeps its pages.
fn remove_entry(entry: &Path) {
    let _ = std::fs::remove_file(entry);
    let _ = std::fs::remove_file(stamp_path(entry));
}

/// Not synced to disk: every entry is checked when read (the checksum, or
/// the JSON), so one torn by a crash is only written again. A sync would
/// cost a first run tens of milliseconds.
fn write_atomically(path: &Path, pieces: &[&[u8]]) -> std::io::Result<()> {
    let dir = path.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    for piece in pieces {
        std::io::Write::write_all(&mut temp, piece)?;
    }
    temp.persist(path).map(drop).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 3600);

    /// A file of `bytes` bytes in `dir`, last used and written `ago` before `now`.
    fn file(dir: &Path, name: &str, bytes: usize, now: SystemTime, ago: Duration) {
        let path = dir.join(name);
        std::fs::write(&path, vec![0; bytes]).unwrap();
        let times = std::fs::FileTimes::new().set_accessed(now - ago).set_modified(now - ago);
        std::fs::File::options().write(true).open(&path).unwrap().set_times(times).unwrap();
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn what_was_not_used_for_a_month_goes_and_an_entry_takes_its_stamp_along() {
        let dir = tempfile::tempdir().unwrap();
        let (d, now) = (dir.path(), SystemTime::now());
        for (name, ago) in [
            ("0123-old.cwasm", 40 * DAY),
            ("0123-old.verified", 40 * DAY),
            ("4567-recent.cwasm", DAY),
            // Stamps are written once and stay with a used entry.
            ("4567-recent.verified", 40 * DAY),
            ("89ab-orphan.verified", DAY),
            ("old.info.json", 40 * DAY),
            ("recent.info.json", DAY),
            ("old.pruned", 40 * DAY),
            ("recent.pruned", DAY),
            (".tmpCRASHED", 40 * DAY),
            (".tmpWRITING", Duration::ZERO),
            ("notes.txt", 40 * DAY),
        ] {
            file(d, name, 10, now, ago);
        }
        prune(d, &Budget { unused_for: 30 * DAY, bytes: 1 << 20 }, now);
        assert_eq!(
            names(d),
            [
                ".tmpWRITING",
                "4567-recent.cwasm",
                "4567-recent.verified",
                "notes.txt",
                "recent.info.json",
                "recent.pruned"
            ]
        );
    }

    #[test]
    fn past_the_byte_budget_the_least_recently_used_entries_go_but_never_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let (d, now) = (dir.path(), SystemTime::now());
        for (name, ago) in [("a.cwasm", 3 * DAY), ("b.cwasm", 2 * DAY), ("c.cwasm", DAY)] {
            file(d, name, 400, now, ago);
        }
        let budget = |bytes| Budget { unused_for: 30 * DAY, bytes };
        prune(d, &budget(1000), now);
        assert_eq!(names(d), ["b.cwasm", "c.cwasm"]);
        file(d, "huge.cwasm", 5000, now, Duration::ZERO);
        prune(d, &budget(1000), now);
        assert_eq!(names(d), ["huge.cwasm"]);
    }

    #[test]
    fn a_build_whose_code_runs_in_place_prunes_the_cache_once_and_makes_none() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let digest = "cd".repeat(32);
        file(dir.path(), "0123-of-an-old-build.cwasm", 10, now, 40 * DAY);
        let cache = ComponentCache::at(dir.path());
        cache.prune_once_for(&digest);
        assert_eq!(names(dir.path()), [format!("{}.pruned", &digest[..32])]);
        file(dir.path(), "4567-of-another-old-build.cwasm", 10, now, 40 * DAY);
        cache.prune_once_for(&digest);
        assert_eq!(names(dir.path()).len(), 2, "pruned once for this build");

        let missing = dir.path().join("no-cache-yet");
        ComponentCache::at(&missing).prune_once_for(&digest);
        assert!(!missing.exists(), "a cache that does not exist is not made");
    }

    #[test]
    fn storing_an_entry_prunes_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        file(dir.path(), "0123-of-an-old-build.cwasm", 10, now, 40 * DAY);
        let cache = ComponentCache::at(dir.path());
        let engine = Engine::default();
        cache.store(&engine, &"ab".repeat(32), b"machine code");
        let kept = names(dir.path());
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].ends_with(&format!("-{}.cwasm", "ab".repeat(16))), "{kept:?}");
    }
}
