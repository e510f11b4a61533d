//! The static-PIE binary's start (#27): its entry point, and the `main`
//! the C library calls (below).
//!
//! The entry point asks the kernel for the private copies of the relocated
//! read-only data in one `madvise`, then goes on to the C library's
//! `_start` as if the kernel had started there.
//!
//! Why: the start code writes a relocation into each of the 120-odd pages of
//! `.data.rel.ro` and `.got`, and each first write is a copy-on-write fault
//! (1.5-3 µs on a virtual machine, against 1.2 µs a page populated in one
//! call). `MADV_POPULATE_WRITE` (Linux 5.14) makes those copies without the
//! traps; an older kernel answers `EINVAL` and the faults happen as before.
//! The segment is still writable here: the C library makes it read-only only
//! after relocating it. Measured (1,500 alternated runs of `--version`):
//! 214 -> 88 page faults, 1.063 -> 1.018 ms.
//!
//! Only registers the kernel leaves meaningless are used, apart from `rdx`
//! (the exit handler a dynamic loader passes, zero from the kernel), which
//! is kept in `r12` across the system call and given back.

std::arch::global_asm!(
    ".globl agent_apply_start",
    ".type agent_apply_start,@function",
    "agent_apply_start:",
    "mov r12, rdx",
    // The ELF header, loaded at the binary's base, and its program headers.
    "lea rdi, [rip + __ehdr_start]",
    "mov rsi, [rdi + 32]", // e_phoff
    "add rsi, rdi",
    "movzx ecx, word ptr [rdi + 56]", // e_phnum
    "movzx r8d, word ptr [rdi + 54]", // e_phentsize
    "2:",
    "test ecx, ecx",
    "jz 4f",
    "cmp dword ptr [rsi], 0x6474e552", // PT_GNU_RELRO
    "je 3f",
    "add rsi, r8",
    "dec ecx",
    "jmp 2b",
    "3:",
    "mov rax, [rsi + 16]", // p_vaddr, from a base of 0 in a PIE
    "add rax, rdi",
    "mov r10, rax",
    "add r10, [rsi + 40]", // p_memsz
    "and rax, -4096",
    "add r10, 4095",
    "and r10, -4096",
    "mov rdi, rax",
    "mov rsi, r10",
    "sub rsi, rax",
    "mov edx, 23", // MADV_POPULATE_WRITE
    "mov eax, 28", // SYS_madvise
    "syscall",
    "4:",
    "mov rdx, r12",
    "jmp _start",
    ".size agent_apply_start, . - agent_apply_start",
);

/// The C library's `main`, in place of the one std generates, whose runtime
/// start cost each run a quarter of a millisecond on a virtual machine
/// (#27; `--version` 1.94 -> 1.68 ms, 600 alternating runs): to find the
/// main thread's stack for its overflow message it reads `/proc/self/maps`
/// (20 µs by itself for a small process) and asks the thread's affinity,
/// then maps and installs an alternate signal stack and two handlers, a
/// dozen system calls. A stack overflow still stops the process (the
/// kernel's guard gap under the stack), with a bare SIGSEGV instead of the
/// message; wasmtime installs its own handlers and stack for a plugin's
/// traps either way.
///
/// What that start does and this program relies on is done here: the
/// standard streams are open (a closed one is pointed at `/dev/null`, so
/// that no file opened later becomes stdout), SIGPIPE is ignored (a closed
/// pipe is an error to report, not a kill), a panic exits 101, and
/// `std::process::exit` flushes stdout. The arguments are read here from
/// `argv`: glibc also hands them to std's initializer, musl does not.
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    use std::os::unix::ffi::OsStrExt;
    open_standard_streams();
    // SAFETY: setting a signal's disposition to "ignore" has no handler to run.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let count = usize::try_from(argc).unwrap_or(0);
    let args = (0..count)
        // SAFETY: the C library passes `argc` NUL-terminated strings in `argv`.
        .map(|i| unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) })
        .map(|arg| std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string())
        .collect();
    let status = std::panic::catch_unwind(|| crate::run(args)).unwrap_or(101);
    std::process::exit(i32::from(status))
}

/// Points each of stdin, stdout and stderr that is closed at `/dev/null`;
/// aborts when that cannot be opened, as std's start does.
#[cfg(not(test))]
fn open_standard_streams() {
    let mut streams = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: `streams` is three valid `pollfd`s; a zero timeout never blocks.
    let polled = unsafe { libc::poll(streams.as_mut_ptr(), 3, 0) } >= 0;
    for stream in streams {
        let closed = if polled {
            stream.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD only reads the descriptor's flags.
            let flags = unsafe { libc::fcntl(stream.fd, libc::F_GETFD) };
            flags == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        // SAFETY: a NUL-terminated path; the descriptor is meant to stay open.
        if closed && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } == -1 {
            std::process::abort();
        }
    }
}
