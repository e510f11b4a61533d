//! Tiny core wasm modules, assembled by hand, for the runtime's own tests
//! of what it builds around wasmtime (memories, deadlines).

/// A module of functions that each take an `i32` and return one, exported
/// under their names; `bodies` are their code after the locals, `end`
/// included. With `memory`, one 64 KiB page is exported as `memory`.
pub fn module(funcs: &[(&str, &[u8])], memory: bool) -> Vec<u8> {
    fn section(id: u8, payload: &[u8]) -> Vec<u8> {
        [&[id, payload.len() as u8][..], payload].concat()
    }
    let name = |n: &str| [&[n.len() as u8][..], n.as_bytes()].concat();
    let count = funcs.len() as u8;
    let mut exports = vec![count + u8::from(memory)];
    let mut code = vec![count];
    for (index, (export, body)) in funcs.iter().enumerate() {
        exports.extend([name(export), vec![0, index as u8]].concat());
        code.extend([&[body.len() as u8 + 1, 0][..], body].concat());
    }
    if memory {
        exports.extend([name("memory"), vec![2, 0]].concat());
    }
    [
        &b"\0asm\x01\0\0\0"[..],
        &section(1, &[1, 0x60, 1, 0x7f, 1, 0x7f]),
        &section(3, &[&[count][..], &vec![0; funcs.len()]].concat()),
        &if memory { section(5, &[1, 0, 1]) } else { Vec::new() },
        &section(7, &exports),
        &section(10, &code),
    ]
    .concat()
}
