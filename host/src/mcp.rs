//! `git agent-apply mcp`: the tool as a Model Context Protocol server over
//! stdio, so an agent harness adds it with one line of config. Every tool
//! is a thin caller of the library (the [`pipeline`], [`view`], undo); one
//! [`Workspace`] lives as long as the server, so the formats it loaded stay
//! loaded between calls. Confinement, limits and locks are the CLI's own:
//! the same code runs.
//!
//! A request the server cannot route or whose arguments do not fit the
//! tool's schema is a JSON-RPC error; a tool that ran and failed (an edit
//! that did not apply, a file that may not be read) is a tool error whose
//! text the model can act on. The server never exits on bad input.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::pipeline::{self, ApplyOptions};
use crate::report::{ApplyReport, ReportStatus};
use crate::workspace::Workspace;
use crate::{Error, view};

/// The server: the workspace it serves, behind a lock (calls run one at a
/// time, as commits to one branch must).
#[derive(Clone)]
pub struct Server {
    workspace: Arc<Mutex<Workspace>>,
}

/// Serve `workspace` over stdin/stdout until the client closes the stream.
pub fn serve_stdio(workspace: Workspace) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let server = Server { workspace: Arc::new(Mutex::new(workspace)) };
        let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}

/// `apply`: a model's reply, in any format this tool reads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyInput {
    /// The reply text holding the edits (SEARCH/REPLACE blocks, a diff, a V4A patch, tool calls, ...).
    reply: String,
    /// Edit format name or alias; detected when omitted.
    format: Option<String>,
    /// The model that wrote the reply, which picks its configured format.
    model: Option<String>,
    /// Compute and report; change nothing.
    #[serde(default)]
    dry_run: bool,
    /// Write the working tree only; no commit.
    #[serde(default)]
    no_commit: bool,
    /// Apply the edits that succeed and report the rest.
    #[serde(default)]
    partial: bool,
    /// Commands to run on the result before it is kept (after the repository's configured checks).
    #[serde(default)]
    checks: Vec<String>,
    /// The commit message.
    message: Option<String>,
    /// The versions the reply was written against: `REV` (a revision or blob id) for every file, or
    /// `PATH=REV` for one. Edits written against an older version are rebased onto the current file.
    #[serde(default)]
    base: Vec<String>,
}

/// `read`: a file as the model should read it before editing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// Repository-relative path of the file.
    path: String,
    /// `numbered` (the default: `cat -n` lines), `compact` (line numbers and a version tag for
    /// line-range edits) or `hashline` (`LINE:HASH|` lines), or any format name.
    view: Option<String>,
    /// Line ranges to show, e.g. `10-20,45-55` (default: the whole file).
    lines: Option<String>,
}

/// `undo`: revert the last agent commit (or redo the last undo).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UndoInput {
    /// Redo the last undo instead.
    #[serde(default)]
    redo: bool,
    /// Say what would be done; change nothing.
    #[serde(default)]
    dry_run: bool,
}

/// `prompt`: a format's instructions for a model.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PromptInput {
    /// The format (default: the repository's configured format).
    format: Option<String>,
}

/// `formats`: takes nothing.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoInput {}

/// `str_replace`: Anthropic's text editor command.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StrReplaceInput {
    /// Repository-relative (or absolute, inside the repository) path of the file.
    path: String,
    /// The exact text to replace; it must occur once in the file.
    old_str: String,
    /// The text to put in its place.
    new_str: String,
}

/// `edit`: Claude Code's Edit tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditInput {
    /// Path of the file (absolute paths inside the repository are accepted).
    file_path: String,
    /// The exact text to replace.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    replace_all: bool,
}

/// One tool: its name, what it is for, and its input's schema.
fn tool<T: JsonSchema + 'static>(name: &'static str, description: &'static str) -> Tool {
    Tool::new(name, description, Arc::new(JsonObject::new())).with_input_schema::<T>()
}

fn tools() -> Vec<Tool> {
    vec![
        tool::<ApplyInput>(
            "apply",
            "Apply the code edits in a model reply to the repository atomically: every edit or none, committed \
             as one git commit. Returns the JSON report; a failed apply is a tool error whose text says what to fix.",
        ),
        tool::<ReadInput>("read", "Show a file (or line ranges of it) the way to read it before editing it."),
        tool::<StrReplaceInput>(
            "str_replace",
            "Replace one exact occurrence of old_str with new_str in a file, committed atomically.",
        ),
        tool::<EditInput>(
            "edit",
            "Replace old_string with new_string in a file (every occurrence with replace_all), committed atomically.",
        ),
        tool::<UndoInput>("undo", "Revert the last commit this tool made (or redo the last undo)."),
        tool::<NoInput>("formats", "List the edit formats this tool reads."),
        tool::<PromptInput>("prompt", "A format's instructions for a model, with an example reply."),
    ]
}

/// The arguments of a call as `T`, or a JSON-RPC invalid-params error.
fn arguments<T: DeserializeOwned>(request: &CallToolRequestParams) -> Result<T, ErrorData> {
    let value = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
    serde_json::from_value(value)
        .map_err(|error| ErrorData::invalid_params(format!("invalid arguments for `{}`: {error}", request.name), None))
}

/// A library error as a tool error: the message, its hint, and the text
/// for the model when its input caused it.
fn tool_error(error: Error) -> CallToolResult {
    let command_error = crate::cli::CommandError::from(error);
    let mut text = command_error.reflection.clone().unwrap_or_default();
    if text.is_empty() {
        text = format!("error: {}\n", command_error.message);
        for hint in &command_error.hints {
            text += &format!("hint: {hint}\n");
        }
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A report as a tool result: the report as structured content; the
/// reflection (what went wrong and what to send next) or the human summary
/// as text. A run that applied nothing is a tool error.
fn report_result(report: &ApplyReport) -> CallToolResult {
    let value = serde_json::to_value(report).expect("report serializes");
    let text = if report.reflection.is_empty() { report.human(false) } else { report.reflection.clone() };
    let failed = matches!(report.status, ReportStatus::Failed | ReportStatus::ChecksFailed);
    let mut result = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(value);
    result
}

impl Server {
    /// Run one tool call to its result, on the workspace.
    fn call(&self, request: &CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let mut workspace = self.workspace.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let workspace = &mut *workspace;
        let outcome = match request.name.as_ref() {
            "apply" => {
                let input: ApplyInput = arguments(request)?;
                let options = ApplyOptions {
                    format: input.format,
                    model: input.model,
                    dry_run: input.dry_run,
                    no_commit: input.no_commit,
                    partial: input.partial,
                    checks: input.checks,
                    message: input.message,
                    base: input.base,
                    ..ApplyOptions::default()
                };
                pipeline::apply(workspace, input.reply, &options).map(|applied| report_result(&applied.report))
            }
            "str_replace" => {
                let input: StrReplaceInput = arguments(request)?;
                let call = serde_json::json!({"command": "str_replace", "path": input.path, "old_str": input.old_str, "new_str": input.new_str});
                apply_tool_call(workspace, call)
            }
            "edit" => {
                let input: EditInput = arguments(request)?;
                let call = serde_json::json!({"name": "Edit", "input": {"file_path": input.file_path, "old_string": input.old_string, "new_string": input.new_string, "replace_all": input.replace_all}});
                apply_tool_call(workspace, call)
            }
            "read" => {
                let input: ReadInput = arguments(request)?;
                let ranges = match input.lines.as_deref().map(view::parse_ranges).transpose() {
                    Ok(ranges) => ranges.map(|r| r.0).unwrap_or_default(),
                    Err(message) => return Err(ErrorData::invalid_params(message, None)),
                };
                let view = input.view.as_deref().unwrap_or(view::NUMBERED);
                view::read(workspace, &input.path, view, &ranges, false)
                    .map(|view| CallToolResult::success(vec![ContentBlock::text(view.text)]))
            }
            "undo" => {
                let input: UndoInput = arguments(request)?;
                undo(workspace, &input)
            }
            "formats" => {
                let NoInput {} = arguments(request)?;
                formats(workspace)
            }
            "prompt" => {
                let input: PromptInput = arguments(request)?;
                prompt(workspace, input.format.as_deref())
            }
            other => return Err(ErrorData::invalid_params(format!("no tool is named `{other}`"), None)),
        };
        Ok(outcome.unwrap_or_else(tool_error))
    }
}

/// Apply one edit-tool call through the tool-calls format.
fn apply_tool_call(workspace: &mut Workspace, call: serde_json::Value) -> Result<CallToolResult, Error> {
    let options = ApplyOptions { format: Some("tool-calls".into()), ..ApplyOptions::default() };
    let applied = pipeline::apply(workspace, call.to_string(), &options)?;
    Ok(report_result(&applied.report))
}

fn undo(workspace: &mut Workspace, input: &UndoInput) -> Result<CallToolResult, Error> {
    let repo = workspace.git_repo()?;
    let undone = if input.redo { repo.redo(input.dry_run)? } else { repo.undo(input.dry_run)? };
    let verb = if input.redo { "Redid" } else { "Undid" };
    let text = format!(
        "{}{verb} commit {}; restored {}.\n",
        if input.dry_run { "(dry run) " } else { "" },
        crate::transaction::short_id(&undone.commit),
        undone.restored.join(", ")
    );
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::to_value(&undone).expect("undo serializes"));
    Ok(result)
}

fn formats(workspace: &mut Workspace) -> Result<CallToolResult, Error> {
    let mut rows = Vec::new();
    let mut text = String::new();
    for entry in workspace.registry.entries() {
        let info = workspace.registry.summary(entry)?;
        text += &format!("{}: {}\n", entry.name, info.summary);
        rows.push(serde_json::json!({"name": entry.name, "aliases": entry.aliases, "summary": info.summary}));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::json!({ "formats": rows }));
    Ok(result)
}

fn prompt(workspace: &mut Workspace, format: Option<&str>) -> Result<CallToolResult, Error> {
    let name = format.or(workspace.config.format.as_deref()).unwrap_or("editblock").to_string();
    let entry = workspace.registry.find(&name)?.clone();
    let info = workspace.registry.instantiate(&entry)?.info()?;
    let mut text = info.instructions.trim_end().to_string();
    if !info.example_reply.is_empty() {
        text += &format!("\n\nFor example:\n\n{}\n", info.example_reply.trim_end());
    }
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::from_build_env();
        implementation.name = "git-agent-apply".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        let mut config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Edits to this git repository go through these tools: `apply` takes a whole reply with edits in any \
             common format, `str_replace` and `edit` take one edit each. Each call applies all of its edits or \
             none and commits them; a failed call says what to fix. Use `read` to see a file before editing it.",
        );
        config.server_info = implementation;
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult { tools: tools(), ..ListToolsResult::default() })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.clone();
        // Applying blocks on files, git and plugins: off the protocol's thread.
        let result = tokio::task::spawn_blocking(move || server.call(&request))
            .await
            .map_err(|error| ErrorData::internal_error(format!("the tool call failed: {error}"), None))?;
        // The server idles between calls: what a large call freed goes
        // back to the kernel rather than being kept for the next.
        crate::alloc::release_kept();
        result.map(CallToolResponse::from)
    }
}
