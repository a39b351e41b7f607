//! Work split across the cores, without a thread pool.
//!
//! The emulated library lives in programs that fork, and a pool's threads
//! do not survive a fork: a child would wait on workers it does not have.
//! So a large operation makes scoped threads of its own, one per band of
//! its work, and joins them before it returns; a thread costs some tens of
//! microseconds, against the milliseconds of work worth splitting. When a
//! thread cannot be made, the calling thread does that band too.

use std::ops::Range;
use std::sync::OnceLock;

/// The threads an operation may use: `ACLMEM_EMU_THREADS` when it is a
/// positive number, the cores this process may run on otherwise (read
/// once; a forked child inherits the answer with its parent's affinity).
pub fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var("ACLMEM_EMU_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
    })
}

/// How many bands `n` items of work make, at most one per thread and each
/// at least `least` items (at least one band).
pub fn parts(n: usize, least: usize) -> usize {
    threads().min(n / least.max(1)).max(1)
}

/// `f` of each of `parts` bands of `0..n` (nearly equal, in order), the
/// first band on the calling thread and each other on a scoped thread of
/// its own; the results in the bands' order. A panic in a band is the
/// caller's, as on one thread.
pub fn bands<R: Send>(n: usize, parts: usize, f: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let parts = parts.clamp(1, n.max(1));
    let band = |i: usize| n * i / parts..n * (i + 1) / parts;
    if parts == 1 {
        return vec![f(band(0))];
    }
    let f = &f;
    std::thread::scope(|scope| {
        let spawned: Vec<_> = (1..parts)
            .map(|i| {
                std::thread::Builder::new()
                    .name("aclmem-kernel".into())
                    .spawn_scoped(scope, move || f(band(i)))
                    .map_err(|_| i)
            })
            .collect();
        let mut results = Vec::with_capacity(parts);
        results.push(f(band(0)));
        for s in spawned {
            results.push(match s {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No thread to be had: this one does that band.
                Err(i) => f(band(i)),
            });
        }
        results
    })
}

/// `f` of each of `parts` bands of `data`, cut between its `piece`-element
/// pieces (a band holds whole pieces): the band's first piece and its
/// elements, on threads as in [`bands`]; the results in the bands' order.
pub fn bands_mut<T: Send, R: Send>(
    data: &mut [T],
    piece: usize,
    parts: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    let piece = piece.max(1);
    let n = data.len() / piece;
    let parts = parts.clamp(1, n.max(1));
    // The same cuts as `bands` makes, each band's slice behind a lock that
    // only its own band takes.
    let mut rest = &mut data[..n * piece];
    let mut slices = Vec::with_capacity(parts);
    for i in 0..parts {
        let len = (n * (i + 1) / parts - n * i / parts) * piece;
        let (band, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push(std::sync::Mutex::new(band));
        rest = tail;
    }
    bands(n, parts, |r| {
        let i = r.start * parts / n.max(1);
        // The band whose first piece is `r.start` (a band is at least one
        // piece, so `i` is at most one short of it).
        let i = (i..parts).find(|&i| n * i / parts == r.start).unwrap_or(i);
        let mut band = slices[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(r.start, &mut band)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_work_once_in_order() {
        for (n, parts) in [(10, 3), (7, 7), (5, 9), (0, 2), (1000, 1)] {
            let got = bands(n, parts, |r| r);
            assert!(got.len() <= parts.max(1));
            let flat: Vec<usize> = got.into_iter().flatten().collect();
            assert_eq!(flat, (0..n).collect::<Vec<_>>(), "{n} in {parts}");
        }
    }

    #[test]
    fn mutable_bands_hold_whole_pieces_once_in_order() {
        for (len, piece, parts) in [(12, 3, 2), (10, 2, 7), (7, 7, 3), (0, 4, 2), (9, 2, 2)] {
            let mut data: Vec<usize> = vec![usize::MAX; len];
            let got = bands_mut(&mut data, piece, parts, |first, band| {
                assert_eq!(band.len() % piece, 0);
                for (i, x) in band.iter_mut().enumerate() {
                    *x = first * piece + i;
                }
                (first, band.len() / piece)
            });
            let whole = len / piece * piece;
            assert!(
                data[..whole].iter().enumerate().all(|(i, &x)| x == i),
                "{data:?}"
            );
            assert!(data[whole..].iter().all(|&x| x == usize::MAX));
            let mut next = 0;
            for (first, pieces) in got {
                assert_eq!(first, next);
                next += pieces;
            }
            assert_eq!(next, len / piece);
        }
    }

    #[test]
    fn parts_are_at_least_one_and_at_most_the_threads() {
        assert_eq!(parts(0, 16), 1);
        assert_eq!(parts(15, 16), 1);
        assert!(parts(usize::MAX, 1) <= threads());
        assert!(threads() >= 1);
    }
}
