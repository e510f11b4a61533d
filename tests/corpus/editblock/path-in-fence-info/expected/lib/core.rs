fn a() -> u8 { 0 }
