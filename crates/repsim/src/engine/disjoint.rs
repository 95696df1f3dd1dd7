//! Disjoint sets over `0..n` (union-find): what has to stay together, found from pairs. The
//! lowest member of a set is its root, so the sets and their roots do not depend on the order
//! in which pairs are joined.

/// Disjoint sets of the integers `0..n`, each at first alone.
#[derive(Clone, Debug)]
pub struct DisjointSets {
    parent: Vec<u32>,
}

impl DisjointSets {
    /// `n` sets of one member each.
    pub fn new(n: usize) -> Self {
        DisjointSets {
            parent: (0..n as u32).collect(),
        }
    }

    /// The lowest member of `x`'s set.
    pub fn root(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            // Path halving: every other step points to its grandparent.
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x
    }

    /// Merges the sets of `a` and `b`.
    pub fn join(&mut self, a: u32, b: u32) {
        let (a, b) = (self.root(a), self.root(b));
        self.parent[a.max(b) as usize] = a.min(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_members_share_their_lowest_as_root_in_any_order() {
        let mut a = DisjointSets::new(6);
        a.join(4, 2);
        a.join(5, 4);
        a.join(1, 3);
        let mut b = DisjointSets::new(6);
        b.join(2, 5);
        b.join(3, 1);
        b.join(4, 5);
        for x in 0..6 {
            assert_eq!(a.root(x), b.root(x), "{x}");
        }
        assert_eq!((a.root(5), a.root(3), a.root(0)), (2, 1, 0));
    }
}
