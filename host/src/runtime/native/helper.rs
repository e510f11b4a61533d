//! A native plugin in a helper process, for a binary that has the C library
//! linked in and so cannot load a shared library itself: `native_host.c`,
//! compiled and embedded by host/build.rs, is run from an in-memory file,
//! loads the library, and answers each call over its stdin and stdout (the
//! protocol is described at the top of that file).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{Call, OpenFailure, Opened, table_is_readable};

/// The helper, compiled for this machine when the binary was built.
static HELPER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/native-host"));

/// `MFD_EXEC` (Linux 6.3): an executable in-memory file where the system
/// makes them not executable by default. Older kernels refuse the flag and
/// need none.
const MFD_EXEC: libc::c_uint = 0x10;

/// The helper process serving one library; calls take turns.
#[derive(Clone)]
pub(super) struct Library {
    process: Arc<Mutex<Process>>,
}

struct Process {
    child: Child,
    requests: BufWriter<ChildStdin>,
    responses: BufReader<ChildStdout>,
}

impl Drop for Process {
    fn drop(&mut self) {
        // Nothing more will be asked, and the helper keeps no state worth a
        // goodbye: stop it, and reap it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Library {
    pub(super) fn open(path: &Path) -> Result<Opened<Library>, OpenFailure> {
        let helper =
            executable().map_err(|e| OpenFailure::Load(format!("cannot prepare the native plugin helper: {e}")))?;
        let mut child = Command::new(format!("/proc/self/fd/{}", helper.as_raw_fd()))
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| OpenFailure::Load(format!("cannot start the native plugin helper: {e}")))?;
        let (Some(requests), Some(responses)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both were asked for as pipes")
        };
        let mut process = Process { child, requests: BufWriter::new(requests), responses: BufReader::new(responses) };
        let hello = process.hello().map_err(|e| OpenFailure::Load(process.ended(e)))?;
        Ok(match hello {
            Hello::Ready { contract_version } => {
                Opened::Ready { library: Library { process: Arc::new(Mutex::new(process)) }, contract_version }
            }
            Hello::Mismatch { abi_version, table_size } => Opened::Mismatch { abi_version, table_size },
            Hello::Refused(failure) => return Err(failure),
        })
    }

    /// Makes `call` with the JSON `request`: the status and the bytes the
    /// plugin returned.
    pub(super) fn call(&self, call: Call, request: &[u8]) -> Result<(u32, Vec<u8>), String> {
        let mut process = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        process.exchange(call, request).map_err(|e| process.ended(e))
    }
}

enum Hello {
    Ready { contract_version: Vec<u8> },
    Mismatch { abi_version: u32, table_size: u32 },
    Refused(OpenFailure),
}

impl Process {
    fn hello(&mut self) -> io::Result<Hello> {
        let kind = self.read_u32()?;
        if kind != 0 {
            let reason = String::from_utf8_lossy(&self.read_bytes()?).into_owned();
            return Ok(Hello::Refused(match kind {
                1 => OpenFailure::Load(reason),
                2 => OpenFailure::NoEntry(reason),
                _ => OpenFailure::NullTable,
            }));
        }
        let (abi_version, table_size) = (self.read_u32()?, self.read_u32()?);
        if !table_is_readable(abi_version, table_size) {
            return Ok(Hello::Mismatch { abi_version, table_size });
        }
        Ok(Hello::Ready { contract_version: self.read_bytes()? })
    }

    fn exchange(&mut self, call: Call, request: &[u8]) -> io::Result<(u32, Vec<u8>)> {
        self.requests.write_all(&(call as u32).to_ne_bytes())?;
        self.requests.write_all(&(request.len() as u64).to_ne_bytes())?;
        self.requests.write_all(request)?;
        self.requests.flush()?;
        Ok((self.read_u32()?, self.read_bytes()?))
    }

    fn read_u32(&mut self) -> io::Result<u32> {
        let mut bytes = [0; 4];
        self.responses.read_exact(&mut bytes)?;
        Ok(u32::from_ne_bytes(bytes))
    }

    /// A length (u64) and that many bytes.
    fn read_bytes(&mut self) -> io::Result<Vec<u8>> {
        let mut length = [0; 8];
        self.responses.read_exact(&mut length)?;
        let length = u64::from_ne_bytes(length);
        let mut bytes = Vec::new();
        (&mut self.responses).take(length).read_to_end(&mut bytes)?;
        if (bytes.len() as u64) < length {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(bytes)
    }

    /// What to say when talking to the helper failed with `error`: how it
    /// ended, if it did (the plugin crashed it). A helper that closed its
    /// end is given a second to be reaped, not more.
    fn ended(&mut self, error: io::Error) -> String {
        let closed = error.kind() == io::ErrorKind::UnexpectedEof || error.kind() == io::ErrorKind::BrokenPipe;
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return format!("the native plugin's process ended ({status})"),
                Ok(None) if closed && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => return format!("the native plugin's process stopped answering: {error}"),
            }
        }
    }
}

/// The helper as a file this process can run: written once per process
/// into an in-memory file, so nothing is left on disk and no directory
/// needs to allow execution. Read-only: a file open for writing cannot be
/// run.
fn executable() -> Result<&'static File, String> {
    static HELPER_FILE: OnceLock<Result<File, String>> = OnceLock::new();
    HELPER_FILE
        .get_or_init(|| {
            let name = c"agent-apply-native-host";
            // SAFETY: a NUL-terminated name and valid flags.
            let mut fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | MFD_EXEC) };
            if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                // SAFETY: as above.
                fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
            }
            if fd < 0 {
                return Err(io::Error::last_os_error().to_string());
            }
            // SAFETY: a descriptor just made, owned by nothing else.
            let mut writable = unsafe { File::from_raw_fd(fd) };
            writable.write_all(HELPER).map_err(|e| e.to_string())?;
            File::open(format!("/proc/self/fd/{fd}")).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}
