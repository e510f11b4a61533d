#![no_main]
agent_apply_fuzz::format_target!(agent_apply_format_tool_calls::ToolCalls, apply_bytes);
