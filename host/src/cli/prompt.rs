//! `git agent-apply prompt FORMAT [--model NAME] [--json]`: the format's
//! instructions for a model, as text or as chat messages for a harness.

use agent_apply_sdk::types::{File, OptionValue};
use clap::Args;
use schemars::JsonSchema;
use serde::Serialize;

use super::{CommandError, Exit, GlobalArgs, open_workspace};
use crate::registry::ChosenBy;
use crate::report::FormatChoice;

#[derive(Debug, Args)]
pub struct PromptArgs {
    /// The format whose instructions to print (default: the one `--model`
    /// or the config picks).
    #[arg(add = clap_complete::engine::ArgValueCandidates::new(super::completions::format_candidates))]
    format: Option<String>,
    /// The model the prompt is for; picks its best-suited format when no
    /// FORMAT is given.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Message {
    role: &'static str,
    content: String,
}

/// `prompt --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PromptJson {
    schema: u32,
    format: FormatChoice,
    system: String,
    examples: Vec<Message>,
    /// Ready tool definitions (JSON Schema) for the model APIs, from a format
    /// whose edits are tool calls: `{anthropic, openai, openai_responses}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<serde_json::Value>,
}

pub fn run(global: &GlobalArgs, args: &PromptArgs) -> Result<Exit, CommandError> {
    let workspace = open_workspace(global)?;
    let (entry, by) = match (&args.format, &workspace.config.format, &args.model) {
        (Some(name), _, _) => (workspace.registry.find(name)?.clone(), ChosenBy::Flag),
        (None, Some(name), _) => (workspace.registry.find(name)?.clone(), ChosenBy::Config),
        (None, None, Some(model)) => {
            let (entry, pattern) = workspace.registry.format_for_model(model).ok_or_else(|| {
                CommandError::usage(format!("no format is known for model '{model}'"))
                    .hint("name the format: `git agent-apply prompt FORMAT`, or map the model under [models] in .agent-apply.toml")
            })?;
            (entry.clone(), ChosenBy::Model { model: model.clone(), pattern })
        }
        (None, None, None) => {
            return Err(CommandError::usage("which format? name one, or pass --model NAME")
                .hint("`git agent-apply formats` lists them"));
        }
    };
    let mut instance = workspace.registry.instantiate(&entry)?;
    let info = instance.info()?;
    if !global.json {
        println!("{}", info.instructions.trim_end());
        if !info.example_reply.is_empty() {
            println!("\nFor example:\n\n{}", info.example_reply.trim_end());
        }
        return Ok(Exit::Ok);
    }
    let options = workspace.config.plugin_options(&entry.name, None);
    let mut examples = Vec::new();
    if !info.example_reply.is_empty() {
        // The files as the model would read them for this format (numbered
        // or hash-tagged lines where the format has such a view).
        let mut user = String::from("Here are the files to edit:\n");
        for file in &info.example_files {
            let view = instance.render(file, &[], &options)?.unwrap_or_else(|_| file.content.clone());
            let fence = fence_for(&view);
            user += &format!("\n{}\n{fence}\n{}", file.path, view);
            if !view.ends_with('\n') {
                user.push('\n');
            }
            user += &format!("{fence}\n");
        }
        if info.example_files.is_empty() {
            user = "Make the change.".to_string();
        }
        examples.push(Message { role: "user", content: user });
        examples.push(Message { role: "assistant", content: info.example_reply.clone() });
    }
    // A format publishes tool definitions by rendering them on request;
    // any other format renders a view of the empty file (no object) or
    // refuses the option, and has none.
    let mut asking = options;
    asking.push(OptionValue { key: "render".into(), value: "tool-definitions".into() });
    let rendered = instance.render(&File::new("", ""), &[], &asking).ok().and_then(Result::ok);
    let tools = rendered.and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let report = PromptJson {
        schema: crate::report::SCHEMA,
        format: FormatChoice { name: entry.name.clone(), chosen_by: by, also: Vec::new() },
        system: info.instructions,
        examples,
        tools: tools.filter(serde_json::Value::is_object),
    };
    super::output::json(&report);
    Ok(Exit::Ok)
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}
