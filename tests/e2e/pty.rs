//! Running the binary on a pseudo-terminal, as a person at a terminal does:
//! what it writes is read back from the terminal's other end.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child whose stdin, stdout and stderr are one terminal.
pub struct OnTerminal {
    child: Child,
    input: File,
    output: mpsc::Receiver<u8>,
    pub seen: String,
}

impl OnTerminal {
    pub fn spawn(mut command: Command) -> OnTerminal {
        let (mut leader, mut follower) = (-1, -1);
        // SAFETY: openpty writes two new descriptors into the two ints.
        let status = unsafe {
            libc::openpty(&mut leader, &mut follower, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
        };
        assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (leader, follower) = unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) };
        command
            .stdin(Stdio::from(follower.try_clone().unwrap()))
            .stdout(Stdio::from(follower.try_clone().unwrap()))
            .stderr(Stdio::from(follower));
        let child = command.spawn().unwrap();
        let input = File::from(leader.try_clone().unwrap());
        let (send, output) = mpsc::channel();
        let mut reader = File::from(leader);
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            // Ends with EIO once the child's side is closed.
            while reader.read(&mut byte).is_ok_and(|n| n == 1) && send.send(byte[0]).is_ok() {}
        });
        OnTerminal { child, input, output, seen: String::new() }
    }

    /// Wait (up to 20 s) until the terminal shows `text`; false if it never does.
    pub fn wait_for(&mut self, text: &str) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !self.seen.contains(text) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.output.recv_timeout(left) {
                Ok(byte) => self.seen.push(byte as char),
                Err(_) => return false,
            }
        }
        true
    }

    /// Type `keys` at the terminal.
    pub fn type_keys(&mut self, keys: &[u8]) {
        self.input.write_all(keys).unwrap();
    }

    /// The exit code, and everything the terminal showed.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        while let Ok(byte) = self.output.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(byte as char);
        }
        (status.code(), self.seen)
    }
}
