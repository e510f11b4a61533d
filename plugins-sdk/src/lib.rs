//! Write edit-format plugins for `git agent-apply`.
//!
//! A format is a struct that implements [`Format`], exported with one line:
//!
//! ```ignore
//! use agent_apply_sdk::prelude::*;
//!
//! #[derive(Default)]
//! struct MyFormat;
//!
//! impl Format for MyFormat { /* info, parse, apply_edit */ }
//!
//! agent_apply_sdk::export_format!(MyFormat);
//! ```
//!
//! Built for `wasm32-wasip2` as a `cdylib`, the crate is a component the host
//! loads with wasmtime. Built natively, it is an ordinary library whose
//! [`Plugin`] implementation unit tests call directly, with the exact contract
//! types the host sees.
//!
//! The shared text layer is what the built-in formats use; third-party
//! formats get the same robustness by using it:
//!
//! - [`text`]: lines that keep their endings, BOM, EOL and final-newline
//!   preservation ([`text::TextStyle`]);
//! - [`matching`]: the matching ladder ([`matching::replace_block`],
//!   [`matching::find_block`]; exact → whitespace → `...` elision → look-alikes
//!   → optional fuzzy, unique at every level) and similarity hints
//!   ([`matching::did_you_mean`], [`matching::line_similarity`]);
//! - [`hunk`]: diff-style hunks placed with the ladder, context kept
//!   byte for byte, added lines re-indented ([`hunk::hunk_splices`]);
//! - [`fence`], [`elision`], [`fragment`], [`markers`], [`paths`], [`source`],
//!   [`view`]: fenced blocks, `... existing code ...` placeholders, snippets
//!   sent as whole files, paths named in prose, reply spans, numbered views;
//! - [`json`]: the JSON values of a reply (a JSON reply, JSON Lines, fenced
//!   or bare objects in prose), for JSON and tool-call formats;
//! - [`repo_path`]: whether a path is a plain repo-relative file path (the
//!   lexical half of the host's path policy);
//! - [`testing`]: the conformance-corpus runner.
//!
//! `plugins-sdk/README.md` is the guide: a format in 15 minutes.

#![warn(missing_docs)]

#[doc(hidden)]
#[allow(missing_docs)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit/since_v0.1.0",
        world: "format",
        pub_export_macro: true,
        export_macro_name: "__export_format_world",
        default_bindings_module: "agent_apply_sdk::bindings",
        additional_derives: [Clone, PartialEq, serde::Serialize, serde::Deserialize],
    });
}

pub mod elision;
pub mod fence;
mod format;
pub mod fragment;
/// Drive a format on arbitrary bytes (fuzzing, property tests).
pub mod fuzzing;
pub mod hunk;
pub mod json;
pub mod markers;
pub mod matching;
#[cfg(not(target_family = "wasm"))]
pub mod native;
pub mod paths;
pub mod repo_path;
pub mod source;
/// Run a format's conformance corpus natively through [`Plugin`].
pub mod testing;
pub mod text;
pub mod types;
pub mod view;
mod workspace;

pub use format::{Applied, EditFailure, Format, Options, Parsed, ParsedEdit, Plugin, apply_by_file, apply_each};
pub use workspace::Workspace;

/// The contract version this SDK implements.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// Everything a format author usually needs.
pub mod prelude {
    pub use crate::fence::fenced_blocks;
    pub use crate::format::{Applied, EditFailure, Format, Options, Parsed, ParsedEdit, Plugin};
    pub use crate::matching::{Haystack, LadderOptions, did_you_mean, find_block, replace_block};
    pub use crate::paths::path_before;
    pub use crate::source::SourceMap;
    pub use crate::text::{TextStyle, lines_label};
    pub use crate::types::*;
    pub use crate::workspace::Workspace;
}

/// Export a [`Format`] as the plugin of this crate.
///
/// The type must implement [`Format`] and [`Default`]. Built for a wasm
/// target this emits the component exports. Built natively it emits the
/// [`native`] ABI's entry symbol, so the same crate built as a `cdylib` is a
/// trusted native plugin (`native = true` in config); tests call the
/// [`Plugin`] methods directly either way. Since the entry symbol has one
/// fixed name, link at most one format crate into a native binary.
#[macro_export]
macro_rules! export_format {
    ($format:ty) => {
        #[cfg(not(target_family = "wasm"))]
        #[doc(hidden)]
        pub mod __agent_apply_native {
            use super::*;
            use $crate::native::{
                ABI_VERSION, ApplyRequest, NativeBuffer, NativeTable, ParseRequest, RenderRequest, free_buffer, serve,
            };
            use $crate::types::File;

            fn instance() -> &'static $format {
                static INSTANCE: ::std::sync::OnceLock<$format> = ::std::sync::OnceLock::new();
                INSTANCE.get_or_init(<$format as ::core::default::Default>::default)
            }

            unsafe extern "C" fn info(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: the host passes a readable request and a writable response slot.
                unsafe { serve(request, len, response, |(): ()| {
                    $crate::types::info_with_version($crate::Plugin::info(instance()), env!("CARGO_PKG_VERSION"))
                }) }
            }
            unsafe extern "C" fn detect(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: as for `info`.
                unsafe { serve(request, len, response, |reply: String| $crate::Plugin::detect(instance(), &reply)) }
            }
            unsafe extern "C" fn parse(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: as for `info`.
                unsafe {
                    serve(request, len, response, |r: ParseRequest| {
                        $crate::Plugin::parse(instance(), &r.reply, &r.options)
                    })
                }
            }
            unsafe extern "C" fn apply(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: as for `info`.
                unsafe {
                    serve(request, len, response, |r: ApplyRequest| {
                        $crate::Plugin::apply(instance(), r.files, r.edits, &r.options)
                    })
                }
            }
            unsafe extern "C" fn render(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: as for `info`.
                unsafe {
                    serve(request, len, response, |r: RenderRequest| {
                        $crate::Plugin::render(instance(), &r.file, &r.ranges, &r.options)
                    })
                }
            }
            unsafe extern "C" fn lint(request: *const u8, len: usize, response: *mut NativeBuffer) -> u32 {
                // SAFETY: as for `info`.
                unsafe { serve(request, len, response, |file: File| $crate::Plugin::lint(instance(), &file)) }
            }

            static TABLE: NativeTable = NativeTable {
                abi_version: ABI_VERSION,
                table_size: ::core::mem::size_of::<NativeTable>() as u32,
                contract_version: $crate::CONTRACT_VERSION.as_ptr(),
                contract_version_len: $crate::CONTRACT_VERSION.len(),
                info,
                detect,
                parse,
                apply,
                render,
                lint,
                free: free_buffer,
            };

            /// The native ABI's entry point (`agent_apply_sdk::native::ENTRY_SYMBOL`).
            #[unsafe(no_mangle)]
            pub extern "C" fn agent_apply_native_plugin() -> *const NativeTable {
                &TABLE
            }
        }

        #[cfg(target_family = "wasm")]
        #[doc(hidden)]
        mod __agent_apply_export {
            use super::*;
            use $crate::bindings::exports::agent_apply::format::plugin::Guest;
            use $crate::types::*;

            fn instance() -> &'static $format {
                static INSTANCE: ::std::sync::OnceLock<$format> = ::std::sync::OnceLock::new();
                INSTANCE.get_or_init(<$format as ::core::default::Default>::default)
            }

            pub struct Export;

            impl Guest for Export {
                fn info() -> FormatInfo {
                    $crate::types::info_with_version($crate::Plugin::info(instance()), env!("CARGO_PKG_VERSION"))
                }
                fn detect(reply: String) -> f32 {
                    $crate::Plugin::detect(instance(), &reply)
                }
                fn parse(reply: String, options: Vec<OptionValue>) -> ParseOutput {
                    $crate::Plugin::parse(instance(), &reply, &options)
                }
                fn apply(
                    files: Vec<File>,
                    edits: Vec<Edit>,
                    options: Vec<OptionValue>,
                ) -> Result<ApplyOutput, String> {
                    $crate::Plugin::apply(instance(), files, edits, &options)
                }
                fn render(
                    file: File,
                    ranges: Vec<LineRange>,
                    options: Vec<OptionValue>,
                ) -> Result<String, String> {
                    $crate::Plugin::render(instance(), &file, &ranges, &options)
                }
                fn lint(file: File) -> Vec<Diagnostic> {
                    $crate::Plugin::lint(instance(), &file)
                }
            }

            $crate::bindings::__export_format_world!(Export with_types_in $crate::bindings);
        }
    };
}
