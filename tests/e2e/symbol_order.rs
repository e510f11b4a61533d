//! The orders the linker gives the release binary's functions, one per
//! target (host/build/symbol-order/TARGET.txt, see host/build/link.rs),
//! name them as the build that made each did. A change to the lock, the manifests or the toolchain
//! may rename every one, and the order would then silently do nothing: the
//! binary would hold five times the code in memory and start slower.

use std::path::Path;

use crate::common::sha256_hex;

#[test]
fn each_symbol_order_was_made_for_this_lock_manifests_and_toolchain() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = root.join("host/build/symbol-order");
    let mut targets: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    targets.sort();
    assert_eq!(targets, ["x86_64-unknown-linux-gnu.txt", "x86_64-unknown-linux-musl.txt"]);
    for target in targets {
        check_order(root, &target, &std::fs::read_to_string(dir.join(&target)).unwrap());
    }
}

/// The fingerprint `order` records is that of the files it names, now.
fn check_order(root: &Path, target: &str, order: &str) {
    let header = order.lines().find_map(|line| line.strip_prefix("# sha256 of ")).expect("a fingerprint line");
    let (files, recorded) = header.split_once(": ").expect("files: digest");
    // The files one after another, as bench/symbol_order.py hashes them.
    let read = |file: &str| std::fs::read(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let now = sha256_hex(&files.split(' ').flat_map(read).collect::<Vec<u8>>());
    assert_eq!(
        now, recorded,
        "{files} changed since host/build/symbol-order/{target} was made; run bench/symbol-order to remake it"
    );
    let names = order.lines().filter(|line| !line.starts_with('#')).count();
    assert!(names > 1000, "{target}: {names} names: the order covers too little of a run");
}
