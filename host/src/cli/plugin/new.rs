//! `git agent-apply plugin new NAME [--path DIR] [--sdk-path DIR]`: scaffold a
//! format plugin crate that builds with one command and passes its own tests.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CommandError, Exit};

const CARGO_TOML: &str = include_str!("template/Cargo.toml.txt");
const LIB_RS: &str = include_str!("template/lib.rs.txt");
const README: &str = include_str!("template/README.md.txt");
/// Our formatting: the scaffold is written in it, so `cargo fmt` keeps it.
const RUSTFMT: &str = include_str!("../../../../rustfmt.toml");

/// The SDK this binary was built from, if that checkout is still there
/// (`cargo install --path host` builds from one).
const BUILT_FROM_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins-sdk");

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The format's name: lowercase letters, digits and `-`, starting with a letter.
    name: String,
    /// Where to create the crate (default: ./NAME). Must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Depend on the SDK at this directory (default: the agent-apply checkout
    /// around the new crate, else the one this binary was built from).
    #[arg(long, alias = "sdk", value_name = "DIR")]
    sdk_path: Option<PathBuf>,
}

pub fn run(args: &NewArgs) -> Result<Exit, CommandError> {
    let name = args.name.as_str();
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(CommandError::usage(format!("'{name}' is not a valid format name"))
            .hint("use lowercase letters, digits and `-`, starting with a letter, e.g. `my-format`"));
    }
    let dir = args.path.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.read_dir().is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(CommandError::usage(format!("{} exists and is not empty", dir.display()))
            .hint("choose another directory with --path, or remove it"));
    }
    let io = |what: &Path, e: std::io::Error| CommandError::usage(format!("cannot write {}: {e}", what.display()));
    std::fs::create_dir_all(dir.join("src")).map_err(|e| io(&dir, e))?;
    let absolute = std::path::absolute(&dir).map_err(|e| io(&dir, e))?;

    let sdk = match &args.sdk_path {
        Some(path) => std::path::absolute(path).map_err(|e| io(path, e))?,
        None => enclosing_sdk(&absolute).or_else(|| sdk_at(Path::new(BUILT_FROM_SDK))).ok_or_else(|| {
            CommandError::usage("cannot find the plugin SDK (agent-apply-sdk) to build the plugin with").hint(format!(
                "pass --sdk-path DIR, the plugins-sdk/ directory of an agent-apply checkout \
                     (this binary was built from {BUILT_FROM_SDK}, which is gone)"
            ))
        })?,
    };
    let sdk_dependency = format!("agent-apply-sdk = {{ path = {:?} }}", sdk.display().to_string());
    let sdk_note = "\nThe SDK dependency is a path to the SDK in an agent-apply checkout; \
                    the Cargo.lock beside it pins the versions that checkout was tested with.\n";
    let crate_name = name.replace('-', "_");
    let type_name: String = name
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect();
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", &crate_name)
            .replace("{{Type}}", &type_name)
            .replace("{{sdk_dependency}}", &sdk_dependency)
            .replace("{{sdk_note}}", sdk_note)
    };
    let files = [("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB_RS), ("README.md", README), ("rustfmt.toml", RUSTFMT)];
    for (file, template) in files {
        let path = dir.join(file);
        std::fs::write(&path, fill(template)).map_err(|e| io(&path, e))?;
    }
    // The checkout's lock file: the same dependency versions, so the plugin
    // builds offline from what building agent-apply already downloaded.
    if let Some(lock) = sdk.parent().map(|checkout| checkout.join("Cargo.lock")).filter(|l| l.is_file()) {
        std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(|e| io(&dir.join("Cargo.lock"), e))?;
    }
    println!("created the `{name}` format plugin in {} (SDK: {})", dir.display(), sdk.display());
    println!("  cargo test                                    # run its tests");
    println!("  cargo build --release --target wasm32-wasip2  # build the component");
    println!("  git agent-apply plugin check target/wasm32-wasip2/release/{crate_name}.wasm");
    Ok(Exit::Ok)
}

/// The `plugins-sdk/` of the agent-apply checkout that holds `dir`, if any.
fn enclosing_sdk(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|a| sdk_at(&a.join("plugins-sdk")))
}

/// `dir`, made absolute and tidy, if it holds the SDK crate.
fn sdk_at(dir: &Path) -> Option<PathBuf> {
    let holds = std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|t| t.contains("name = \"agent-apply-sdk\""));
    holds.then(|| std::fs::canonicalize(dir).ok()).flatten()
}
