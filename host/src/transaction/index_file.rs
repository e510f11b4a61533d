//! The index file (`.git/index`) read and patched directly, for the commit
//! path's common case. libgit2 parses every entry into a map and validates
//! every path: at 100,000 files, its two reads and one write of the index
//! were nine tenths of a one-edit commit, where the run looks up a handful
//! of entries and rewrites the stat data and blob of the few it committed.
//!
//! What is not covered here is refused with [`Unsupported`], and the caller
//! goes through libgit2 as before: an unknown version, an extension git
//! requires (a split or sparse index), a bad checksum, a path added,
//! removed or conflicted, and an entry flagged or of a special mode.

use std::ops::Range;
use std::path::Path;

use git2::Oid;
use sha1::{Digest as _, Sha1};

const SIGNATURE: &[u8; 4] = b"DIRC";
const HEADER_LEN: usize = 12;
const HASH_LEN: usize = 20;
/// ctime and mtime (8 bytes each); dev, ino, mode, uid, gid, size (4 each);
/// the object id; the flags.
const FIXED_LEN: usize = 62;
const FLAGS_AT: usize = 60;
/// Where an entry keeps the file's size.
const SIZE_AT: usize = 36;
const ASSUME_VALID: u16 = 0x8000;
const EXTENDED: u16 = 0x4000;
const STAGE_SHIFT: u16 = 12;
/// Directory nesting deeper than this in the cache tree is not read here.
const MAX_TREE_DEPTH: usize = 1024;
/// The extensions libgit2 keeps when it writes an index (the cache tree,
/// resolve-undo, its conflict names); the others (untracked cache, fsmonitor,
/// offset tables) are optional caches that git rebuilds, and are dropped,
/// as libgit2's writer does.
const KEPT_EXTENSIONS: [&[u8; 4]; 3] = [b"TREE", b"REUC", b"NAME"];

/// Why an index is left to libgit2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the index is not patched directly: {0}")]
pub struct Unsupported(pub &'static str);

/// What identifies one version of the index file: git replaces it by
/// renaming a new file over it, so a new write is a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    ino: u64,
    mtime: (i64, i64),
}

impl Stamp {
    /// Whether an entry whose file was modified at `mtime` (seconds,
    /// nanoseconds) is racily clean against this version of the index: as
    /// new as it, so a change made in the same tick hides behind the
    /// entry's stat data (git's rule). Only older entries' stat data proves
    /// anything.
    pub fn is_racy(&self, mtime: (u32, u32)) -> bool {
        (i64::from(mtime.0), i64::from(mtime.1)) >= self.mtime
    }

    #[cfg(unix)]
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        Stamp { len: meta.len(), ino: meta.ino(), mtime: (meta.mtime(), meta.mtime_nsec()) }
    }

    #[cfg(not(unix))]
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).unwrap_or_default();
        Stamp { len: meta.len(), ino: 0, mtime: (mtime.as_secs() as i64, i64::from(mtime.subsec_nanos())) }
    }
}

/// An index entry's fields that the run looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryInfo {
    pub mode: u32,
    pub id: Oid,
    /// Seconds and nanoseconds, as the index keeps them (32 bits each).
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub ino: u32,
    pub size: u32,
    pub flags_extended: u16,
}

/// The new state of a committed path's entry: its blob and the stat data
/// of the file just written.
#[derive(Debug, Clone, Copy)]
pub struct EntryUpdate<'a> {
    pub path: &'a str,
    pub id: Oid,
    pub executable: bool,
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

impl<'a> EntryUpdate<'a> {
    /// `path`'s entry holding `id`, with the stat data `meta` of its file
    /// (each field cut to 32 bits, as git does).
    #[cfg(unix)]
    pub fn from_stat(path: &'a str, id: Oid, executable: bool, meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        EntryUpdate {
            path,
            id,
            executable,
            ctime: (meta.ctime() as u32, meta.ctime_nsec() as u32),
            mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size() as u32,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Span {
    /// Where the entry starts in the file.
    at: u32,
    /// Where its name is: in the file, or for version 4 in `names`.
    name: u32,
    name_len: u32,
}

/// One read of the index file, its checksum verified.
pub struct IndexFile {
    bytes: Vec<u8>,
    version: u32,
    entries: Vec<Span>,
    /// A version 4 index stores each name as a change of the one before;
    /// the names written out.
    names: Vec<u8>,
    extensions: Range<usize>,
    stamp: Stamp,
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([bytes[at], bytes[at + 1]])
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// git's offset varint (`decode_varint`), and the position after it.
fn varint(bytes: &[u8], mut at: usize) -> Option<(usize, usize)> {
    let mut byte = *bytes.get(at)?;
    at += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(at)?;
        at += 1;
        value = value.checked_add(1)?.checked_mul(128)? + usize::from(byte & 0x7f);
    }
    Some((value, at))
}

impl IndexFile {
    /// The index at `path` (`None`: there is none yet).
    pub fn read(path: &Path) -> Result<Option<IndexFile>, Unsupported> {
        let mut file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(_) => return Err(Unsupported("unreadable")),
        };
        let meta = file.metadata().map_err(|_| Unsupported("unreadable"))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|_| Unsupported("unreadable"))?;
        if bytes.len() as u64 != meta.len() {
            return Err(Unsupported("changed while it was read"));
        }
        IndexFile::parse(bytes, Stamp::of(&meta)).map(Some)
    }

    pub fn stamp(&self) -> Stamp {
        self.stamp
    }

    fn parse(bytes: Vec<u8>, stamp: Stamp) -> Result<IndexFile, Unsupported> {
        if bytes.len() < HEADER_LEN + HASH_LEN || &bytes[..4] != SIGNATURE {
            return Err(Unsupported("not an index file"));
        }
        let version = be32(&bytes, 4);
        if !(2..=4).contains(&version) {
            return Err(Unsupported("unknown version"));
        }
        let body = bytes.len() - HASH_LEN;
        if Sha1::digest(&bytes[..body])[..] != bytes[body..] {
            return Err(Unsupported("checksum mismatch"));
        }
        let count = be32(&bytes, 8) as usize;
        let mut index = IndexFile {
            version,
            entries: Vec::with_capacity(count.min(body / FIXED_LEN)),
            names: Vec::new(),
            extensions: 0..0,
            stamp,
            bytes: Vec::new(),
        };
        let mut at = HEADER_LEN;
        for _ in 0..count {
            at = index.read_entry(&bytes[..body], at)?;
        }
        index.extensions = at..body;
        for (signature, _) in extensions(&bytes[at..body])? {
            if !signature[0].is_ascii_uppercase() {
                return Err(Unsupported("an extension git requires (split or sparse index)"));
            }
        }
        index.bytes = bytes;
        Ok(index)
    }

    /// Read the entry at `at` of `body`; where the next one starts.
    fn read_entry(&mut self, body: &[u8], at: usize) -> Result<usize, Unsupported> {
        const TRUNCATED: Unsupported = Unsupported("truncated entry");
        if at + FIXED_LEN > body.len() {
            return Err(TRUNCATED);
        }
        let mut name_at = at + FIXED_LEN;
        if be16(body, at + FLAGS_AT) & EXTENDED != 0 {
            if self.version < 3 {
                return Err(Unsupported("extended flags in a version 2 index"));
            }
            name_at += 2;
        }
        let (span, next) = if self.version == 4 {
            let (strip, suffix_at) = varint(body, name_at).ok_or(TRUNCATED)?;
            let end = suffix_at + memchr::memchr(0, body.get(suffix_at..).ok_or(TRUNCATED)?).ok_or(TRUNCATED)?;
            let previous = self.entries.last().map_or(0..0, |s| s.name as usize..(s.name + s.name_len) as usize);
            let kept = previous.len().checked_sub(strip).ok_or(Unsupported("bad name compression"))?;
            let start = self.names.len();
            self.names.extend_from_within(previous.start..previous.start + kept);
            self.names.extend_from_slice(&body[suffix_at..end]);
            (Span { at: at as u32, name: start as u32, name_len: (self.names.len() - start) as u32 }, end + 1)
        } else {
            let len = memchr::memchr(0, body.get(name_at..).ok_or(TRUNCATED)?).ok_or(TRUNCATED)?;
            // Entries are padded with NULs to a multiple of eight bytes.
            let next = at + ((name_at - at + len + 8) & !7);
            if next > body.len() {
                return Err(TRUNCATED);
            }
            (Span { at: at as u32, name: name_at as u32, name_len: len as u32 }, next)
        };
        if let Some(last) = self.entries.last() {
            let order = self.name_in(body, last).cmp(self.name_in(body, &span));
            let stages = stage_of(body, last).cmp(&stage_of(body, &span));
            if order.then(stages) != std::cmp::Ordering::Less {
                return Err(Unsupported("entries out of order"));
            }
        }
        self.entries.push(span);
        Ok(next)
    }

    fn name_in<'b>(&'b self, bytes: &'b [u8], span: &Span) -> &'b [u8] {
        let source = if self.version == 4 { &self.names } else { bytes };
        &source[span.name as usize..(span.name + span.name_len) as usize]
    }

    fn name(&self, span: &Span) -> &[u8] {
        self.name_in(&self.bytes, span)
    }

    /// The position of the first entry named `path` (any stage).
    fn position(&self, path: &[u8]) -> Option<usize> {
        let at = self.entries.partition_point(|span| self.name(span) < path);
        (at < self.entries.len() && self.name(&self.entries[at]) == path).then_some(at)
    }

    /// `path`'s entry at stage 0 (`None`: untracked, or only conflicted).
    pub fn entry(&self, path: &str) -> Option<EntryInfo> {
        let span = &self.entries[self.position(path.as_bytes())?];
        (stage_of(&self.bytes, span) == 0).then(|| self.info(span))
    }

    fn info(&self, span: &Span) -> EntryInfo {
        let (b, at) = (&self.bytes, span.at as usize);
        let extended = be16(b, at + FLAGS_AT) & EXTENDED != 0;
        EntryInfo {
            ctime: (be32(b, at), be32(b, at + 4)),
            mtime: (be32(b, at + 8), be32(b, at + 12)),
            ino: be32(b, at + 20),
            mode: be32(b, at + 24),
            size: be32(b, at + SIZE_AT),
            id: Oid::from_bytes(&b[at + 40..at + 60]).expect("twenty bytes"),
            flags_extended: if extended { be16(b, at + FIXED_LEN) } else { 0 },
        }
    }

    /// The entries of `.gitattributes` files (stage 0), for libgit2's
    /// attribute lookups.
    pub fn attribute_entries(&self) -> Vec<git2::IndexEntry> {
        const NAME: &[u8] = b".gitattributes";
        self.entries
            .iter()
            .filter(|span| {
                let name = self.name(span);
                name.ends_with(NAME) && (name.len() == NAME.len() || name[name.len() - NAME.len() - 1] == b'/')
            })
            .filter(|span| stage_of(&self.bytes, span) == 0)
            .map(|span| {
                let info = self.info(span);
                let path = self.name(span).to_vec();
                git2::IndexEntry {
                    ctime: git2::IndexTime::new(info.ctime.0 as i32, info.ctime.1),
                    mtime: git2::IndexTime::new(info.mtime.0 as i32, info.mtime.1),
                    dev: 0,
                    ino: info.ino,
                    mode: info.mode,
                    uid: 0,
                    gid: 0,
                    file_size: info.size,
                    id: info.id,
                    flags: path.len().min(0xfff) as u16,
                    flags_extended: 0,
                    path,
                }
            })
            .collect()
    }

    /// The paths with entries at a stage other than 0 (unresolved merges).
    pub fn conflicted_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .entries
            .iter()
            .filter(|span| stage_of(&self.bytes, span) != 0)
            .map(|span| String::from_utf8_lossy(self.name(span)).into_owned())
            .collect();
        paths.dedup();
        paths
    }

    /// The file with `updates` made to existing entries, the entries of
    /// `smudge` marked as changed (their size zeroed, as git marks a racily
    /// clean entry whose file changed), the cache tree invalidated along the
    /// updated paths, and a new checksum.
    pub fn patched(&self, updates: &[EntryUpdate], smudge: &[&str]) -> Result<Vec<u8>, Unsupported> {
        let mut positions = Vec::with_capacity(updates.len());
        for update in updates {
            positions.push(self.updatable(update.path)?);
        }
        let mut out = Vec::with_capacity(self.bytes.len());
        out.extend_from_slice(&self.bytes[..self.extensions.start]);
        for path in smudge {
            let span =
                &self.entries[self.position(path.as_bytes()).ok_or(Unsupported("a path the index does not hold"))?];
            let size_at = span.at as usize + SIZE_AT;
            out[size_at..size_at + 4].fill(0);
        }
        for (update, &position) in updates.iter().zip(&positions) {
            write_entry(&mut out[self.entries[position].at as usize..], update);
        }
        let paths: Vec<&str> = updates.iter().map(|u| u.path).collect();
        for (signature, data) in extensions(&self.bytes[self.extensions.clone()])? {
            if !KEPT_EXTENSIONS.contains(&signature) {
                continue;
            }
            let data = if signature == b"TREE" { invalidated_tree(data, &paths)? } else { data.to_vec() };
            out.extend_from_slice(signature);
            out.extend_from_slice(
                &u32::try_from(data.len()).map_err(|_| Unsupported("extension too big"))?.to_be_bytes(),
            );
            out.extend_from_slice(&data);
        }
        let checksum = Sha1::digest(&out);
        out.extend_from_slice(&checksum);
        Ok(out)
    }

    /// The position of `path`'s entry, if it can be rewritten in place: one
    /// entry (stage 0, no conflict), a regular file, no flags.
    fn updatable(&self, path: &str) -> Result<usize, Unsupported> {
        let position = self.position(path.as_bytes()).ok_or(Unsupported("a path the index does not hold"))?;
        let span = &self.entries[position];
        let next_same = self.entries.get(position + 1).is_some_and(|next| self.name(next) == path.as_bytes());
        if stage_of(&self.bytes, span) != 0 || next_same {
            return Err(Unsupported("a conflicted path"));
        }
        let info = self.info(span);
        let flags = be16(&self.bytes, span.at as usize + FLAGS_AT);
        if flags & ASSUME_VALID != 0 || info.flags_extended != 0 {
            return Err(Unsupported("a flagged entry"));
        }
        if info.mode != 0o100644 && info.mode != 0o100755 {
            return Err(Unsupported("not a regular file's entry"));
        }
        Ok(position)
    }

    /// The entries (stage 0, not submodules) as new as the index file: a
    /// change made in the same tick as the index was written hides behind
    /// their stat data, so git looks at their content when it writes an
    /// index, and marks the changed ones ([`IndexFile::patched`]'s `smudge`).
    pub fn racy_entries(&self) -> Vec<(&str, EntryInfo)> {
        self.entries
            .iter()
            .filter(|span| self.stamp.is_racy(self.info_mtime(span)) && stage_of(&self.bytes, span) == 0)
            .map(|span| (span, self.info(span)))
            .filter(|(_, info)| info.mode != 0o160000)
            .filter_map(|(span, info)| Some((std::str::from_utf8(self.name(span)).ok()?, info)))
            .collect()
    }

    fn info_mtime(&self, span: &Span) -> (u32, u32) {
        let at = span.at as usize;
        (be32(&self.bytes, at + 8), be32(&self.bytes, at + 12))
    }
}

fn stage_of(bytes: &[u8], span: &Span) -> u16 {
    (be16(bytes, span.at as usize + FLAGS_AT) >> STAGE_SHIFT) & 3
}

/// The stat data, mode and id of `update`, over an entry's fixed fields
/// (the flags and name stay).
fn write_entry(entry: &mut [u8], update: &EntryUpdate) {
    let mode = if update.executable { 0o100755 } else { 0o100644 };
    let fields = [
        update.ctime.0,
        update.ctime.1,
        update.mtime.0,
        update.mtime.1,
        update.dev,
        update.ino,
        mode,
        update.uid,
        update.gid,
        update.size,
    ];
    for (n, field) in fields.iter().enumerate() {
        entry[n * 4..n * 4 + 4].copy_from_slice(&field.to_be_bytes());
    }
    entry[40..60].copy_from_slice(update.id.as_bytes());
}

/// An extension: its signature and its data.
type Extension<'a> = (&'a [u8; 4], &'a [u8]);

/// The extensions in `bytes`.
fn extensions(mut bytes: &[u8]) -> Result<Vec<Extension<'_>>, Unsupported> {
    let mut found = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 8 {
            return Err(Unsupported("truncated extension"));
        }
        let signature: &[u8; 4] = bytes[..4].try_into().expect("four bytes");
        let len = be32(bytes, 4) as usize;
        let data = bytes.get(8..8 + len).ok_or(Unsupported("truncated extension"))?;
        found.push((signature, data));
        bytes = &bytes[8 + len..];
    }
    Ok(found)
}

/// A node of the cache tree (the `TREE` extension): a directory, the
/// number of entries it covers (negative: invalidated) and its tree id.
struct TreeNode<'a> {
    name: &'a [u8],
    entry_count: i64,
    subtrees: Vec<TreeNode<'a>>,
    id: Option<&'a [u8]>,
}

/// The `TREE` extension `data` with the root and every directory along
/// `paths` invalidated, as git does when it changes an entry.
fn invalidated_tree(data: &[u8], paths: &[&str]) -> Result<Vec<u8>, Unsupported> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let (mut root, rest) = tree_node(data, 0)?;
    if !rest.is_empty() {
        return Err(Unsupported("trailing bytes in the cache tree"));
    }
    for path in paths {
        let mut node = &mut root;
        let mut components = path.split('/');
        components.next_back(); // the file's own name
        invalidate(node);
        for component in components {
            match node.subtrees.iter_mut().find(|child| child.name == component.as_bytes()) {
                Some(child) => {
                    invalidate(child);
                    node = child;
                }
                None => break,
            }
        }
    }
    let mut out = Vec::with_capacity(data.len());
    write_tree_node(&root, &mut out);
    Ok(out)
}

fn invalidate(node: &mut TreeNode) {
    node.entry_count = -1;
    node.id = None;
}

fn tree_node(data: &[u8], depth: usize) -> Result<(TreeNode<'_>, &[u8]), Unsupported> {
    const BAD: Unsupported = Unsupported("a malformed cache tree");
    if depth > MAX_TREE_DEPTH {
        return Err(Unsupported("a cache tree nested too deep"));
    }
    let name_end = memchr::memchr(0, data).ok_or(BAD)?;
    let line_end = name_end + memchr::memchr(b'\n', &data[name_end..]).ok_or(BAD)?;
    let counts = std::str::from_utf8(&data[name_end + 1..line_end]).map_err(|_| BAD)?;
    let (entries, subtrees) = counts.split_once(' ').ok_or(BAD)?;
    let entry_count: i64 = entries.parse().map_err(|_| BAD)?;
    let subtree_count: usize = subtrees.parse().map_err(|_| BAD)?;
    let mut rest = &data[line_end + 1..];
    let id = if entry_count >= 0 {
        let id = rest.get(..HASH_LEN).ok_or(BAD)?;
        rest = &rest[HASH_LEN..];
        Some(id)
    } else {
        None
    };
    let mut node = TreeNode { name: &data[..name_end], entry_count, subtrees: Vec::new(), id };
    for _ in 0..subtree_count {
        let (child, after) = tree_node(rest, depth + 1)?;
        node.subtrees.push(child);
        rest = after;
    }
    Ok((node, rest))
}

fn write_tree_node(node: &TreeNode, out: &mut Vec<u8>) {
    out.extend_from_slice(node.name);
    out.push(0);
    out.extend_from_slice(format!("{} {}\n", node.entry_count, node.subtrees.len()).as_bytes());
    if let Some(id) = node.id {
        out.extend_from_slice(id);
    }
    for child in &node.subtrees {
        write_tree_node(child, out);
    }
}

#[cfg(test)]
#[path = "index_file_tests.rs"]
mod tests;
