//! Long work off the interpreter: it runs on its own thread with the GIL released, while the
//! calling thread waits for it and checks for Ctrl-C (Python's signal handler only sets a flag
//! that `check_signals` reads). On Ctrl-C the work is asked to stop through its cancel flag,
//! the thread is joined, and `KeyboardInterrupt` is raised.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How often the waiting thread looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` (handed the cancel flag) on a thread without the GIL and returns its result;
/// on Ctrl-C sets the flag, waits for `work` to return and raises `KeyboardInterrupt`.
pub fn run_interruptible<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(Arc<AtomicBool>) -> T + Send,
{
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    // Set (and signalled) by the worker when `work` returns or panics.
    let finished = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            /// Marks the work finished however it ends, a panic included.
            struct Done<'a>(&'a (Mutex<bool>, Condvar));
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    *self.0 .0.lock().unwrap_or_else(|e| e.into_inner()) = true;
                    self.0 .1.notify_all();
                }
            }
            let _done = Done(&finished);
            work(flag)
        });
        let mut interrupted = None;
        loop {
            let finished = py.detach(|| {
                let (flag, changed) = &finished;
                let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
                let (guard, _) = changed
                    .wait_timeout_while(guard, SIGNAL_POLL, |done| !*done)
                    .unwrap_or_else(|e| e.into_inner());
                *guard
            });
            if finished {
                break;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    interrupted = Some(e);
                }
            }
        }
        let result = py.detach(|| worker.join());
        match (interrupted, result) {
            (Some(e), _) => Err(e),
            (None, Ok(value)) => Ok(value),
            (None, Err(payload)) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                Err(PyRuntimeError::new_err(format!(
                    "the simulator panicked: {msg}"
                )))
            }
        }
    })
}
