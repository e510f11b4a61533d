//! The MCP server through a real MCP client: the Python `mcp` package's
//! stdio client (`tests/mcp/client.py`) starts `git-agent-apply mcp` in a
//! temporary repository, lists the tools, applies a reply and checks the
//! commit with git, reads, gets a failing reply's reflection as a tool
//! error, edits with `str_replace`, sends malformed arguments (a JSON-RPC
//! error, and the server lives on), and undoes. The client is installed
//! from PyPI into a venv under the target directory; the test is skipped,
//! saying why, only when that install fails (`.ci/run` installs it first,
//! so CI never skips).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::repo::TestRepo;

/// A Python with the `mcp` package, made once per target directory.
pub fn mcp_python() -> Result<PathBuf, String> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-venv");
    let python = venv.join("bin/python");
    let has_mcp =
        |python: &Path| Command::new(python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if has_mcp(&python) {
        return Ok(python);
    }
    let run = |command: &mut Command| match command.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        Err(error) => Err(error.to_string()),
    };
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv)).map_err(|e| format!("python3 -m venv failed: {e}"))?;
    run(Command::new(&python).args(["-m", "pip", "install", "--quiet", "mcp"]))
        .map_err(|e| format!("pip install mcp failed: {e}"))?;
    Ok(python)
}

#[test]
fn a_real_mcp_client_applies_reads_fails_and_undoes() {
    let python = match mcp_python() {
        Ok(python) => python,
        Err(why) => {
            println!("skipped: no MCP client: {why}");
            return;
        }
    };
    let repo = TestRepo::with(&[("app.py", "def greet():\n    return \"hello\"\n")]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client.py");
    let out = Command::new(python).arg(script).arg(crate::common::binary_path()).arg(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("every step passed"));
    repo.fsck();
}
