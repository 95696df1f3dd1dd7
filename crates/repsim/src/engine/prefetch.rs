//! A cache prefetch hint: the event loop asks for the memory of an event a few places ahead
//! in the queue while it handles the current one, so that with a million packets in flight the
//! cache misses of consecutive events overlap instead of following one another.

/// Asks the CPU to bring `value`'s first cache line closer (a hint: no effect on results).
#[inline(always)]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache hierarchy: it reads nothing the program can
    // observe, cannot fault, and `value` is a valid reference in any case.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Asks the CPU to bring every cache line `value` spans (for values larger than one line).
#[inline(always)]
pub fn prefetch_all<T>(value: &T) {
    let start = value as *const T as usize;
    let first = start & !63;
    let end = start + std::mem::size_of::<T>();
    let mut line = first;
    while line < end {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `prefetch`: a hint that reads nothing observable and cannot fault, even
        // for the part of a line outside `value`.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(line as *const i8);
        }
        line += 64;
    }
}
