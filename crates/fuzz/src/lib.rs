//! Fuzzing on stable Rust for every input repsim reads: the scenario parser (through to the
//! built run, as `repsim check` goes) and the `.topo`, `.cm`, failure-file and CDF importers.
//!
//! The corpus is the repository's own shipped files (`scenarios/`, `data/`), mutated by a
//! seeded byte- and token-level [`mutate::Mutator`]: input `i` of seed `s` is always the same,
//! so any finding is reproduced with `repsim-fuzz --seed s --only i`. Each input must be
//! accepted or rejected: a panic is a finding, and so is a rejection that does not name the
//! file (scenarios), the field or line, or what went wrong. The allocation guard
//! ([`guard::LimitedAlloc`], installed by the command and the tests) turns unbounded
//! allocation into a reported finding, and the command's watchdog turns a hang into one.
pub mod corpus;
pub mod guard;
pub mod mutate;
pub mod targets;

pub use corpus::Corpus;
pub use mutate::Mutator;
pub use targets::{Outcome, Target};

use std::panic::{self, AssertUnwindSafe};

/// What happened to one fuzz input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Parsed (and built) without error.
    Accepted,
    /// Rejected with a well-formed message.
    Rejected,
    /// Rejected with a message that does not say where or what (the message and what it
    /// lacks).
    BadRejection(String),
    /// Panicked (the panic message).
    Panicked(String),
}

/// Runs `target` on `input`, catching panics.
pub fn run_input(target: Target, input: &[u8], origin: &std::path::Path) -> Verdict {
    let text = String::from_utf8_lossy(input);
    let result = panic::catch_unwind(AssertUnwindSafe(|| target.run(&text, origin)));
    match result {
        Ok(Outcome::Accepted) => Verdict::Accepted,
        Ok(Outcome::Rejected(msg)) => match target.rejection_flaw(&msg, origin) {
            None => Verdict::Rejected,
            Some(flaw) => Verdict::BadRejection(format!("{flaw}: {msg}")),
        },
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(non-string panic payload)".into());
            Verdict::Panicked(msg)
        }
    }
}

/// Silences the default panic message (panics are caught and reported as findings); the
/// previous hook is kept for panics outside [`run_input`] (none are expected).
pub fn quiet_panics() {
    panic::set_hook(Box::new(|_| {}));
}
