//! The native runtime: trusted plugins loaded with `libloading`, for users
//! who opt in with `native = true` in config (never from a path a reply names).
//!
//! A native plugin runs with the user's full privileges, in this process:
//! no sandbox, no time or memory limit. What this module guarantees is only
//! that the boundary is well-defined: the ABI version and table size are
//! checked before anything else is read, buffers go back to the plugin's own
//! `free`, a panic comes back as an error (the SDK catches it), and the
//! library is never unloaded (its code may still be referenced by thread
//! locals or a panic hook it installed).

use std::borrow::Borrow;
use std::path::Path;

use agent_apply_sdk::native::{
    ABI_VERSION, ApplyRequest, ENTRY_SYMBOL, NativeBuffer, NativeCall, NativeTable, ParseRequest, RenderRequest,
    STATUS_OK, STATUS_PANIC,
};
use agent_apply_sdk::types as sdk;
use serde::{Serialize, de::DeserializeOwned};

use super::PluginError;

/// A loaded native library's call table.
#[derive(Clone)]
pub struct NativePlugin {
    name: String,
    table: &'static NativeTable,
}

impl NativePlugin {
    /// Load the library at `path` and check its ABI and contract versions.
    pub fn load(name: &str, path: &Path) -> Result<Self, PluginError> {
        let load_error = |reason: String| PluginError::Load { plugin: name.to_string(), reason };
        // SAFETY: loading runs the library's initialisers. The user trusted
        // this file by configuring it with `native = true`.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| load_error(format!("cannot load the native library {}: {e}", path.display())))?;
        // Never unloaded: see the module docs.
        let library: &'static libloading::Library = Box::leak(Box::new(library));
        let symbol = format!("{ENTRY_SYMBOL}\0");
        // SAFETY: the symbol's type is fixed by the ABI; a library exporting
        // this name with another type is not an agent-apply plugin.
        let entry = unsafe { library.get::<unsafe extern "C" fn() -> *const NativeTable>(symbol.as_bytes()) }.map_err(
            |e| PluginError::Contract {
                plugin: name.to_string(),
                expected: agent_apply_sdk::CONTRACT_VERSION,
                reason: format!(
                    "{} exports no `{ENTRY_SYMBOL}` ({e}); build it as a cdylib with agent-apply-sdk's export_format!",
                    path.display()
                ),
            },
        )?;
        // SAFETY: as above.
        let table = unsafe { entry() };
        if table.is_null() {
            return Err(load_error(format!("`{ENTRY_SYMBOL}` returned a null table")));
        }
        // SAFETY: every ABI version starts with these two u32 fields, so
        // they can be read before the version is known.
        let (abi_version, table_size) = unsafe { ((*table).abi_version, (*table).table_size) };
        if abi_version != ABI_VERSION || (table_size as usize) < size_of::<NativeTable>() {
            return Err(PluginError::NativeAbi {
                plugin: name.to_string(),
                found: abi_version,
                found_size: table_size,
                supported: ABI_VERSION,
            });
        }
        // SAFETY: the version and size match this ABI's static table.
        let table: &'static NativeTable = unsafe { &*table };
        // SAFETY: the ABI says this is a static UTF-8 string of that length.
        let contract = unsafe { std::slice::from_raw_parts(table.contract_version, table.contract_version_len) };
        let contract = String::from_utf8_lossy(contract).into_owned();
        if contract != agent_apply_sdk::CONTRACT_VERSION {
            return Err(PluginError::ContractVersion {
                plugin: name.to_string(),
                found: contract,
                supported: agent_apply_sdk::CONTRACT_VERSION,
            });
        }
        Ok(NativePlugin { name: name.to_string(), table })
    }

    /// The name the plugin was loaded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn call<Request: Serialize, Response: DeserializeOwned>(
        &self,
        call: &'static str,
        function: NativeCall,
        request: &Request,
    ) -> Result<Response, PluginError> {
        let trap =
            |reason: String| PluginError::Trap { plugin: self.name.clone(), call, reason, stderr: String::new() };
        let request = serde_json::to_vec(request).map_err(|e| trap(format!("cannot encode the request: {e}")))?;
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
        match status {
            STATUS_OK => serde_json::from_slice(&bytes)
                .map_err(|e| trap(format!("returned a response the host cannot read: {e}"))),
            STATUS_PANIC => Err(trap(format!("it panicked: {}", String::from_utf8_lossy(&bytes)))),
            _ => Err(trap(String::from_utf8_lossy(&bytes).into_owned())),
        }
    }

    pub fn info(&self) -> Result<sdk::FormatInfo, PluginError> {
        self.call("info", self.table.info, &())
    }

    pub fn detect(&self, reply: &str) -> Result<f32, PluginError> {
        self.call("detect", self.table.detect, &reply)
    }

    pub fn parse(&self, reply: &str, options: &[sdk::OptionValue]) -> Result<sdk::ParseOutput, PluginError> {
        let request = ParseRequest { reply: reply.to_string(), options: options.to_vec() };
        self.call("parse", self.table.parse, &request)
    }

    pub fn apply<E: Borrow<sdk::Edit>>(
        &self,
        files: &[sdk::File],
        edits: &[E],
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        let edits = edits.iter().map(|edit| edit.borrow().clone()).collect();
        let request = ApplyRequest { files: files.to_vec(), edits, options: options.to_vec() };
        self.call("apply", self.table.apply, &request)
    }

    pub fn render(
        &self,
        file: &sdk::File,
        ranges: &[sdk::LineRange],
        options: &[sdk::OptionValue],
    ) -> Result<Result<String, String>, PluginError> {
        let request = RenderRequest { file: file.clone(), ranges: ranges.to_vec(), options: options.to_vec() };
        self.call("render", self.table.render, &request)
    }

    pub fn lint(&self, file: &sdk::File) -> Result<Vec<sdk::Diagnostic>, PluginError> {
        self.call("lint", self.table.lint, file)
    }
}
