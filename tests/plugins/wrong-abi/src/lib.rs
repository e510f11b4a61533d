//! Exports the native entry symbol with a table from a future ABI version,
//! so tests can check the host refuses it before reading past the header.

/// The two fields every ABI version starts with; nothing else is valid.
#[repr(C)]
pub struct FutureTableHeader {
    abi_version: u32,
    table_size: u32,
}

static TABLE: FutureTableHeader = FutureTableHeader { abi_version: 999, table_size: 8 };

/// The native entry point, returning a table the host must refuse.
#[unsafe(no_mangle)]
pub extern "C" fn agent_apply_native_plugin() -> *const FutureTableHeader {
    &TABLE
}
