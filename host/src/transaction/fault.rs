//! Test-only fault injection: `AGENT_APPLY_FAULT=<stage>` aborts the process
//! at that stage, the way a kill would, so tests can prove the repo is left
//! before-or-after and that `recover` finishes the job. Stages are an enum,
//! so a point in the code cannot be misspelt, and a stage name in the
//! environment that names no stage aborts at once, so a test cannot pass
//! by injecting a fault that never fires.

/// A moment a run can be killed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    AfterObjects,
    AfterJournal,
    MidRefMove,
    AfterRef,
    MidWrite,
    MidWorktree,
    MidIndexWrite,
    AfterWorktree,
}

/// Every stage, in the order a commit passes them.
pub const ALL: [Stage; 8] = [
    Stage::AfterObjects,
    Stage::AfterJournal,
    Stage::MidRefMove,
    Stage::AfterRef,
    Stage::MidWrite,
    Stage::MidWorktree,
    Stage::MidIndexWrite,
    Stage::AfterWorktree,
];

/// The stage names `AGENT_APPLY_FAULT` takes, in order.
pub const STAGES: [&str; 8] = [
    "after-objects",
    "after-journal",
    "mid-ref-move",
    "after-ref",
    "mid-write",
    "mid-worktree",
    "mid-index-write",
    "after-worktree",
];

impl Stage {
    /// Its name in `AGENT_APPLY_FAULT`.
    pub fn name(self) -> &'static str {
        STAGES[ALL.iter().position(|s| *s == self).expect("every stage is listed")]
    }
}

/// Abort here if the environment asks for a fault at `stage`.
pub fn point(stage: Stage) {
    let Ok(wanted) = std::env::var("AGENT_APPLY_FAULT") else { return };
    if !STAGES.contains(&wanted.as_str()) {
        eprintln!("agent-apply: AGENT_APPLY_FAULT={wanted:?} names no stage; stages: {}", STAGES.join(", "));
        std::process::abort();
    }
    if wanted == stage.name() {
        eprintln!("agent-apply: injected fault at {wanted}");
        std::process::abort();
    }
}
