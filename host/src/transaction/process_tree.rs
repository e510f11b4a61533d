//! Processes the sandbox starts die with the run, children and all.
//!
//! `PR_SET_PDEATHSIG` kills a direct child when the run dies, but not what
//! that child started: a check running `( sleep 3; touch x ) &` would outlive
//! a killed run. So a check runs under a supervisor, this binary's hidden
//! `__supervise` mode:
//!
//! - it gets `SIGTERM` when the run dies (a death signal it can catch);
//! - it is a child subreaper, so whatever the check leaves behind, even a
//!   daemon that left its process group, is re-parented to it;
//! - it starts the check in a process group of its own, waits for it, then
//!   kills the group and every process re-parented to it, and exits with the
//!   check's status; on `SIGTERM`, `SIGINT` or `SIGHUP` it kills them all
//!   at once.
//!
//! A check therefore never leaves a process behind, whether the run ends
//! normally or is killed. Where the supervisor cannot be used (not Linux, or
//! the library linked into another program), the check still runs in its own
//! process group, which is killed when it ends.

use std::ffi::OsString;
use std::process::Command;

/// The hidden subcommand that runs the supervisor.
pub const SUPERVISE: &str = "__supervise";

/// Make `command` die with this process (Linux), so a killed run cannot leave
/// a git command writing in the repository after it is gone.
pub fn dies_with_run(command: &mut Command) -> &mut Command {
    with_death_signal(command, death::KILL)
}

/// A command running `sh -c script` whose whole process tree dies with the
/// run and is killed when the script ends.
pub fn check_command(script: &str) -> Command {
    let shell = [OsString::from("sh"), OsString::from("-c"), OsString::from(script)];
    supervised(&shell)
}

/// A command running `program` the same way as [`check_command`].
pub fn program_command(program: &std::path::Path) -> Command {
    supervised(&[program.as_os_str().to_owned()])
}

fn supervised(argv: &[OsString]) -> Command {
    match supervisor() {
        Some(exe) => {
            let mut command = Command::new(exe);
            command.arg(SUPERVISE).arg(std::process::id().to_string()).arg("--").args(argv);
            with_death_signal(&mut command, death::TERM);
            command
        }
        None => {
            let mut command = Command::new(&argv[0]);
            command.args(&argv[1..]);
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            with_death_signal(&mut command, death::KILL);
            command
        }
    }
}

/// This binary, when it is the tool's own (it then has the `__supervise`
/// mode); `None` when the library is linked into another program.
fn supervisor() -> Option<std::path::PathBuf> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_string_lossy();
    name.starts_with("git-agent-apply").then_some(exe)
}

#[cfg(target_os = "linux")]
mod death {
    pub const KILL: i32 = libc::SIGKILL;
    pub const TERM: i32 = libc::SIGTERM;
}

#[cfg(not(target_os = "linux"))]
mod death {
    pub const KILL: i32 = 9;
    pub const TERM: i32 = 15;
}

#[cfg(target_os = "linux")]
fn with_death_signal(command: &mut Command, signal: i32) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    let parent = std::process::id();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The run may have died before the prctl took effect.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        })
    }
}

#[cfg(not(target_os = "linux"))]
fn with_death_signal(command: &mut Command, _signal: i32) -> &mut Command {
    command
}

/// The `__supervise PARENT -- PROGRAM ARGS…` mode: run the program as
/// described in the module docs and return its exit code.
#[cfg(target_os = "linux")]
pub fn supervise(args: &[OsString]) -> i32 {
    supervisor_linux::run(args)
}

#[cfg(not(target_os = "linux"))]
pub fn supervise(_args: &[OsString]) -> i32 {
    eprintln!("git agent-apply: the check supervisor runs on Linux only");
    2
}

#[cfg(target_os = "linux")]
mod supervisor_linux {
    use std::ffi::OsString;
    use std::os::unix::process::CommandExt as _;
    use std::process::Command;

    /// Signals that end the supervisor: the run died, or a person stopped it.
    const ENDING: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

    pub fn run(args: &[OsString]) -> i32 {
        let Some((parent, argv)) = parse(args) else {
            eprintln!("usage: git-agent-apply __supervise PARENT_PID -- PROGRAM [ARGS...]");
            return 2;
        };
        // SAFETY: plain libc calls on this process's own signal state.
        let mask = unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            for signal in ENDING.iter().chain(&[libc::SIGCHLD]) {
                libc::sigaddset(&mut mask, *signal);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
            mask
        };
        // The run may have died before the death signal was armed and the
        // signals blocked: then there is nothing to run for.
        // SAFETY: getppid cannot fail.
        if unsafe { libc::getppid() } as u32 != parent {
            return 1;
        }
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).process_group(0);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                Ok(())
            });
        }
        let child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                eprintln!("cannot run {}: {error}", argv[0].to_string_lossy());
                return 127;
            }
        };
        let pid = child.id() as libc::pid_t;
        let status = wait_for(pid, &mask);
        kill_everything(pid);
        status
    }

    fn parse(args: &[OsString]) -> Option<(u32, &[OsString])> {
        let parent = args.first()?.to_str()?.parse().ok()?;
        let argv = args.get(1).filter(|dash| *dash == "--").and(args.get(2..))?;
        (!argv.is_empty()).then_some((parent, argv))
    }

    /// Wait until `pid` exits (its status, as a shell reports it) or an
    /// ending signal arrives (128 + the signal).
    fn wait_for(pid: libc::pid_t, mask: &libc::sigset_t) -> i32 {
        loop {
            let mut signal = 0;
            // SAFETY: `mask` is a valid set of blocked signals.
            if unsafe { libc::sigwait(mask, &mut signal) } != 0 {
                continue;
            }
            if ENDING.contains(&signal) {
                return 128 + signal;
            }
            // SIGCHLD: reap whatever exited, and see whether it was the check.
            loop {
                let mut status = 0;
                // SAFETY: reaping our own children.
                let reaped = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
                if reaped <= 0 {
                    break;
                }
                if reaped == pid {
                    return if libc::WIFEXITED(status) {
                        libc::WEXITSTATUS(status)
                    } else {
                        128 + libc::WTERMSIG(status)
                    };
                }
            }
        }
    }

    /// Kill the check's process group, then every process re-parented to
    /// the supervisor, until none is left.
    fn kill_everything(group: libc::pid_t) {
        // SAFETY: signalling and reaping processes this supervisor started.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
            loop {
                let children = children_of(libc::getpid());
                for child in &children {
                    libc::kill(-*child, libc::SIGKILL);
                    libc::kill(*child, libc::SIGKILL);
                }
                let mut status = 0;
                let reaped = libc::waitpid(-1, &mut status, if children.is_empty() { libc::WNOHANG } else { 0 });
                if reaped <= 0 && children.is_empty() {
                    break;
                }
            }
        }
    }

    /// The pids whose parent is `parent`, from `/proc/*/stat`.
    fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                // `pid (comm) state ppid …`: comm may hold spaces and parens.
                let after_comm = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
                after_comm.split_whitespace().nth(1).and_then(|p| p.parse().ok()) == Some(parent)
            })
            .collect()
    }
}
