//! `repsim-fuzz`: runs N mutated inputs over the scenario parser and the importers and reports
//! panics, hangs, unbounded allocation and rejections that do not say where or what.
//!
//! ```sh
//! cargo run --release -p repsim-fuzz -- --inputs 1000000            # every target, round robin
//! cargo run --release -p repsim-fuzz -- --inputs 10000 --target cdf
//! cargo run --release -p repsim-fuzz -- --seed 1 --only 4711 --save /tmp/x  # reproduce one
//! ```
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use repsim_fuzz::guard::{self, LimitedAlloc};
use repsim_fuzz::{corpus, run_input, Corpus, Mutator, Target, Verdict};

#[global_allocator]
static ALLOC: LimitedAlloc = LimitedAlloc;

/// Command-line options (hand-parsed: this crate depends on nothing but repsim).
struct Options {
    inputs: u64,
    start: u64,
    seed: u64,
    targets: Vec<Target>,
    hang_s: u64,
    save: Option<PathBuf>,
}

const USAGE: &str = "usage: repsim-fuzz [--inputs N] [--seed S] [--start I] [--only I] \
[--target scenario|topo|cm|failures|cdf] [--hang-seconds T] [--memory-mib M] [--save DIR]";

fn options() -> Result<Options, String> {
    let mut o = Options {
        inputs: 10_000,
        start: 0,
        seed: 1,
        targets: Target::ALL.to_vec(),
        hang_s: 60,
        save: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        let value = args
            .get(i + 1)
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = || {
            value
                .replace('_', "")
                .parse::<u64>()
                .map_err(|_| format!("{flag}: '{value}' is not a whole number\n{USAGE}"))
        };
        match flag {
            "--inputs" => o.inputs = number()?,
            "--seed" => o.seed = number()?,
            "--start" => o.start = number()?,
            "--only" => {
                o.start = number()?;
                o.inputs = 1;
            }
            "--hang-seconds" => o.hang_s = number()?.max(1),
            "--memory-mib" => guard::set_limit((number()? as usize).saturating_mul(1 << 20)),
            "--target" => {
                o.targets = vec![Target::named(value).ok_or_else(|| {
                    format!("--target: unknown '{value}' (scenario, topo, cm, failures or cdf)")
                })?]
            }
            "--save" => o.save = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
        i += 2;
    }
    Ok(o)
}

/// The input number `index`: its target, seed file and bytes.
fn input<'c>(
    o: &Options,
    corpus: &'c Corpus,
    m: &Mutator,
    index: u64,
) -> (Target, &'c corpus::Seed, Vec<u8>) {
    let target = o.targets[(index % o.targets.len() as u64) as usize];
    let seeds = corpus.seeds(target);
    let mut rng = m.rng(index);
    let base = &seeds[rng.below(seeds.len() as u32) as usize];
    let other = &seeds[rng.below(seeds.len() as u32) as usize];
    // One input in 64 is a seed unchanged.
    let bytes = if rng.below(64) == 0 {
        base.bytes.clone()
    } else {
        m.mutate(&mut rng, &base.bytes, &other.bytes)
    };
    (target, base, bytes)
}

fn main() -> ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus = match Corpus::load(&corpus::repo_root()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: reading the corpus: {e}");
            return ExitCode::from(2);
        }
    };
    repsim_fuzz::quiet_panics();
    let m = Mutator::new(o.seed);
    // Watchdog: an input running longer than --hang-seconds is a hang; say which and stop.
    let running = Arc::new(AtomicU64::new(u64::MAX));
    let since = Arc::new(AtomicU64::new(0));
    let clock = Instant::now();
    {
        let (running, since, hang_s, seed) = (running.clone(), since.clone(), o.hang_s, o.seed);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let idx = running.load(Ordering::Relaxed);
            let started = since.load(Ordering::Relaxed);
            if idx != u64::MAX && clock.elapsed().as_millis() as u64 > started + hang_s * 1000 {
                eprintln!(
                    "HANG: input #{idx} ran over {hang_s} s; reproduce: repsim-fuzz --seed {seed} \
                     --only {idx} --save DIR"
                );
                std::process::exit(3);
            }
        });
    }
    let started = Instant::now();
    let (mut accepted, mut rejected, mut findings) = (0u64, 0u64, 0u64);
    let mut per_target = [0u64; Target::ALL.len()];
    for index in o.start..o.start + o.inputs {
        let (target, seed, bytes) = input(&o, &corpus, &m, index);
        if let Some(dir) = &o.save {
            let _ = std::fs::create_dir_all(dir);
            let name = format!("{}-{index}.input", target.name());
            let _ = std::fs::write(dir.join(&name), &bytes);
            eprintln!(
                "saved {} (from {})",
                dir.join(name).display(),
                seed.path.display()
            );
        }
        guard::set_current(index);
        since.store(clock.elapsed().as_millis() as u64, Ordering::Relaxed);
        running.store(index, Ordering::Relaxed);
        let verdict = run_input(target, &bytes, &seed.path);
        running.store(u64::MAX, Ordering::Relaxed);
        per_target[Target::ALL.iter().position(|t| *t == target).unwrap_or(0)] += 1;
        match verdict {
            Verdict::Accepted => accepted += 1,
            Verdict::Rejected => rejected += 1,
            Verdict::Panicked(msg) | Verdict::BadRejection(msg) => {
                findings += 1;
                if findings <= 20 {
                    eprintln!(
                        "FINDING input #{index} ({}, from {}): {msg}\n  reproduce: repsim-fuzz \
                         --seed {} --only {index} --save DIR",
                        target.name(),
                        seed.path.display(),
                        o.seed
                    );
                }
            }
        }
        let done = index - o.start + 1;
        if done % 100_000 == 0 {
            eprintln!(
                "{done} inputs, {:.0} s, {findings} findings",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let per: Vec<String> = Target::ALL
        .iter()
        .zip(per_target)
        .filter(|(_, n)| *n > 0)
        .map(|(t, n)| format!("{} {n}", t.name()))
        .collect();
    println!(
        "repsim-fuzz: {} inputs (seed {}, from #{}; {}) in {:.1} s: {accepted} accepted, \
         {rejected} rejected, {findings} findings",
        o.inputs,
        o.seed,
        o.start,
        per.join(", "),
        started.elapsed().as_secs_f64()
    );
    if findings > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
