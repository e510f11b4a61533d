pub fn two() -> u32 {
    2
}
