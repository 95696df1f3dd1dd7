//! Transparent huge pages for the large arrays the event loop reads at random (the packet
//! arena, the event queue's chunks, the ports). With a million packets in flight almost every
//! packet touched misses the caches, and with 4 KiB pages most of those misses also miss the
//! TLB and walk the page tables first; on 2 MiB pages the walks mostly disappear. Where the
//! kernel hands out huge pages only on request (`madvise` mode, a common default), the arrays
//! ask for them when they grow. Only a hint: contents, order and results do not change.
//!
//! What stays on ordinary pages is everything `malloc` hands out in small pieces: per flow the
//! sender and receiver, their PSN record rings and send lists, congestion-control and
//! load-balancer state, and the ports' lane rings (a few seconds into the 8,192-host run, 84 of
//! its 179 MB resident were on huge pages). glibc 2.35 and later can put its own heap on huge
//! pages when started with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`: on the 8,192-host 2 MB
//! permutation that took 8 to 18 % less CPU time (three interleaved pairs) with identical
//! results (see docs/performance.md). glibc reads it only at start-up, so the
//! `repsim` command restarts itself once with it set.
use std::mem::size_of;

/// Size of a huge page (x86-64 and most 64-bit Arm kernels).
const HUGE_PAGE: usize = 2 << 20;
/// Arrays smaller than this stay on ordinary pages (a huge page would mostly sit empty).
const MIN_BYTES: usize = 2 * HUGE_PAGE;

/// Makes room for at least one more element, with the same capacities `Vec::push` would
/// choose; a new buffer of at least `MIN_BYTES` is asked to live on huge pages before any of
/// it is touched.
#[cold]
#[inline(never)]
pub fn grow<T: Copy>(v: &mut Vec<T>) {
    let new_cap = v.capacity() * 2;
    if new_cap * size_of::<T>() < MIN_BYTES {
        v.reserve(1);
        return;
    }
    let mut bigger = Vec::with_capacity(new_cap);
    advise(&bigger);
    bigger.extend_from_slice(v);
    *v = bigger;
}

/// Asks for huge pages under the whole-huge-page part of `v`'s buffer (if it is large).
pub fn advise<T>(v: &Vec<T>) {
    let start = v.as_ptr() as usize;
    let bytes = v.capacity() * size_of::<T>();
    if bytes < MIN_BYTES {
        return;
    }
    let first = (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
    let last = (start + bytes) & !(HUGE_PAGE - 1);
    if last > first {
        advise_range(first, last - first);
    }
}

#[cfg(target_os = "linux")]
fn advise_range(start: usize, len: usize) {
    // SAFETY: the range lies inside a live allocation owned by the caller's vector, and
    // MADV_HUGEPAGE changes only how the kernel backs it, never its contents; a failure (a
    // kernel without huge pages) leaves ordinary pages, so the result is ignored.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_range(_start: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing keeps the contents and picks the capacities `Vec::push` picks, on both sides of
    /// the huge-page threshold.
    #[test]
    fn grows_like_push_and_keeps_contents() {
        let mut ours: Vec<u64> = Vec::new();
        let mut std_vec: Vec<u64> = Vec::new();
        for i in 0..(3 * MIN_BYTES / 8) as u64 {
            if ours.len() == ours.capacity() {
                grow(&mut ours);
            }
            ours.push(i);
            std_vec.push(i);
            assert_eq!(ours.capacity(), std_vec.capacity(), "after {i}");
        }
        assert_eq!(ours, std_vec);
    }
}
