//! What keeps each call's time limit, by the runtime engine's way of
//! stopping a call ([`Stop`]): a trapping engine's epoch is counted when a
//! call's time is up; an engine without checks has the process end then,
//! with the run's timeout error (see [`deadline`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::{Engine, Store};

use super::deadline::{self, ExitReport};
use super::{PluginError, PluginState, Stop};

/// How often the deadline clock ticks, where a call's own timer cannot
/// be had (see [`deadline`]).
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// What a run says as it ends at a plugin's time limit: the report of the
/// timeout error it is given, as the caller would print it.
pub type ExitReporter = dyn Fn(&PluginError) -> ExitReport + Send + Sync;

/// A runtime's keeper of its calls' time limits.
#[derive(Clone)]
pub(super) enum Clock {
    /// A trapping engine: each call's timer counts the epoch, or, where a
    /// thread's timer cannot be had, a thread that ticks.
    Epoch(EpochClock),
    /// An engine without epoch checks: each call's timer ends the process.
    Exit(Arc<ExitClock>),
}

impl Clock {
    /// The clock of an engine that traps, or, given what to report as the
    /// process ends, of one without checks.
    pub fn new(reporter: Option<Box<ExitReporter>>) -> Clock {
        match reporter {
            Some(reporter) => Clock::Exit(Arc::new(ExitClock { reporter, ended: AtomicBool::new(false) })),
            None => Clock::Epoch(EpochClock::default()),
        }
    }

    /// How the engine this clock keeps time for stops a call.
    pub fn stop(&self) -> Stop {
        match self {
            Clock::Epoch(_) => Stop::Trap,
            Clock::Exit(_) => Stop::Exit,
        }
    }

    /// Make `store` ready for calls under a deadline.
    pub fn watch(&self, store: &mut Store<PluginState>) {
        if let Clock::Epoch(_) = self {
            deadline::watch(store);
        }
    }

    /// Start `plugin`'s `call` on `store` with `timeout` to run; the returned
    /// guard disarms it. On an engine without checks the call is refused
    /// rather than run without a timer that can end it, and after
    /// [`Clock::end_calls`].
    pub fn arm(
        &self,
        store: &mut Store<PluginState>,
        plugin: &str,
        call: &'static str,
        timeout: Duration,
    ) -> Result<deadline::Armed, PluginError> {
        match self {
            Clock::Epoch(clock) => Ok(clock.arm(store, timeout)),
            Clock::Exit(clock) => clock.arm(store.engine(), plugin, call, timeout),
        }
    }

    /// No call may start from now on: on an engine without checks, one that
    /// ran out of time would end the process while the run writes.
    pub fn end_calls(&self) {
        if let Clock::Exit(clock) = self {
            clock.ended.store(true, Ordering::SeqCst);
        }
    }
}

/// The time limits of an engine without epoch checks.
pub(super) struct ExitClock {
    reporter: Box<ExitReporter>,
    ended: AtomicBool,
}

impl ExitClock {
    fn arm(
        &self,
        engine: &Engine,
        plugin: &str,
        call: &'static str,
        timeout: Duration,
    ) -> Result<deadline::Armed, PluginError> {
        let not_called = |reason| PluginError::NotCalled { plugin: plugin.to_string(), call, reason };
        if self.ended.load(Ordering::SeqCst) {
            return Err(not_called("the run's plugin calls had ended (a bug in agent-apply)"));
        }
        let timed_out = PluginError::Timeout { plugin: plugin.to_string(), call, limit: timeout };
        let report = Arc::new((self.reporter)(&timed_out));
        match deadline::arm_exit(engine, timeout, report) {
            deadline::Armed::Unsupported => Err(not_called("no timer could be armed to keep its time limit")),
            armed => Ok(armed),
        }
    }
}

/// What counts an engine's epoch where a call's own timer cannot be had
/// (see [`deadline`]): a thread ticking every [`EPOCH_TICK`], started on
/// first need. It watches `running` and stops once every clone is gone.
#[derive(Clone, Default)]
pub(super) struct EpochClock {
    running: Arc<Mutex<bool>>,
}

impl EpochClock {
    /// Start `store`'s next call with `timeout` to run: its deadline, and
    /// what will count the epoch when that passes (disarmed on drop).
    fn arm(&self, store: &mut Store<PluginState>, timeout: Duration) -> deadline::Armed {
        let armed = deadline::arm(store, timeout);
        if let deadline::Armed::Unsupported = armed {
            self.start(store.engine());
        }
        armed
    }

    fn start(&self, engine: &Engine) {
        let mut running = self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if *running {
            return;
        }
        let watch = Arc::downgrade(&self.running);
        let engine = engine.clone();
        std::thread::Builder::new()
            .name("agent-apply-epoch".into())
            .spawn(move || {
                while watch.strong_count() > 0 {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("cannot start the plugin deadline clock");
        *running = true;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::registry::BUILTIN_FORMATS;
    use crate::runtime::{ComponentCache, Limits, Runtime};

    /// Once the run may write, an engine without checks runs no call: a
    /// call that ran out of time then would end the process mid-write.
    #[test]
    fn after_the_calls_end_an_engine_without_checks_refuses_every_call() {
        // Made before each call; no call here runs out of its minute.
        let never = |_: &PluginError| ExitReport { fd: 2, text: b"a test call ran out of time\n".to_vec(), code: 99 };
        let limits = Limits { timeout: Duration::from_secs(60), ..Limits::default() };
        let runtime = Runtime::ending_at_timeout(ComponentCache::disabled(), limits, Box::new(never)).unwrap();
        assert_eq!(runtime.stop(), Stop::Exit);
        let whole = BUILTIN_FORMATS.iter().find(|f| f.name == "whole").unwrap();
        let code = whole.precompiled.map(|p| p.code(Stop::Exit));
        let plugin = runtime.load_builtin(whole.name, whole.wasm, whole.sha256, code).unwrap();
        let mut instance = plugin.instantiate().unwrap();
        instance.detect("a.txt\n```\nx\n```\n").unwrap();

        runtime.end_calls();
        let refused = instance.detect("a.txt\n```\nx\n```\n").unwrap_err();
        assert!(matches!(refused, PluginError::NotCalled { call: "detect", .. }), "{refused:?}");
        let refused = plugin.instantiate().map(|_| ()).unwrap_err();
        assert!(matches!(refused, PluginError::NotCalled { call: "instantiate", .. }), "{refused:?}");
    }

    /// A trapping engine's calls go on after `end_calls`: its callers (the
    /// MCP server) outlive one run's writes.
    #[test]
    fn a_trapping_engine_keeps_calling_after_the_calls_end() {
        let runtime = Runtime::new(ComponentCache::disabled(), Limits::default()).unwrap();
        let whole = BUILTIN_FORMATS.iter().find(|f| f.name == "whole").unwrap();
        let code = whole.precompiled.map(|p| p.code(Stop::Trap));
        let plugin = runtime.load_builtin(whole.name, whole.wasm, whole.sha256, code).unwrap();
        runtime.end_calls();
        assert!(plugin.instantiate().unwrap().detect("a.txt\n```\nx\n```\n").is_ok());
    }
}
