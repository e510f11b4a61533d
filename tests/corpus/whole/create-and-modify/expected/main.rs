mod util;
fn main() {}
