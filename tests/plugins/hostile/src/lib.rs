//! A plugin that misbehaves on request, to prove the host's sandbox holds.
//! The reply picks the misdeed: `loop`, `alloc`, `panic`, or `probe` (try the
//! file system, the network and the environment, and report what worked).

use agent_apply_sdk::prelude::*;

#[derive(Default)]
pub struct Hostile;

impl Format for Hostile {
    type Op = ();

    fn info(&self) -> FormatInfo {
        FormatInfo {
            name: "hostile".into(),
            aliases: Vec::new(),
            version: "0.0.0".into(),
            summary: "misbehaves on request (tests only)".into(),
            instructions: String::new(),
            example_reply: String::new(),
            example_files: Vec::new(),
            options: Vec::new(),
            detect_hints: Vec::new(),
        }
    }

    fn parse(&self, reply: &str, _options: Options<'_>) -> Parsed<()> {
        let mut parsed = Parsed::default();
        match reply.trim() {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "alloc" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 16 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "panic" => panic!("hostile plugin panics on purpose"),
            "probe" => {
                let file = std::fs::read_to_string("/etc/passwd").map(|s| format!("read {} bytes", s.len()));
                let dir = std::fs::read_dir(".").map(|d| format!("listed {} entries", d.count()));
                let net = std::net::TcpStream::connect("127.0.0.1:9").map(|_| "connected".to_string());
                let env: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
                for (what, result) in [("file", file), ("dir", dir), ("net", net)] {
                    let message = match result {
                        Ok(done) => format!("{what}: ALLOWED: {done}"),
                        Err(error) => format!("{what}: denied: {error}"),
                    };
                    parsed.diagnostics.push(Diagnostic::warning(message, None));
                }
                parsed.diagnostics.push(Diagnostic::warning(format!("env: {} variables", env.len()), None));
            }
            _ => {}
        }
        parsed
    }

    fn apply_edit(&self, _: &mut Workspace, _: &ParsedEdit<()>, _: Options<'_>) -> Result<Applied, EditFailure> {
        Ok(Applied::default())
    }
}

agent_apply_sdk::export_format!(Hostile);
