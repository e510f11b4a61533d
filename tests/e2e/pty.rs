//! Running the binary on a pseudo-terminal, as a person at a terminal does:
//! what it writes is read back from the terminal's other end, and the
//! terminal is its controlling terminal (`/dev/tty`), as a login's is.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child whose stdin, stdout and stderr are one terminal.
pub struct OnTerminal {
    child: Child,
    input: File,
    output: mpsc::Receiver<u8>,
    pub seen: String,
    /// Where in `seen` the next wait looks from: after what the last found.
    looked: usize,
}

impl OnTerminal {
    /// `command` with stdin, stdout and stderr on the terminal.
    pub fn spawn(command: Command) -> OnTerminal {
        OnTerminal::start(command, None)
    }

    /// `command` with `input` piped to its stdin (as `model | git agent-apply`
    /// has it), stdout and stderr on the terminal.
    pub fn spawn_piping(command: Command, input: &[u8]) -> OnTerminal {
        OnTerminal::start(command, Some(input))
    }

    fn start(mut command: Command, piped: Option<&[u8]>) -> OnTerminal {
        let (mut leader, mut follower) = (-1, -1);
        // SAFETY: openpty writes two new descriptors into the two ints.
        let status = unsafe {
            libc::openpty(&mut leader, &mut follower, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
        };
        assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (leader, follower) = unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) };
        let stdin = match piped {
            Some(_) => Stdio::piped(),
            None => Stdio::from(follower.try_clone().unwrap()),
        };
        command.stdin(stdin).stdout(Stdio::from(follower.try_clone().unwrap())).stderr(Stdio::from(follower));
        // SAFETY: setsid and ioctl are async-signal-safe; the child gets a
        // session of its own whose controlling terminal is its stderr, the
        // terminal's follower side.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(2, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // A person's terminal delivers Ctrl-C: the test runner may
                // have been started with SIGINT ignored (a background job of
                // a script), and an ignored disposition would be inherited.
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        if let Some(input) = piped {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input).unwrap();
        }
        let input = File::from(leader.try_clone().unwrap());
        let (send, output) = mpsc::channel();
        let mut reader = File::from(leader);
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            // Ends with EIO once the child's side is closed.
            while reader.read(&mut byte).is_ok_and(|n| n == 1) && send.send(byte[0]).is_ok() {}
        });
        OnTerminal { child, input, output, seen: String::new(), looked: 0 }
    }

    /// Wait (up to 20 s) until the terminal shows `text` after what the
    /// last wait found; false if it never does.
    pub fn wait_for(&mut self, text: &str) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(at) = self.seen[self.looked..].find(text) {
                self.looked += at + text.len();
                return true;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.output.recv_timeout(left) {
                Ok(byte) => self.seen.push(byte as char),
                Err(_) => return false,
            }
        }
    }

    /// What the terminal shows from the last wait up to and including
    /// `text`, once it does (a panic if it never does).
    pub fn read_until(&mut self, text: &str) -> String {
        let from = self.looked;
        assert!(self.wait_for(text), "the terminal never showed {text:?}; it showed:\n{}", self.seen);
        self.seen[from..self.looked].to_string()
    }

    /// Type `keys` at the terminal.
    pub fn type_keys(&mut self, keys: &[u8]) {
        self.input.write_all(keys).unwrap();
    }

    /// The exit code, and everything the terminal showed.
    /// Wait for the program to end (killing it after a minute, so a hang
    /// fails the test instead of stalling the suite), and all it printed.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("the program did not end within 60 s; it printed:\n{}", self.seen);
            }
            while let Ok(byte) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.seen.push(byte as char);
            }
        };
        while let Ok(byte) = self.output.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(byte as char);
        }
        (status.code(), self.seen)
    }
}

/// `text` without the escape sequences that style it (`ESC [ ... m`).
pub fn unstyled(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('\u{1b}') {
        plain += &rest[..start];
        let sequence = &rest[start..];
        rest = sequence.find('m').map_or("", |end| &sequence[end + 1..]);
    }
    plain + rest
}
