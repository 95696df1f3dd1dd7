//! An allocator that refuses to let the process hold more than a limit: a parser that tries to
//! allocate without bound (a count taken from the input) fails loudly, naming the input being
//! run, instead of exhausting the machine.
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The system allocator with a ceiling on live bytes.
pub struct LimitedAlloc;

/// Bytes live now.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The ceiling (default 2 GiB).
static LIMIT: AtomicUsize = AtomicUsize::new(2 << 30);
/// The fuzz input being run (for the message); `u64::MAX` when none.
static CURRENT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the ceiling on live heap bytes.
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// Records which input is running (shown if it breaks the ceiling).
pub fn set_current(index: u64) {
    CURRENT.store(index, Ordering::Relaxed);
}

/// Bytes live now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

fn over_limit(size: usize) -> bool {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    if live <= LIMIT.load(Ordering::Relaxed) {
        return false;
    }
    LIVE.fetch_sub(size, Ordering::Relaxed);
    // No allocation from here: a fixed buffer and raw writes.
    let mut buf = [0u8; 160];
    let mut w = &mut buf[..];
    let _ = writeln!(
        w,
        "repsim-fuzz: allocation of {size} bytes would exceed the {} byte ceiling (input #{})",
        LIMIT.load(Ordering::Relaxed),
        CURRENT.load(Ordering::Relaxed) as i64
    );
    let used = 160 - w.len();
    let _ = std::io::stderr().write_all(&buf[..used]);
    true
}

// SAFETY: forwards to the system allocator; only counts and may refuse (returns null, which
// the caller reports as an allocation failure).
unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if over_limit(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if over_limit(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grow = new_size.saturating_sub(layout.size());
        if grow > 0 && over_limit(grow) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            LIVE.fetch_sub(grow, Ordering::Relaxed);
        } else if new_size < layout.size() {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        p
    }
}
