//! `git agent-apply plugin new NAME [--path DIR] [--sdk-path DIR]`: scaffold a
//! format plugin crate that builds with one command and passes its own tests.

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CommandError, Exit};

const CARGO_TOML: &str = include_str!("template/Cargo.toml.txt");
const LIB_RS: &str = include_str!("template/lib.rs.txt");
const README: &str = include_str!("template/README.md.txt");

/// The dependency line used outside this repository.
const PUBLISHED_SDK: &str = "agent-apply-sdk = \"0.1\"";

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The format's name: lowercase letters, digits and `-`, starting with a letter.
    name: String,
    /// Where to create the crate (default: ./NAME). Must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Depend on the SDK at this directory (default: the agent-apply checkout
    /// around the new crate, if any, else the published crate).
    #[arg(long, value_name = "DIR")]
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
        Some(path) => Some(std::path::absolute(path).map_err(|e| io(path, e))?),
        None => enclosing_sdk(&absolute),
    };
    let (sdk_dependency, sdk_note) = match &sdk {
        Some(path) => (
            format!("agent-apply-sdk = {{ path = {:?} }}", path.display().to_string()),
            String::from(
                "\nThe SDK dependency is a path into your agent-apply checkout; outside it, use\n\
                 `agent-apply-sdk = \"0.1\"` (the SDK's version matches the contract version the host supports).\n",
            ),
        ),
        None => (
            PUBLISHED_SDK.to_string(),
            String::from(
                "\nInside an agent-apply checkout, `plugin new` depends on its `plugins-sdk/` by path instead.\n",
            ),
        ),
    };
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
            .replace("{{sdk_note}}", &sdk_note)
    };
    for (file, template) in [("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB_RS), ("README.md", README)] {
        let path = dir.join(file);
        std::fs::write(&path, fill(template)).map_err(|e| io(&path, e))?;
    }
    println!("created the `{name}` format plugin in {}", dir.display());
    println!("  cargo test                                    # run its tests");
    println!("  cargo build --release --target wasm32-wasip2  # build the component");
    println!("  git agent-apply plugin check target/wasm32-wasip2/release/{crate_name}.wasm");
    Ok(Exit::Ok)
}

/// The `plugins-sdk/` of the agent-apply checkout that holds `dir`, if any.
fn enclosing_sdk(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|a| a.join("plugins-sdk")).find(|sdk| {
        std::fs::read_to_string(sdk.join("Cargo.toml")).is_ok_and(|t| t.contains("name = \"agent-apply-sdk\""))
    })
}
