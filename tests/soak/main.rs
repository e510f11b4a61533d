//! Kill-and-verify soak: the real binary, killed at random moments in random
//! repositories, must always leave the repository as before or as after.
//!
//! Each iteration builds a repository (some files modified, some untracked,
//! an `out` symlink to a directory outside, a nested repository; sometimes
//! files of 0.7 MB, whose write runs on several threads), a reply in
//! a random format (valid or broken, sometimes also naming a hostile path:
//! a protected file, an escape, `.git` in another spelling), some of the
//! states people leave repositories in (staged and partially staged files,
//! modes, an uncommitted chmod, autocrlf, a sparse checkout, a conflicted
//! merge) and a random mode (commit,
//! --no-commit, --partial, a --check), and sometimes a second applier racing
//! the first. A reference copy of the repository runs the same command to
//! completion: that is "after". The real run is killed (SIGKILL after a
//! random delay, or an injected fault at a stage), `git agent-apply recover`
//! runs, and then:
//! - the branch's tree and commit count are the before or the after ones;
//! - the index and every working-tree file match that same state (so
//!   untouched dirty and untracked files are byte-identical);
//! - `git fsck` is clean;
//! - nothing was written outside, and no hostile path exists in either copy.
//!
//! `AGENT_APPLY_SOAK_ITERATIONS` (default 40, the CI run),
//! `AGENT_APPLY_SOAK_SEED` (default: from the clock, printed),
//! `AGENT_APPLY_SOAK_BIN` (a copy of the binary, so a long run is not
//! disturbed by rebuilds) and `AGENT_APPLY_SOAK_KEEP` (keep the directories
//! of a violation) control a run:
//!
//! ```text
//! AGENT_APPLY_SOAK_ITERATIONS=2000 cargo test --release -p agent-apply --test soak -- --nocapture
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_apply::transaction::fault::STAGES;

/// splitmix64: small, seedable, and good enough to pick scenarios.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// How the run under test ends.
#[derive(Debug, Clone)]
enum Kill {
    /// SIGKILL this long after the start (it may finish first).
    After(Duration),
    /// An injected abort at this stage (`AGENT_APPLY_FAULT`).
    Fault(&'static str),
}

#[derive(Debug)]
struct Scenario {
    files: Vec<(String, String)>,
    /// Uncommitted changes to tracked files, and untracked files.
    dirty: Vec<(String, String)>,
    format: &'static str,
    reply: String,
    mode: Vec<String>,
    kill: Kill,
    /// A second applier, racing: it creates `racer.txt`.
    racer: bool,
    /// A path the reply also tries to create, which the policy must refuse.
    hostile: Option<&'static str>,
    /// Repository states the user left it in before the run.
    states: Vec<UserState>,
    /// Files padded to megabytes, so the write's per-file work runs on
    /// several threads.
    large: bool,
}

/// Repository states people have (see tests/e2e/states.rs for each one's
/// own test): the soak mixes them into its random repositories.
#[derive(Debug, Clone, Copy, PartialEq)]
enum UserState {
    /// A dirty file staged with `git add`.
    Staged,
    /// A file staged, then changed again (`MM`).
    PartiallyStaged,
    /// A private (0600) file and an executable one, committed.
    Modes,
    /// An uncommitted `chmod +x`.
    UserChmod,
    /// `core.autocrlf=input` (the identity on these LF files).
    AutocrlfInput,
    /// A sparse checkout leaving `src/` out.
    Sparse,
    /// A conflicted merge in progress.
    Merging,
}

const USER_STATES: &[UserState] = &[
    UserState::Staged,
    UserState::PartiallyStaged,
    UserState::Modes,
    UserState::UserChmod,
    UserState::AutocrlfInput,
    UserState::Sparse,
    UserState::Merging,
];

/// Paths a reply tries to write that the policy refuses: protected files,
/// escapes (`out` is a tracked symlink to a directory outside), `.git` in
/// another spelling, a nested repository's git dir, names no file system
/// or reviewer should get.
const HOSTILE_TARGETS: &[&str] = &[
    ".agent-apply.toml",
    ".envrc",
    "src/.gitattributes",
    ".githooks/pre-commit",
    ".gitmodules",
    "out/escaped.txt",
    "../escaped.txt",
    ".GIT/config",
    "nested/.git/hooks/post-checkout",
    "src/",
    "odd//name.txt",
    "bidi\u{202e}txt.sh",
];

const WORDS: &[&str] = &["alpha", "beta", "gamma", "delta", "let x = 1;", "return y", "}", "    fn f() {", "# note"];

fn lines(rng: &mut Rng, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{} {i}", rng.pick(WORDS))).collect()
}

/// Lines that make a file of about 0.7 MB: two such files changed are more
/// than the MiB above which the write's per-file work runs on the pool.
fn padding(path: &str) -> String {
    (0..40_000).map(|i| format!("pad {i} of {path}\n")).collect()
}

fn scenario(rng: &mut Rng) -> Scenario {
    let large = rng.chance(15);
    let files: Vec<(String, String)> = (0..2 + rng.below(4))
        .map(|i| {
            let dir = if rng.chance(40) { "src/" } else { "" };
            let count = 1 + rng.below(12);
            let path = format!("{dir}f{i}.txt");
            let pad = if large { padding(&path) } else { String::new() };
            let content = lines(rng, count).join("\n") + "\n" + &pad;
            (path, content)
        })
        .collect();
    let mut dirty = Vec::new();
    for (path, content) in &files {
        if rng.chance(25) {
            dirty.push((path.clone(), format!("{content}user line\n")));
        }
    }
    if rng.chance(50) {
        dirty.push(("untracked.txt".into(), "the user's notes\n".into()));
    }
    let format = rng.pick(&["whole", "editblock", "udiff"]);
    let current =
        |path: &str| dirty.iter().chain(&files).find(|(p, _)| p == path).map(|(_, c)| c.clone()).expect("a known file");
    let mut reply = String::new();
    for _ in 0..1 + rng.below(3) {
        let path = files[rng.below(files.len())].0.clone();
        let content = current(&path);
        let old_lines: Vec<&str> = content.lines().collect();
        let old = rng.pick(&old_lines);
        // A broken edit names text that is not there.
        let old = if rng.chance(20) { "this line is not in the file" } else { old };
        let new = format!("{} (edited {})", old, rng.below(1000));
        reply += &match format {
            "whole" => {
                if rng.chance(10) {
                    format!("{path}\n```\n{new}\n# ... rest of the file unchanged ...\n```\n\n")
                } else {
                    format!("{path}\n```\n{}```\n\n", content.replacen(old, &new, 1))
                }
            }
            "editblock" => format!("{path}\n```\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n\n"),
            _ => format!("```diff\n--- a/{path}\n+++ b/{path}\n@@ @@\n-{old}\n+{new}\n```\n\n"),
        };
    }
    if rng.chance(20) {
        let new_file = format!("new/n{}.txt", rng.below(100));
        reply += &match format {
            "whole" => format!("{new_file}\n```\ncreated\n```\n\n"),
            "editblock" => format!("{new_file}\n```\n<<<<<<< SEARCH\n=======\ncreated\n>>>>>>> REPLACE\n```\n\n"),
            _ => format!("```diff\n--- /dev/null\n+++ b/{new_file}\n@@ -0,0 +1 @@\n+created\n```\n\n"),
        };
    }
    let hostile = rng.chance(20).then(|| rng.pick(HOSTILE_TARGETS));
    if let Some(path) = hostile {
        reply += &match format {
            "whole" => format!("{path}\n```\ncreated\n```\n\n"),
            "editblock" => format!("{path}\n```\n<<<<<<< SEARCH\n=======\ncreated\n>>>>>>> REPLACE\n```\n\n"),
            _ => format!("```diff\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+created\n```\n\n"),
        };
    }
    if rng.chance(5) {
        reply = "no edits here, just prose\n".into();
    }
    let mode: Vec<String> = match rng.below(6) {
        0 => vec!["--no-commit".into()],
        1 => vec!["--partial".into()],
        2 => vec!["--check".into(), rng.pick(&["true", "false", "sleep 0.05"]).to_string()],
        3 => vec!["--dirty".into(), rng.pick(&["include", "refuse"]).to_string()],
        _ => Vec::new(),
    };
    let kill = if rng.chance(30) {
        Kill::Fault(rng.pick(&STAGES))
    } else {
        // Most runs take 30-100 ms, runs on large files up to ten times
        // that: kill within that window.
        Kill::After(Duration::from_millis(rng.below(if large { 1000 } else { 100 }) as u64))
    };
    let states = USER_STATES.iter().copied().filter(|_| rng.chance(8)).collect();
    Scenario { files, dirty, format, reply, mode, kill, racer: rng.chance(20), hostile, states, large }
}

/// `git args` in `dir`, with the soak's identity and no user config.
fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args(["-c", "user.name=Soak", "-c", "user.email=soak@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir);
    command
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir, args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(dir: &Path, path: &str, content: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

fn build_repo(dir: &Path, outside: &Path, scenario: &Scenario) {
    git(dir, &["init", "-q", "-b", "main"]);
    for (path, content) in &scenario.files {
        write(dir, path, content);
    }
    std::os::unix::fs::symlink(outside, dir.join("out")).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "initial"]);
    std::fs::create_dir(dir.join("nested")).unwrap();
    git(&dir.join("nested"), &["init", "-q"]);
    for state in &scenario.states {
        enter_state(dir, scenario, *state);
    }
    for (path, content) in &scenario.dirty {
        write(dir, path, content);
    }
    // Staging comes after the user's edits it stages.
    let first_dirty = scenario.dirty.iter().find(|(p, _)| p != "untracked.txt").map(|(p, _)| p.as_str());
    if let Some(path) = first_dirty {
        if scenario.states.contains(&UserState::Staged) || scenario.states.contains(&UserState::PartiallyStaged) {
            git(dir, &["add", "--sparse", path]);
        }
        if scenario.states.contains(&UserState::PartiallyStaged) {
            let full = dir.join(path);
            let mut content = std::fs::read_to_string(&full).unwrap();
            content += "changed again after staging\n";
            std::fs::write(full, content).unwrap();
        }
    }
}

/// Put the repository at `dir` in `state` (before the user's own edits).
fn enter_state(dir: &Path, scenario: &Scenario, state: UserState) {
    use std::os::unix::fs::PermissionsExt as _;
    let first = &scenario.files[0].0;
    let chmod = |path: &str, mode: u32| {
        std::fs::set_permissions(dir.join(path), std::fs::Permissions::from_mode(mode)).unwrap();
    };
    match state {
        UserState::Modes => {
            chmod(first, 0o600);
            chmod(&scenario.files[1].0, 0o755);
            git(dir, &["commit", "-qam", "modes"]);
        }
        UserState::UserChmod => chmod(first, 0o755),
        UserState::AutocrlfInput => {
            git(dir, &["config", "core.autocrlf", "input"]);
        }
        UserState::Sparse => {
            git(dir, &["sparse-checkout", "set", "--no-cone", "/*", "!/src/"]);
        }
        UserState::Merging => {
            // A file of its own at the root: in every sparse checkout.
            write(dir, "conflict.txt", "base\n");
            git(dir, &["add", "conflict.txt"]);
            git(dir, &["commit", "-qm", "base"]);
            git(dir, &["checkout", "-qb", "side"]);
            write(dir, "conflict.txt", "side\n");
            git(dir, &["commit", "-qam", "side"]);
            git(dir, &["checkout", "-q", "main"]);
            write(dir, "conflict.txt", "main\n");
            git(dir, &["commit", "-qam", "main"]);
            let merged = git_status(dir, &["merge", "-q", "side"]);
            assert!(!merged, "the merge was meant to conflict");
        }
        UserState::Staged | UserState::PartiallyStaged => {}
    }
}

/// Run git; whether it succeeded.
fn git_status(dir: &Path, args: &[&str]) -> bool {
    git_command(dir, args).output().expect("git runs").status.success()
}

/// The binary, set up to apply `scenario`'s reply in `dir`.
fn applier(dir: &Path, format: &str, mode: &[String]) -> Command {
    let binary =
        std::env::var_os("AGENT_APPLY_SOAK_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_git-agent-apply").into());
    let mut cmd = Command::new(binary);
    cmd.current_dir(dir)
        .args(["--format", format])
        .args(mode)
        .arg("-")
        .env("AGENT_APPLY_CONFIG", "/nonexistent/agent-apply-soak.toml")
        .env("AGENT_APPLY_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache"))
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Soak")
        .env("GIT_AUTHOR_EMAIL", "soak@example.com")
        .env("GIT_COMMITTER_NAME", "Soak")
        .env("GIT_COMMITTER_EMAIL", "soak@example.com")
        .env_remove("AGENT_APPLY_FAULT")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn spawn_with(mut cmd: Command, reply: &str) -> std::process::Child {
    let mut child = cmd.spawn().expect("the binary starts");
    let mut stdin = child.stdin.take().unwrap();
    // The reply is small: it fits the pipe, so this never blocks on a child
    // that was killed early.
    let _ = std::io::Write::write_all(&mut stdin, reply.as_bytes());
    drop(stdin);
    child
}

/// A repository state, as far as the invariants care: what the branch
/// holds, the index, and every file outside .git/.
#[derive(Debug, Clone, PartialEq)]
struct State {
    tree: String,
    commits: usize,
    index: String,
    files: BTreeMap<String, Vec<u8>>,
}

/// The state of `dir`, without the racer's file and commit (checked on
/// their own).
fn state(dir: &Path) -> State {
    let without_racer =
        |text: String| text.lines().filter(|l| !l.ends_with("racer.txt")).collect::<Vec<_>>().join("\n");
    let mut files = BTreeMap::new();
    collect(dir, dir, &mut files);
    files.remove("racer.txt");
    let tree = git(dir, &["ls-tree", "-r", "HEAD"]);
    let commits: usize = git(dir, &["rev-list", "--count", "HEAD"]).trim().parse().unwrap();
    let racer_commits = usize::from(tree.lines().any(|l| l.ends_with("\tracer.txt")));
    State {
        tree: without_racer(tree),
        commits: commits - racer_commits,
        index: without_racer(git(dir, &["--no-optional-locks", "ls-files", "-s"])),
        files,
    }
}

fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let meta = path.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            files.insert(relative, std::fs::read_link(&path).unwrap().as_os_str().as_encoded_bytes().to_vec());
        } else if meta.is_dir() {
            collect(root, &path, files);
        } else {
            use std::os::unix::fs::PermissionsExt as _;
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend_from_slice(format!("\n[mode {:o}]", meta.permissions().mode()).as_bytes());
            files.insert(relative, bytes);
        }
    }
}

#[derive(Debug, Default)]
struct Counts {
    iterations: usize,
    hostile: usize,
    states: usize,
    large: usize,
    kills: usize,
    finished: usize,
    recoveries: usize,
    races: usize,
    before: usize,
    after: usize,
    violations: Vec<String>,
}

/// Run one iteration; `Err` is an invariant violation.
fn iteration(rng: &mut Rng, work: &Path, counts: &mut Counts) -> Result<(), String> {
    let scenario = scenario(rng);
    let (real, reference, outside) = (work.join("real"), work.join("reference"), work.join("outside"));
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    build_repo(&real, &outside, &scenario);
    counts.hostile += usize::from(scenario.hostile.is_some());
    counts.states += usize::from(!scenario.states.is_empty());
    counts.large += usize::from(scenario.large);
    let copied = Command::new("cp").args(["-a"]).arg(&real).arg(&reference).status().unwrap();
    assert!(copied.success());
    let before = state(&real);

    // After: the same command, run to completion in the copy.
    let out =
        spawn_with(applier(&reference, scenario.format, &scenario.mode), &scenario.reply).wait_with_output().unwrap();
    let reference_code = out.status.code();
    let after = state(&reference);

    // The run under test, and maybe a racer.
    let mut cmd = applier(&real, scenario.format, &scenario.mode);
    if let Kill::Fault(stage) = scenario.kill {
        cmd.env("AGENT_APPLY_FAULT", stage);
    }
    let started = Instant::now();
    let mut child = spawn_with(cmd, &scenario.reply);
    let racer = scenario.racer.then(|| {
        counts.races += 1;
        spawn_with(applier(&real, "whole", &[]), "racer.txt\n```\nthe racer was here\n```\n")
    });
    if let Kill::After(delay) = scenario.kill {
        while started.elapsed() < delay && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    if status.code().is_none() {
        counts.kills += 1;
    } else {
        counts.finished += 1;
    }
    if let Some(racer) = racer {
        let out = racer.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !matches!(out.status.code(), Some(0 | 4)) {
            return Err(format!("the racer failed with {:?}: {stderr}", out.status.code()));
        }
    }

    if real.join(".git/agent-apply/journal.json").exists() {
        counts.recoveries += 1;
    }
    let out = applier(&real, "whole", &[]).args(["recover"]).stdin(Stdio::null()).output().unwrap();
    if !out.status.success() {
        return Err(format!("recover failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let now = state(&real);
    if now == before {
        counts.before += 1;
    } else if now == after {
        counts.after += 1;
    } else {
        return Err(format!(
            "neither before nor after (reference exit {reference_code:?}, run {status:?}):\n{}",
            describe(&before, &after, &now)
        ));
    }
    if let Some(escaped) = std::fs::read_dir(&outside).unwrap().next() {
        return Err(format!("wrote outside the repository: {:?}", escaped.unwrap().path()));
    }
    if let Some(path) = scenario.hostile {
        for dir in [&real, &reference] {
            let written = dir.join(path.trim_end_matches('/'));
            if path != "src/" && written.symlink_metadata().is_ok() {
                return Err(format!("the refused path {path:?} was written in {}", dir.display()));
            }
        }
    }
    if std::fs::read(real.join("racer.txt")).is_ok_and(|racer| racer != b"the racer was here\n") {
        return Err("the racer's file holds something else".into());
    }
    let fsck = Command::new("git").current_dir(&real).args(["fsck", "--no-progress", "--strict"]).output().unwrap();
    if !fsck.status.success() {
        return Err(format!("git fsck: {}", String::from_utf8_lossy(&fsck.stderr)));
    }
    Ok(())
}

/// What differs between the state found and the two allowed ones.
fn describe(before: &State, after: &State, now: &State) -> String {
    let mut text = String::new();
    for (name, expected) in [("before", before), ("after", after)] {
        text += &format!("vs {name}:");
        if expected.tree != now.tree || expected.commits != now.commits {
            text += &format!(" tree/commits differ ({} vs {} commits);", expected.commits, now.commits);
        }
        if expected.index != now.index {
            text += &format!(" index differs:\n{}\n---\n{}\n", expected.index, now.index);
        }
        for path in expected.files.keys().chain(now.files.keys()) {
            if expected.files.get(path) != now.files.get(path) {
                text += &format!(" {path} differs;");
            }
        }
        text += "\n";
    }
    text
}

#[test]
fn killed_at_random_moments_the_repository_is_always_before_or_after() {
    let iterations: usize =
        std::env::var("AGENT_APPLY_SOAK_ITERATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(40);
    let seed: u64 = std::env::var("AGENT_APPLY_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs());
    eprintln!("soak: {iterations} iterations, AGENT_APPLY_SOAK_SEED={seed}");
    let mut counts = Counts::default();
    for i in 0..iterations {
        let iteration_seed = seed.wrapping_add(i as u64);
        let mut rng = Rng(iteration_seed);
        let work = tempfile::tempdir().unwrap();
        counts.iterations += 1;
        if let Err(violation) = iteration(&mut rng, work.path(), &mut counts) {
            eprintln!("VIOLATION at iteration {i} (AGENT_APPLY_SOAK_SEED={iteration_seed}, 1 iteration): {violation}");
            counts.violations.push(format!("seed {iteration_seed}: {violation}"));
            if std::env::var_os("AGENT_APPLY_SOAK_KEEP").is_some() {
                let kept: PathBuf = work.keep();
                eprintln!("kept {}", kept.display());
            }
        }
        if (i + 1) % 100 == 0 {
            eprintln!("soak: {} iterations, {} violations so far", i + 1, counts.violations.len());
        }
    }
    eprintln!(
        "soak: iterations {} (with a hostile path {}, in a user state {}, on large files {}), kills {} (finished before the kill {}), recoveries {}, races {}, ended before {} / after {}, invariant violations {}",
        counts.iterations,
        counts.hostile,
        counts.states,
        counts.large,
        counts.kills,
        counts.finished,
        counts.recoveries,
        counts.races,
        counts.before,
        counts.after,
        counts.violations.len()
    );
    assert!(counts.violations.is_empty(), "{} violations:\n{}", counts.violations.len(), counts.violations.join("\n"));
}
