//! How many threads a run goes on: the call's count, the scenario's, the `REPSIM_THREADS`
//! environment variable's, or the machine's cores; and what a default count does with a run
//! that cannot be split (one thread, with a note).
use anyhow::Result;

/// The environment variable that sets the threads a run uses when neither the call nor the
/// scenario says (`repsim run`, `repsim.run`, `repsim.Simulation`).
pub const THREADS_VARIABLE: &str = "REPSIM_THREADS";

/// Where a run's thread count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadSource {
    /// The call (`--threads`, `threads=`) or the scenario's `threads`: a run that cannot be
    /// split is refused.
    Asked,
    /// [`THREADS_VARIABLE`].
    Variable,
    /// The machine's cores, by default.
    Cores,
}

/// The threads a run goes on, and where the count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads {
    /// How many.
    pub count: u32,
    /// Where from.
    pub source: ThreadSource,
}

impl Threads {
    /// `asked` (the call's), else `scenario`'s, else [`THREADS_VARIABLE`], else the machine's
    /// cores, or one when `jobs` (not 1) runs load balancers side by side, which then share
    /// the cores. An error when the variable is not a whole number, 1 or more.
    pub fn resolve(asked: Option<u32>, scenario: Option<u32>, jobs: usize) -> Result<Threads> {
        let variable = match asked.or(scenario) {
            Some(_) => None,
            None => threads_from_env_var()?,
        };
        Ok(Self::choose(
            asked.or(scenario),
            variable,
            jobs,
            every_core(),
        ))
    }

    /// [`Self::resolve`] with the variable's count and the cores given.
    fn choose(asked: Option<u32>, variable: Option<u32>, jobs: usize, cores: u32) -> Threads {
        let (count, source) = match (asked, variable) {
            (Some(n), _) => (n, ThreadSource::Asked),
            (None, Some(n)) => (n, ThreadSource::Variable),
            (None, None) if jobs == 1 => (cores, ThreadSource::Cores),
            (None, None) => (1, ThreadSource::Cores),
        };
        Threads {
            count: count.max(1),
            source,
        }
    }

    /// Exactly `count` threads, as asked.
    pub fn asked(count: u32) -> Threads {
        Threads {
            count: count.max(1),
            source: ThreadSource::Asked,
        }
    }

    /// The count for run `label`, which cannot be split yet for the reasons `why` (empty: it
    /// can): one thread, with the note to print, when the count was a default; the count
    /// asked for otherwise (the split then refuses the run, naming the reasons).
    pub fn for_run(self, label: &str, why: &[String]) -> (u32, Option<String>) {
        if self.count <= 1 || why.is_empty() {
            return (self.count, None);
        }
        let from = match self.source {
            // Refused where it is split, with the run named.
            ThreadSource::Asked => return (self.count, None),
            ThreadSource::Variable => format!("{THREADS_VARIABLE}={}", self.count),
            ThreadSource::Cores => format!("{} cores", self.count),
        };
        let note = format!(
            "{from}: {label} runs on one thread: it cannot be split over threads yet: {}",
            why.join(", ")
        );
        (1, Some(note))
    }
}

/// The machine's cores (one if unknown).
fn every_core() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The thread count [`THREADS_VARIABLE`] sets, if it is set; an error unless it is a whole
/// number, 1 or more.
pub fn threads_from_env_var() -> Result<Option<u32>> {
    let Some(value) = std::env::var_os(THREADS_VARIABLE) else {
        return Ok(None);
    };
    let text = value.to_string_lossy();
    match text.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => anyhow::bail!(
            "{THREADS_VARIABLE}={text:?}: expected a whole number of threads, 1 or more"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_then_the_variable_then_the_cores() {
        let t = Threads::choose(Some(3), Some(2), 1, 16);
        assert_eq!((t.count, t.source), (3, ThreadSource::Asked));
        let t = Threads::choose(None, Some(2), 1, 16);
        assert_eq!((t.count, t.source), (2, ThreadSource::Variable));
        let t = Threads::choose(None, None, 1, 16);
        assert_eq!((t.count, t.source), (16, ThreadSource::Cores));
        // Load balancers side by side share the cores.
        assert_eq!(Threads::choose(None, None, 4, 16).count, 1);
        assert_eq!(Threads::choose(None, None, 0, 16).count, 1);
    }

    #[test]
    fn a_default_count_runs_what_cannot_split_on_one_thread_with_a_note() {
        let why = vec!["triggers".to_string()];
        assert_eq!(Threads::asked(4).for_run("reps", &why), (4, None));
        let (n, note) = Threads::choose(None, Some(4), 1, 2).for_run("reps", &why);
        assert_eq!(n, 1);
        let note = note.expect("a note");
        assert!(
            note.starts_with("REPSIM_THREADS=4: reps runs on one thread"),
            "{note}"
        );
        let (n, note) = Threads::choose(None, None, 1, 8).for_run("conga", &why);
        assert_eq!(n, 1);
        assert!(note.expect("a note").starts_with("8 cores: conga"));
        assert_eq!(
            Threads::choose(None, None, 1, 8).for_run("reps", &[]),
            (8, None)
        );
    }
}
