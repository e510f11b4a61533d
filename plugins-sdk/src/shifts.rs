//! How far earlier edits moved a place, for formats that apply many edits
//! of one file in one pass but report each edit's lines as that edit saw
//! the file: the edits placed before it in the file, and earlier in the
//! reply, shift it by their growth.

/// Growth by rank (an edit's order in the file), summed in a Fenwick tree
/// so that thousands of edits stay n log n.
pub struct Shifts {
    tree: Vec<isize>,
}

impl Shifts {
    /// Room for `ranks` edits, none of them grown yet.
    pub fn new(ranks: usize) -> Self {
        Shifts { tree: vec![0; ranks + 1] }
    }

    /// The edit of `rank` grew the file by `delta` (negative: shrank it).
    pub fn grow(&mut self, rank: usize, delta: isize) {
        let mut i = rank + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// The growth of the edits of lower rank recorded so far.
    pub fn before(&self, rank: usize) -> isize {
        let (mut sum, mut i) = (0, rank);
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn before_sums_the_lower_ranks(growth in proptest::collection::vec((0usize..20, -5isize..5), 0..30)) {
            let mut shifts = Shifts::new(20);
            let mut plain = [0isize; 20];
            for (rank, delta) in growth {
                shifts.grow(rank, delta);
                plain[rank] += delta;
                for r in 0..=20 {
                    proptest::prop_assert_eq!(shifts.before(r), plain[..r].iter().sum::<isize>());
                }
            }
        }
    }
}
