//! The native plugin ABI: how a format crate built as a native `cdylib` talks
//! to the host, for trusted plugins loaded with `native = true`.
//!
//! **A native plugin runs with the user's full privileges**, in the host's
//! process: none of the wasm sandbox (no file, network or time isolation, no
//! memory or time limit) applies. Only load libraries you would run as a
//! program.
//!
//! The library exports one symbol, [`ENTRY_SYMBOL`], a function returning a
//! pointer to a static [`NativeTable`]. The table starts with its ABI version
//! and its own size, which every future version keeps as its first two
//! fields, so the host can refuse a table it does not understand before
//! reading anything else. Each contract call takes a JSON request and fills
//! a [`NativeBuffer`] the plugin allocated; the host hands every buffer back
//! to the table's `free`, so memory is freed by the allocator that made it.
//! A panic never crosses the boundary: it is caught and returned as
//! [`STATUS_PANIC`] with its message.
//!
//! [`crate::export_format!`] produces all of this for non-wasm targets, so one
//! format source builds as a wasm component and as a native library.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::types::{Edit, File, LineRange, OptionValue};

/// The version of this ABI. The host refuses a table with another one.
pub const ABI_VERSION: u32 = 1;

/// The symbol a native plugin exports (without the trailing NUL).
pub const ENTRY_SYMBOL: &str = "agent_apply_native_plugin";

/// The call succeeded; the buffer holds the JSON response.
pub const STATUS_OK: u32 = 0;
/// The plugin panicked; the buffer holds the panic message.
pub const STATUS_PANIC: u32 = 1;
/// The request could not be read (or the response written); the buffer
/// holds the reason.
pub const STATUS_BAD_REQUEST: u32 = 2;

/// Bytes allocated by the plugin, returned to the host, and handed back to
/// [`NativeTable::free`].
#[repr(C)]
#[derive(Debug)]
pub struct NativeBuffer {
    /// Start of the bytes (dangling when `capacity` is 0).
    pub ptr: *mut u8,
    /// How many bytes are valid.
    pub len: usize,
    /// The allocation's capacity, needed to free it.
    pub capacity: usize,
}

impl NativeBuffer {
    /// A buffer holding nothing, for the host to pass in.
    pub fn empty() -> Self {
        NativeBuffer { ptr: std::ptr::null_mut(), len: 0, capacity: 0 }
    }

    fn from_vec(bytes: Vec<u8>) -> Self {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        NativeBuffer { ptr: bytes.as_mut_ptr(), len: bytes.len(), capacity: bytes.capacity() }
    }
}

/// One contract call: a JSON request in, a status out, the response (or
/// error text) written to `*response`.
pub type NativeCall = unsafe extern "C" fn(request: *const u8, request_len: usize, response: *mut NativeBuffer) -> u32;

/// What [`ENTRY_SYMBOL`] returns a pointer to. `abi_version` and
/// `table_size` come first in every version of the ABI.
#[repr(C)]
pub struct NativeTable {
    /// [`ABI_VERSION`] of the SDK the plugin was built with.
    pub abi_version: u32,
    /// `size_of::<NativeTable>()` as the plugin saw it.
    pub table_size: u32,
    /// The contract version (`0.1.0`), UTF-8, not NUL-terminated.
    pub contract_version: *const u8,
    /// Its length in bytes.
    pub contract_version_len: usize,
    /// `info`: request `null`, response [`crate::types::FormatInfo`].
    pub info: NativeCall,
    /// `detect`: request the reply (a JSON string), response a number.
    pub detect: NativeCall,
    /// `parse`: request [`ParseRequest`], response [`crate::types::ParseOutput`].
    pub parse: NativeCall,
    /// `apply`: request [`ApplyRequest`], response `Result<ApplyOutput, String>`.
    pub apply: NativeCall,
    /// `render`: request [`RenderRequest`], response `Result<String, String>`.
    pub render: NativeCall,
    /// `lint`: request a [`File`], response a list of diagnostics.
    pub lint: NativeCall,
    /// Free a buffer a call returned.
    pub free: unsafe extern "C" fn(NativeBuffer),
}

// SAFETY: the table is immutable, and `contract_version` points at a
// `'static` string.
unsafe impl Sync for NativeTable {}

/// The request of `parse`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ParseRequest {
    /// The model's reply.
    pub reply: String,
    /// Format options.
    pub options: Vec<OptionValue>,
}

/// The request of `apply`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ApplyRequest {
    /// Snapshots of the files the edits name.
    pub files: Vec<File>,
    /// The edits, as `parse` returned them.
    pub edits: Vec<Edit>,
    /// Format options.
    pub options: Vec<OptionValue>,
}

/// The request of `render`.
#[derive(Debug, Serialize, Deserialize)]
pub struct RenderRequest {
    /// The file to show.
    pub file: File,
    /// The lines to show; empty for the whole file.
    pub ranges: Vec<LineRange>,
    /// Format options.
    pub options: Vec<OptionValue>,
}

/// Serve one call on the plugin side: decode the request, run `handle`
/// with panics caught, encode the response into `*response`.
///
/// # Safety
///
/// `request` must point at `request_len` readable bytes and `response` at a
/// writable [`NativeBuffer`], as the host guarantees.
#[doc(hidden)]
pub unsafe fn serve<Request: DeserializeOwned, Response: Serialize>(
    request: *const u8,
    request_len: usize,
    response: *mut NativeBuffer,
    handle: impl FnOnce(Request) -> Response,
) -> u32 {
    let bytes: &[u8] = if request_len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `request_len` readable bytes.
        unsafe { std::slice::from_raw_parts(request, request_len) }
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let request: Request = serde_json::from_slice(bytes)
            .map_err(|e| (STATUS_BAD_REQUEST, format!("the plugin cannot read the request: {e}")))?;
        serde_json::to_vec(&handle(request))
            .map_err(|e| (STATUS_BAD_REQUEST, format!("the plugin cannot encode its response: {e}")))
    }));
    let (status, bytes) = match outcome {
        Ok(Ok(json)) => (STATUS_OK, json),
        Ok(Err((status, message))) => (status, message.into_bytes()),
        Err(panic) => (STATUS_PANIC, panic_message(panic.as_ref()).into_bytes()),
    };
    // SAFETY: the caller guarantees a writable buffer slot.
    unsafe { response.write(NativeBuffer::from_vec(bytes)) };
    status
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(message), _) => (*message).to_string(),
        (_, Some(message)) => message.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// Free a buffer [`serve`] returned.
///
/// # Safety
///
/// `buffer` must come from [`serve`] in this library, and be freed once.
#[doc(hidden)]
pub unsafe extern "C" fn free_buffer(buffer: NativeBuffer) {
    if buffer.capacity != 0 {
        // SAFETY: the buffer is a `Vec<u8>` this library leaked in `from_vec`.
        drop(unsafe { Vec::from_raw_parts(buffer.ptr, buffer.len, buffer.capacity) });
    }
}
