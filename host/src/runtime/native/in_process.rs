//! A native plugin loaded into this process with `libloading`, for a binary
//! that loads the C library dynamically.

use std::path::Path;

use agent_apply_sdk::native::{ENTRY_SYMBOL, NativeBuffer, NativeTable};

use super::{Call, OpenFailure, Opened, table_is_readable};

/// The library's call table; the library itself is never unloaded.
#[derive(Clone)]
pub(super) struct Library {
    table: &'static NativeTable,
}

impl Library {
    pub(super) fn open(path: &Path) -> Result<Opened<Library>, OpenFailure> {
        // SAFETY: loading runs the library's initialisers. The user trusted
        // this file by configuring it with `native = true`.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| OpenFailure::Load(e.to_string()))?;
        // Never unloaded: see the module docs.
        let library: &'static libloading::Library = Box::leak(Box::new(library));
        let symbol = format!("{ENTRY_SYMBOL}\0");
        // SAFETY: the symbol's type is fixed by the ABI; a library exporting
        // this name with another type is not an agent-apply plugin.
        let entry = unsafe { library.get::<unsafe extern "C" fn() -> *const NativeTable>(symbol.as_bytes()) }
            .map_err(|e| OpenFailure::NoEntry(e.to_string()))?;
        // SAFETY: as above.
        let table = unsafe { entry() };
        if table.is_null() {
            return Err(OpenFailure::NullTable);
        }
        // SAFETY: every ABI version starts with these two u32 fields, so
        // they can be read before the version is known.
        let (abi_version, table_size) = unsafe { ((*table).abi_version, (*table).table_size) };
        if !table_is_readable(abi_version, table_size) {
            return Ok(Opened::Mismatch { abi_version, table_size });
        }
        // SAFETY: the version and size match this ABI's static table.
        let table: &'static NativeTable = unsafe { &*table };
        // SAFETY: the ABI says this is a static UTF-8 string of that length.
        let contract = unsafe { std::slice::from_raw_parts(table.contract_version, table.contract_version_len) };
        Ok(Opened::Ready { library: Library { table }, contract_version: contract.to_vec() })
    }

    /// Makes `call` with the JSON `request`: the status and the bytes the
    /// plugin returned.
    pub(super) fn call(&self, call: Call, request: &[u8]) -> Result<(u32, Vec<u8>), String> {
        let function = match call {
            Call::Info => self.table.info,
            Call::Detect => self.table.detect,
            Call::Parse => self.table.parse,
            Call::Apply => self.table.apply,
            Call::Render => self.table.render,
            Call::Lint => self.table.lint,
        };
        let mut buffer = NativeBuffer::empty();
        // SAFETY: `request` is readable for its length and `buffer` is a
        // writable slot, as the ABI requires.
        let status = unsafe { function(request.as_ptr(), request.len(), &mut buffer) };
        let bytes = if buffer.ptr.is_null() {
            Vec::new()
        } else {
            // SAFETY: the plugin filled `buffer` with `len` valid bytes.
            unsafe { std::slice::from_raw_parts(buffer.ptr, buffer.len) }.to_vec()
        };
        // SAFETY: handed back once, to the allocator that made it.
        unsafe { (self.table.free)(buffer) };
        Ok((status, bytes))
    }
}
