//! What stops a plugin call that runs past its time limit.
//!
//! A call's store traps at its engine's next epoch once its time is up
//! ([`time_is_up`] checks the clock, so an epoch counted early only costs a
//! look at it). The epoch is counted by a timer of the calling thread's own,
//! armed for the call's limit and disarmed when it returns: in the normal
//! case it never fires. A thread that counted every 5 ms, as before, cost
//! each run its start and made the kernel flush a second core's view of the
//! process's memory at every unmap (#27: 0.2 ms of the 20-hunk diff's 5.3).
//! Where a thread's timer cannot be had (not Linux, or the kernel refuses),
//! [`Armed::Unsupported`] tells the runtime to start that thread instead.
//! The timers signal `SIGRTMIN + 6`, whose handler is installed the first
//! time a thread calls a plugin (the README tells library callers).
//!
//! An engine compiled without epoch checks ([`Stop::Exit`](super::Stop))
//! has nothing to trap with: [`arm_exit`]'s timer ends the process instead,
//! writing the run's timeout error, rendered before the call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, StoreContextMut, UpdateDeadline};

/// Watch `store`'s calls: from now on, each that [`arm`] starts is stopped
/// once its time is up.
pub fn watch<T: HasDeadline + 'static>(store: &mut Store<T>) {
    store.epoch_deadline_callback(time_is_up);
}

/// Start `store`'s next call with `limit` to run: its deadline, and a timer
/// that counts the epoch once the limit has passed, unless the returned
/// guard is dropped first.
pub fn arm<T: HasDeadline>(store: &mut Store<T>, limit: Duration) -> Armed {
    store.data_mut().set_deadline(Instant::now().checked_add(limit));
    store.set_epoch_deadline(1);
    imp::arm(store.engine(), limit, None)
}

/// Start a call on an engine without epoch checks with `limit` to run: a
/// timer that writes `report` and ends the process once the limit has
/// passed, unless the returned guard is dropped first.
pub fn arm_exit(engine: &wasmtime::Engine, limit: Duration, report: Arc<ExitReport>) -> Armed {
    imp::arm(engine, limit, Some(report))
}

/// How a run ends when a call runs past its time on an engine without
/// epoch checks: the bytes of its error report, the file descriptor they go
/// to (1 or 2) and the exit code. It is made before the call, since the
/// timer's signal handler may do no more than write and exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    pub fd: i32,
    pub text: Vec<u8>,
    pub code: u8,
}

impl ExitReport {
    /// Write the report whole and end the process at once: no destructor,
    /// buffer flush or exit handler runs, since the thread may be anywhere
    /// in a call. Async-signal-safe (`write` and `_exit` only).
    #[cfg(target_os = "linux")]
    fn deliver(&self) -> ! {
        let mut rest = &self.text[..];
        while !rest.is_empty() {
            // SAFETY: a write of initialized bytes that outlive the call.
            let written = unsafe { libc::write(self.fd, rest.as_ptr().cast(), rest.len()) };
            match written {
                n if n > 0 => rest = &rest[n as usize..],
                n if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                _ => break,
            }
        }
        // SAFETY: ends the process; nothing of it runs afterwards.
        unsafe { libc::_exit(i32::from(self.code)) }
    }
}

/// The store's epoch callback: trap when the call's time is up, else wait
/// for the next epoch.
fn time_is_up<T: HasDeadline>(store: StoreContextMut<'_, T>) -> wasmtime::Result<UpdateDeadline> {
    // No deadline: a limit too far off to be an instant.
    Ok(match store.data().deadline() {
        Some(deadline) if Instant::now() >= deadline => UpdateDeadline::Interrupt,
        _ => UpdateDeadline::Continue(1),
    })
}

/// Store state that knows when its current call must end.
pub trait HasDeadline {
    fn deadline(&self) -> Option<Instant>;
    fn set_deadline(&mut self, deadline: Option<Instant>);
}

/// A timer armed for one call, disarmed on drop. The timer is the arming
/// thread's, so the guard stays on that thread (it is not `Send`).
pub enum Armed {
    #[cfg(target_os = "linux")]
    Timer {
        /// The report the handler writes, kept until the timer is disarmed.
        _report: Option<Arc<ExitReport>>,
        _thread: std::marker::PhantomData<*const ()>,
    },
    /// No timer: the runtime's epoch thread must count instead (a call
    /// that would end the process must not run).
    Unsupported,
}

impl Drop for Armed {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Armed::Timer { .. } = self {
            imp::disarm();
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::Cell;
    use std::sync::{Arc, OnceLock};
    use std::time::Duration;

    use super::{Armed, ExitReport};

    thread_local! {
        /// The engine of the call running on this thread, for the handler.
        static ENGINE: Cell<*const wasmtime::Engine> = const { Cell::new(std::ptr::null()) };
        /// The report that ends the process when this thread's call runs
        /// out of time (engines without epoch checks), for the handler.
        static EXIT: Cell<*const ExitReport> = const { Cell::new(std::ptr::null()) };
        /// This thread's timer, made on its first call.
        static TIMER: ThreadTimer = ThreadTimer::new();
    }

    /// The timer's signal: a real-time one, which glibc and wasmtime leave alone.
    fn signal() -> libc::c_int {
        libc::SIGRTMIN() + 6
    }

    extern "C" fn on_time_up(_: libc::c_int) {
        // SAFETY: set only for the span of a call, from the report its
        // guard holds until after it is cleared.
        if let Some(report) = unsafe { EXIT.with(Cell::get).as_ref() } {
            report.deliver();
        }
        // Async-signal-safe: a thread-local read with no initializer to run,
        // and an atomic add (`increment_epoch` makes no syscall and takes no lock).
        let engine = ENGINE.with(Cell::get);
        // SAFETY: set only for the span of a call, from the `Engine` the
        // calling store holds, which outlives the call.
        if let Some(engine) = unsafe { engine.as_ref() } {
            engine.increment_epoch();
        }
    }

    /// Whether the handler is installed (once per process).
    fn handler_installed() -> bool {
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        *INSTALLED.get_or_init(|| {
            // SAFETY: a handler that only does what `on_time_up` says; the
            // struct is fully initialized before use.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_time_up as *const () as usize;
                action.sa_flags = libc::SA_RESTART | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal(), &action, std::ptr::null_mut()) == 0
            }
        })
    }

    struct ThreadTimer(Option<libc::timer_t>);

    impl ThreadTimer {
        fn new() -> Self {
            if !handler_installed() {
                return ThreadTimer(None);
            }
            // SAFETY: a timer that signals this thread alone; the struct is
            // fully initialized before use.
            unsafe {
                let mut event: libc::sigevent = std::mem::zeroed();
                event.sigev_notify = libc::SIGEV_THREAD_ID;
                event.sigev_signo = signal();
                event.sigev_notify_thread_id = libc::gettid();
                let mut timer: libc::timer_t = std::mem::zeroed();
                match libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) {
                    0 => ThreadTimer(Some(timer)),
                    _ => ThreadTimer(None),
                }
            }
        }

        fn set(&self, after: Duration) -> bool {
            let Some(timer) = self.0 else { return false };
            let value = libc::timespec {
                // `as _`: musl's libc crate marks `time_t` deprecated (it is to change).
                tv_sec: after.as_secs().min(i64::MAX as u64) as _,
                tv_nsec: after.subsec_nanos() as libc::c_long,
            };
            let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
            // SAFETY: this thread's live timer.
            unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) == 0 }
        }
    }

    impl Drop for ThreadTimer {
        fn drop(&mut self) {
            if let Some(timer) = self.0 {
                // SAFETY: this thread's timer, deleted once, as the thread ends.
                unsafe { libc::timer_delete(timer) };
            }
        }
    }

    pub fn arm(engine: &wasmtime::Engine, limit: Duration, report: Option<Arc<ExitReport>>) -> Armed {
        // A zero `it_value` would disarm: the shortest limit is a nanosecond.
        let limit = limit.max(Duration::from_nanos(1));
        ENGINE.with(|current| current.set(engine));
        EXIT.with(|current| current.set(report.as_deref().map_or(std::ptr::null(), std::ptr::from_ref)));
        match TIMER.try_with(|timer| timer.set(limit)) {
            Ok(true) => Armed::Timer { _report: report, _thread: std::marker::PhantomData },
            _ => {
                clear();
                Armed::Unsupported
            }
        }
    }

    pub fn disarm() {
        let _ = TIMER.try_with(|timer| timer.set(Duration::ZERO));
        clear();
    }

    fn clear() {
        ENGINE.with(|current| current.set(std::ptr::null()));
        EXIT.with(|current| current.set(std::ptr::null()));
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Armed, ExitReport};

    pub fn arm(_: &wasmtime::Engine, _: std::time::Duration, _: Option<std::sync::Arc<ExitReport>>) -> Armed {
        Armed::Unsupported
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use wasmtime::{Engine, Instance, Module};

    use super::*;

    /// A call's store state: its deadline, and how often it was looked at.
    struct Call {
        deadline: Option<Instant>,
        looked: Arc<AtomicUsize>,
    }

    impl HasDeadline for Call {
        fn deadline(&self) -> Option<Instant> {
            self.looked.fetch_add(1, Ordering::Relaxed);
            self.deadline
        }

        fn set_deadline(&mut self, deadline: Option<Instant>) {
            self.deadline = deadline;
        }
    }

    /// `spin(n)` counts `n` down to zero (`spin(0)` wraps: billions of turns).
    fn spin_module(engine: &Engine) -> Module {
        let spin = [0x03, 0x40, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x20, 0x00, 0x0b];
        Module::new(engine, super::super::core_wasm::module(&[("spin", &spin)], false)).unwrap()
    }

    /// Spin `turns` under `limit`, as the runtime calls a plugin: the store's
    /// deadline, its epoch callback and a timer armed for the call.
    fn spin(engine: &Engine, module: &Module, turns: u32, limit: Duration) -> (wasmtime::Result<u32>, Duration, usize) {
        let looked = Arc::new(AtomicUsize::new(0));
        let mut store = Store::new(engine, Call { deadline: None, looked: looked.clone() });
        watch(&mut store);
        let instance = Instance::new(&mut store, module, &[]).unwrap();
        let spin = instance.get_typed_func::<u32, u32>(&mut store, "spin").unwrap();
        let started = Instant::now();
        let armed = arm(&mut store, limit);
        assert!(!matches!(armed, Armed::Unsupported), "this Linux gives threads their timers");
        let result = spin.call(&mut store, turns);
        drop(armed);
        (result, started.elapsed(), looked.load(Ordering::Relaxed))
    }

    fn engine() -> Engine {
        Engine::new(&super::super::engine::config(super::super::Stop::Trap)).unwrap()
    }

    #[test]
    fn a_call_past_its_limit_is_stopped_soon_after() {
        let engine = engine();
        let module = spin_module(&engine);
        let (result, took, _) = spin(&engine, &module, 0, Duration::from_millis(100));
        let trap = result.unwrap_err();
        assert_eq!(trap.downcast_ref::<wasmtime::Trap>(), Some(&wasmtime::Trap::Interrupt));
        assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn another_calls_time_running_out_does_not_stop_a_call_with_time_left() {
        let engine = engine();
        let module = spin_module(&engine);
        let (short, long) = std::thread::scope(|threads| {
            let long = threads.spawn(|| spin(&engine, &module, 1_500_000_000, Duration::from_secs(60)));
            std::thread::sleep(Duration::from_millis(20));
            let short = spin(&engine, &module, 0, Duration::from_millis(30));
            (short, long.join().unwrap())
        });
        assert!(short.0.is_err(), "the short call ran out of time");
        let (result, took, looked) = long;
        assert!(looked > 0 && took > Duration::from_millis(50), "the long call saw the epoch move ({took:?})");
        assert_eq!(result.unwrap(), 0, "and ran to its end");
    }
}
