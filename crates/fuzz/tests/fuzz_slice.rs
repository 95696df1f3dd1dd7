//! The fuzz targets as ordinary tests: every shipped seed file is accepted unchanged, and a
//! fixed slice of mutated inputs (seed 1) neither panics, nor allocates past the guard's
//! ceiling, nor is rejected without saying where and what. `repsim-fuzz --inputs N` runs more.
use std::path::Path;

use repsim_fuzz::guard::LimitedAlloc;
use repsim_fuzz::{corpus, run_input, Corpus, Mutator, Target, Verdict};

#[global_allocator]
static ALLOC: LimitedAlloc = LimitedAlloc;

/// Mutated inputs per target in this slice.
const SLICE: u64 = 1500;

fn corpus() -> Corpus {
    Corpus::load(&corpus::repo_root()).expect("the shipped seed files")
}

#[test]
fn every_seed_file_is_accepted() {
    let c = corpus();
    for target in Target::ALL {
        for seed in c.seeds(target) {
            let v = run_input(target, &seed.bytes, &seed.path);
            assert_eq!(
                v,
                Verdict::Accepted,
                "{} seed {}",
                target.name(),
                seed.path.display()
            );
        }
    }
}

#[test]
fn mutated_slice_has_no_finding() {
    repsim_fuzz::quiet_panics();
    let c = corpus();
    let m = Mutator::new(1);
    let mut findings = Vec::new();
    for (t, target) in Target::ALL.into_iter().enumerate() {
        let seeds = c.seeds(target);
        let (mut accepted, mut rejected) = (0, 0);
        for i in 0..SLICE {
            // Shown by the allocation guard should this input break its ceiling.
            repsim_fuzz::guard::set_current(t as u64 * 1_000_000 + i);
            let mut rng = m.rng(i);
            let base = &seeds[rng.below(seeds.len() as u32) as usize];
            let other = &seeds[rng.below(seeds.len() as u32) as usize];
            let bytes = m.mutate(&mut rng, &base.bytes, &other.bytes);
            match run_input(target, &bytes, &base.path) {
                Verdict::Accepted => accepted += 1,
                Verdict::Rejected => rejected += 1,
                Verdict::Panicked(msg) | Verdict::BadRejection(msg) => findings.push(format!(
                    "{} #{i} from {}: {msg}",
                    target.name(),
                    base.path.display()
                )),
            }
        }
        eprintln!(
            "{}: {accepted} accepted, {rejected} rejected",
            target.name()
        );
        assert!(
            rejected > 0,
            "{}: no mutation was rejected: the mutator does nothing",
            target.name()
        );
    }
    assert!(
        findings.is_empty(),
        "{} findings:\n{}",
        findings.len(),
        findings.join("\n")
    );
}

#[test]
fn a_rejection_without_location_is_a_finding() {
    let origin = Path::new("scenarios/x.toml");
    assert!(Target::Scenario
        .rejection_flaw("scenarios/x.toml: -: invalid type", origin)
        .is_some());
    assert!(Target::Scenario
        .rejection_flaw("invalid type: expected a string", origin)
        .is_some());
    assert!(Target::Scenario
        .rejection_flaw(
            "scenarios/x.toml: topology.hosts: must be a positive multiple of hosts_per_tor",
            origin
        )
        .is_none());
    assert!(Target::Cdf
        .rejection_flaw("invalid number", origin)
        .is_some());
    assert!(Target::Cdf
        .rejection_flaw("line 3: sizes must not decrease (100 after 200)", origin)
        .is_none());
}
