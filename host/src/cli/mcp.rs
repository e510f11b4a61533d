//! `git agent-apply mcp`: serve the repository to an agent harness over
//! the Model Context Protocol (stdio).

use clap::Args;

use super::{CommandError, Exit, GlobalArgs, open_workspace};

#[derive(Debug, Args)]
pub struct McpArgs {}

pub fn run(global: &GlobalArgs, _args: &McpArgs) -> Result<Exit, CommandError> {
    let workspace = open_workspace(global)?;
    crate::mcp::serve_stdio(workspace)
        .map_err(|error| CommandError::usage(format!("the MCP server stopped: {error}")))?;
    Ok(Exit::Ok)
}
