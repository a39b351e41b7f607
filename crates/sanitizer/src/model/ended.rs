//! The values a program let go most recently (freed handles, released
//! addresses), for double frees, double releases and uses after free.
//!
//! A ring of the last [`REMEMBERED`] ends: written once per end, at the
//! next slot, and read only when a value a call names is not held, which in
//! a correct program is never. A value the library hands out again is held
//! again, and the model asks what it holds before it asks this ring, so the
//! ring never needs to forget it: its steady cost is one store per end, on
//! a cache line the previous end used.

/// How many ends are remembered (the most recent ones).
pub(super) const REMEMBERED: usize = 4096;

/// The most recent ends (see the module's documentation).
#[derive(Default)]
pub(super) struct Ended {
    ring: Vec<usize>,
    /// The slot the next end is written to, once the ring is full.
    next: usize,
}

impl Ended {
    /// `v` ended now.
    pub(super) fn push(&mut self, v: usize) {
        if self.ring.len() < REMEMBERED {
            self.ring.push(v);
        } else {
            self.ring[self.next] = v;
            self.next = (self.next + 1) % REMEMBERED;
        }
    }

    /// Whether `v` is among the most recent ends.
    pub(super) fn contains(&self, v: usize) -> bool {
        self.ring.contains(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_most_recent_ends_are_remembered() {
        let mut e = Ended::default();
        assert!(!e.contains(7));
        for v in 0..REMEMBERED + 10 {
            e.push(v);
        }
        assert!(!e.contains(9));
        for v in [10, 11, REMEMBERED, REMEMBERED + 9] {
            assert!(e.contains(v), "{v}");
        }
        assert_eq!(e.ring.len(), REMEMBERED);
        // A value ended again is remembered from its last end.
        e.push(3);
        for v in 0..REMEMBERED - 1 {
            e.push(100_000 + v);
        }
        assert!(e.contains(3));
        e.push(200_000);
        assert!(!e.contains(3));
    }
}
