fn a() {}
fn b() -> u8 { 1 }
