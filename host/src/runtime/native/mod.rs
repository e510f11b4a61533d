//! The native runtime: trusted plugins, native libraries, for users who opt
//! in with `native = true` in config (never from a path a reply names).
//!
//! A native plugin runs with the user's full privileges: no sandbox, no
//! time or memory limit. What this module guarantees is only that the
//! boundary is well-defined: the ABI version and table size are checked
//! before anything else is read, buffers go back to the plugin's own
//! `free`, a panic comes back as an error (the SDK catches it), and the
//! library is never unloaded (its code may still be referenced by thread
//! locals or a panic hook it installed).
//!
//! Where the library runs depends on how the binary was linked (host/build/
//! link.rs): a binary that loads the C library dynamically loads the plugin
//! into itself ([`in_process`]); one linked statically cannot, and starts a
//! small dynamically linked helper that loads it and answers each call
//! over a pipe ([`helper`]), where a crash of the plugin ends only the
//! helper.

#[cfg(native_host)]
mod helper;
#[cfg(not(native_host))]
mod in_process;

use std::borrow::Borrow;
use std::path::Path;

use agent_apply_sdk::native::{
    ABI_VERSION, ApplyRequest, ENTRY_SYMBOL, NativeTable, ParseRequest, RenderRequest, STATUS_OK, STATUS_PANIC,
};
use agent_apply_sdk::types as sdk;
use serde::{Serialize, de::DeserializeOwned};

#[cfg(native_host)]
use helper::Library;
#[cfg(not(native_host))]
use in_process::Library;

use super::PluginError;

/// The contract calls of the ABI's table, in the table's order.
#[derive(Debug, Clone, Copy)]
enum Call {
    Info,
    Detect,
    Parse,
    Apply,
    Render,
    Lint,
}

/// Whether a table of `abi_version` and `table_size` bytes is one this host
/// reads: anything past those two fields is read only then.
fn table_is_readable(abi_version: u32, table_size: u32) -> bool {
    abi_version == ABI_VERSION && table_size as usize >= size_of::<NativeTable>()
}

/// A library opened: its table is of this host's ABI, or it is not (and
/// nothing past the table's version and size was read).
enum Opened<L> {
    Ready { library: L, contract_version: Vec<u8> },
    Mismatch { abi_version: u32, table_size: u32 },
}

/// Why a library could not be opened as a native plugin.
enum OpenFailure {
    /// The system could not load it.
    Load(String),
    /// It loaded but exports no entry symbol.
    NoEntry(String),
    /// The entry returned no table.
    NullTable,
}

/// A loaded native library's calls.
#[derive(Clone)]
pub struct NativePlugin {
    name: String,
    library: Library,
}

impl NativePlugin {
    /// Load the library at `path` and check its ABI and contract versions.
    pub fn load(name: &str, path: &Path) -> Result<Self, PluginError> {
        let load_error = |reason: String| PluginError::Load { plugin: name.to_string(), reason };
        let opened = Library::open(path).map_err(|failure| match failure {
            OpenFailure::Load(e) => load_error(format!("cannot load the native library {}: {e}", path.display())),
            OpenFailure::NoEntry(e) => PluginError::Contract {
                plugin: name.to_string(),
                expected: agent_apply_sdk::CONTRACT_VERSION,
                reason: format!(
                    "{} exports no `{ENTRY_SYMBOL}` ({e}); build it as a cdylib with agent-apply-sdk's export_format!",
                    path.display()
                ),
            },
            OpenFailure::NullTable => load_error(format!("`{ENTRY_SYMBOL}` returned a null table")),
        })?;
        let (library, contract) = match opened {
            Opened::Ready { library, contract_version } => (library, contract_version),
            Opened::Mismatch { abi_version, table_size } => {
                return Err(PluginError::NativeAbi {
                    plugin: name.to_string(),
                    found: abi_version,
                    found_size: table_size,
                    supported: ABI_VERSION,
                });
            }
        };
        let contract = String::from_utf8_lossy(&contract).into_owned();
        if contract != agent_apply_sdk::CONTRACT_VERSION {
            return Err(PluginError::ContractVersion {
                plugin: name.to_string(),
                found: contract,
                supported: agent_apply_sdk::CONTRACT_VERSION,
            });
        }
        Ok(NativePlugin { name: name.to_string(), library })
    }

    /// The name the plugin was loaded under.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn call<Request: Serialize, Response: DeserializeOwned>(
        &self,
        call: Call,
        request: &Request,
    ) -> Result<Response, PluginError> {
        let name = match call {
            Call::Info => "info",
            Call::Detect => "detect",
            Call::Parse => "parse",
            Call::Apply => "apply",
            Call::Render => "render",
            Call::Lint => "lint",
        };
        let trap =
            |reason: String| PluginError::Trap { plugin: self.name.clone(), call: name, reason, stderr: String::new() };
        let request = serde_json::to_vec(request).map_err(|e| trap(format!("cannot encode the request: {e}")))?;
        let (status, bytes) = self.library.call(call, &request).map_err(trap)?;
        match status {
            STATUS_OK => serde_json::from_slice(&bytes)
                .map_err(|e| trap(format!("returned a response the host cannot read: {e}"))),
            STATUS_PANIC => Err(trap(format!("it panicked: {}", String::from_utf8_lossy(&bytes)))),
            _ => Err(trap(String::from_utf8_lossy(&bytes).into_owned())),
        }
    }

    pub fn info(&self) -> Result<sdk::FormatInfo, PluginError> {
        self.call(Call::Info, &())
    }

    pub fn detect(&self, reply: &str) -> Result<f32, PluginError> {
        self.call(Call::Detect, &reply)
    }

    pub fn parse(&self, reply: &str, options: &[sdk::OptionValue]) -> Result<sdk::ParseOutput, PluginError> {
        let request = ParseRequest { reply: reply.to_string(), options: options.to_vec() };
        self.call(Call::Parse, &request)
    }

    pub fn apply<E: Borrow<sdk::Edit>>(
        &self,
        files: &[sdk::File],
        edits: &[E],
        options: &[sdk::OptionValue],
    ) -> Result<Result<sdk::ApplyOutput, String>, PluginError> {
        let edits = edits.iter().map(|edit| edit.borrow().clone()).collect();
        let request = ApplyRequest { files: files.to_vec(), edits, options: options.to_vec() };
        self.call(Call::Apply, &request)
    }

    pub fn render(
        &self,
        file: &sdk::File,
        ranges: &[sdk::LineRange],
        options: &[sdk::OptionValue],
    ) -> Result<Result<String, String>, PluginError> {
        let request = RenderRequest { file: file.clone(), ranges: ranges.to_vec(), options: options.to_vec() };
        self.call(Call::Render, &request)
    }

    pub fn lint(&self, file: &sdk::File) -> Result<Vec<sdk::Diagnostic>, PluginError> {
        self.call(Call::Lint, file)
    }
}
