#![no_main]
agent_apply_fuzz::format_target!(agent_apply_format_apply_patch::ApplyPatch, apply_bytes);
