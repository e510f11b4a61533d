//! `git agent-apply plugin check PATH`: load a plugin, validate its exports
//! and `info`, and run its own example through `detect`, `parse`, `apply`,
//! `render` and `lint`, printing each check.

use std::path::PathBuf;

use agent_apply_sdk::types::{ApplyOutput, EditStatus, FormatInfo, OptionValue, Severity};
use agent_apply_sdk::{KEEP_BY_INDEX, KEEP_PAYLOADS, KEPT_EDITS_VERSION, SUMMARIES};
use clap::Args;
use sha2::{Digest, Sha256};

use super::{CommandError, Exit, GlobalArgs};
use crate::cli::open_workspace;
use crate::runtime::{NativePlugin, PluginInstance};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The plugin: a wasm component (`.wasm`), or with `--native` a native library.
    path: PathBuf,
    /// Load PATH as a trusted native library (it runs with your full privileges).
    #[arg(long)]
    native: bool,
}

/// The checks so far, printed as they are made.
#[derive(Default)]
struct Checks {
    failed: Vec<String>,
    passed: usize,
}

impl Checks {
    fn check(&mut self, what: &str, result: Result<String, String>) {
        match result {
            Ok(detail) => {
                self.passed += 1;
                println!("ok    {what}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") });
            }
            Err(why) => {
                println!("FAIL  {what}: {why}");
                self.failed.push(format!("{what}: {why}"));
            }
        }
    }
}

pub fn run(global: &GlobalArgs, args: &CheckArgs) -> Result<Exit, CommandError> {
    let workspace = open_workspace(global)?;
    let path = &args.path;
    let bytes = std::fs::read(path).map_err(|e| {
        let build = if args.native { "cargo build --release" } else { "cargo build --release --target wasm32-wasip2" };
        CommandError::usage(format!("cannot read the plugin {}: {e}", path.display()))
            .hint(format!("build it first: {build}"))
    })?;
    let digest = crate::registry::hex(&Sha256::digest(&bytes));
    let label = path.file_stem().map_or_else(|| "plugin".into(), |s| s.to_string_lossy().into_owned());
    let kind = if args.native { "native library" } else { "wasm component" };
    println!("checking the {kind} {} (sha256 {digest})", path.display());
    let mut plugin = if args.native {
        PluginInstance::Native(NativePlugin::load(&label, path)?)
    } else {
        workspace.registry.runtime().load(&label, &bytes, &digest)?.instantiate()?
    };
    println!("ok    exports the agent-apply:format@{} contract", agent_apply_sdk::CONTRACT_VERSION);

    let mut checks = Checks::default();
    smoke_test(&mut plugin, &mut checks)?;
    if checks.failed.is_empty() {
        println!("{} checks passed", checks.passed + 1);
        return Ok(Exit::Ok);
    }
    Err(CommandError::usage(format!(
        "plugin {} failed {} of {} checks: {}",
        path.display(),
        checks.failed.len(),
        checks.failed.len() + checks.passed + 1,
        checks.failed.join("; ")
    ))
    .hint("fix the plugin's `info` and its example so the example reply applies to the example files"))
}

/// Where the plugin exports contract 0.2's `kept-edits`: the example's
/// edits, kept by a `parse` and applied by index, come out as `apply` made
/// them by value. The `parse` is asked as a plain run asks: the edits kept
/// for `apply-kept` alone (no payloads) and no summaries.
fn check_kept_edits(
    plugin: &mut PluginInstance,
    info: &FormatInfo,
    by_value: &ApplyOutput,
    checks: &mut Checks,
) -> Result<(), CommandError> {
    let keep = [
        OptionValue { key: KEEP_PAYLOADS.into(), value: KEEP_BY_INDEX.into() },
        OptionValue { key: SUMMARIES.into(), value: "off".into() },
    ];
    let count = plugin.parse(&info.example_reply, &keep)?.edits.len() as u32;
    let Some(parse) = plugin.latest_parse() else { return Ok(()) };
    let indexes: Vec<u32> = (0..count).collect();
    let Some(by_index) = plugin.apply_kept(&info.example_files, parse, &indexes, &keep) else { return Ok(()) };
    let result = match by_index? {
        Err(error) => Err(format!("apply-kept refused the kept edits: {error}")),
        Ok(out) if out != *by_value => Err("apply-kept made other changes or outcomes than apply".to_string()),
        Ok(_) => Ok(format!("agent-apply:format@{KEPT_EDITS_VERSION}")),
    };
    checks.check("apply-kept applies the kept example edits as apply does", result);
    Ok(())
}

/// Everything but loading. A plugin crash is an error (it ends the check);
/// a wrong answer is a failed check.
fn smoke_test(plugin: &mut PluginInstance, checks: &mut Checks) -> Result<(), CommandError> {
    let info = plugin.info()?;
    let name_ok = info.name.starts_with(|c: char| c.is_ascii_lowercase())
        && info.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    checks.check(
        "info: name",
        if name_ok { Ok(info.name.clone()) } else { Err(format!("{:?} is not lowercase [a-z0-9-]", info.name)) },
    );
    let semver = info.version.split('.').count() == 3 && info.version.split('.').all(|p| p.parse::<u64>().is_ok());
    checks.check(
        "info: version",
        if semver { Ok(info.version.clone()) } else { Err(format!("{:?} is not MAJOR.MINOR.PATCH", info.version)) },
    );
    for (field, value) in
        [("summary", &info.summary), ("instructions", &info.instructions), ("example-reply", &info.example_reply)]
    {
        let result = if value.trim().is_empty() { Err("is empty".to_string()) } else { Ok(String::new()) };
        checks.check(&format!("info: {field}"), result);
    }
    if info.example_reply.trim().is_empty() {
        return Ok(());
    }

    let confidence = plugin.detect(&info.example_reply)?;
    checks.check(
        "detect recognises the example reply",
        if confidence > 0.0 && confidence <= 1.0 {
            Ok(format!("confidence {confidence:.2}"))
        } else {
            Err(format!("confidence {confidence}"))
        },
    );

    let parsed = plugin.parse(&info.example_reply, &[])?;
    let errors: Vec<&str> =
        parsed.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
    let parse_result = if !errors.is_empty() {
        Err(format!("errors: {}", errors.join("; ")))
    } else if parsed.edits.is_empty() {
        Err("no edits".to_string())
    } else {
        Ok(format!("{} edits", parsed.edits.len()))
    };
    let parsed_ok = parse_result.is_ok();
    checks.check("parse reads the example reply", parse_result);
    if !parsed_ok {
        return Ok(());
    }

    let applied = plugin.apply(&info.example_files, &parsed.edits, &[])?;
    let apply_result = match &applied {
        Err(error) => Err(format!("apply refused the request: {error}")),
        Ok(out) => {
            let failed: Vec<String> = out
                .outcomes
                .iter()
                .filter(|o| o.status == EditStatus::Failed)
                .map(|o| format!("edit {}: {}", o.edit, o.message))
                .collect();
            if out.outcomes.len() != parsed.edits.len() {
                Err(format!("{} outcomes for {} edits", out.outcomes.len(), parsed.edits.len()))
            } else if !failed.is_empty() {
                Err(failed.join("; "))
            } else if out.changes.is_empty() {
                Err("no file changed".to_string())
            } else {
                Ok(format!("{} files changed", out.changes.len()))
            }
        }
    };
    checks.check("apply applies the example to the example files", apply_result);
    if let Ok(by_value) = applied {
        check_kept_edits(plugin, &info, &by_value, checks)?;
    }

    for file in &info.example_files {
        let rendered = plugin.render(file, &[], &[])?;
        checks.check(&format!("render {}", file.path), rendered.map(|_| String::new()));
        plugin.lint(file)?;
    }
    Ok(())
}
