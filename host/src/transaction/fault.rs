//! Test-only fault injection: `AGENT_APPLY_FAULT=<stage>` aborts the process
//! at that stage, the way a kill would, so tests can prove the repo is left
//! before-or-after and that `recover` finishes the job.

/// The stages a run can be killed at, in order.
pub const STAGES: &[&str] = &[
    "after-objects",
    "after-journal",
    "mid-ref-move",
    "after-ref",
    "mid-write",
    "mid-worktree",
    "mid-index-write",
    "after-worktree",
];

/// Abort here if the environment asks for a fault at `stage`.
pub fn point(stage: &str) {
    if std::env::var("AGENT_APPLY_FAULT").is_ok_and(|wanted| wanted == stage) {
        eprintln!("agent-apply: injected fault at {stage}");
        std::process::abort();
    }
}
