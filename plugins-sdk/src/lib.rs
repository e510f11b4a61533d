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
//! The shared text layer ([`text`], [`fence`], [`elision`], [`source`]) is what the
//! built-in formats use; third-party formats get the same line-ending, BOM and
//! final-newline handling by using it.

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit/since_v0.1.0",
        world: "format",
        pub_export_macro: true,
        export_macro_name: "__export_format_world",
        default_bindings_module: "agent_apply_sdk::bindings",
        additional_derives: [Clone, PartialEq],
    });
}

pub mod elision;
pub mod fence;
mod format;
/// Drive a format on arbitrary bytes (fuzzing, property tests).
pub mod fuzzing;
pub mod matching;
pub mod paths;
pub mod source;
/// Run a format's conformance corpus natively through [`Plugin`].
pub mod testing;
pub mod text;
pub mod types;
pub mod view;
mod workspace;

pub use format::{Applied, EditFailure, Format, Options, Parsed, ParsedEdit, Plugin};
pub use workspace::Workspace;

/// The contract version this SDK implements.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// Everything a format author usually needs.
pub mod prelude {
    pub use crate::format::{Applied, EditFailure, Format, Options, Parsed, ParsedEdit, Plugin};
    pub use crate::source::SourceMap;
    pub use crate::text::TextStyle;
    pub use crate::types::*;
    pub use crate::workspace::Workspace;
}

/// Export a [`Format`] as the plugin of this crate.
///
/// The type must implement [`Format`] and [`Default`]. When the crate is built
/// for a wasm target this emits the component exports; natively it emits
/// nothing, and tests call the [`Plugin`] methods directly.
#[macro_export]
macro_rules! export_format {
    ($format:ty) => {
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
                    $crate::Plugin::info(instance())
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
                    $crate::Plugin::apply(instance(), files, &edits, &options)
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
