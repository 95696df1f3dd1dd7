//! Acceptance checks of the models against the paper's claims (Theorem 5.1, Figures 14 and 17).

use theory::ev;
use theory::ops;
use theory::recycled::{self, Feedback, Recycled, RecycledParams};
use theory::rng::sub_seed;

/// Replays the run of `seed` and checks what convergence is for, which `converged_at`'s
/// definition (no random throw, no forget, no bin above tau) does not imply: from round `at` to
/// `rounds` the process is work conserving at full rate. Every bin stays busy, so each departure
/// is replaced by exactly one arrival and the number of balls stays constant and at least `n`
/// (a model that lost or withheld balls would look settled while its bins drained).
fn assert_work_conserving_after(p: &RecycledParams, seed: u64, at: usize, rounds: usize) {
    let mut sim = Recycled::new(p.clone(), seed);
    let steps: Vec<_> = (0..rounds).map(|_| sim.step()).collect();
    let settled_total = steps[at].total_balls;
    assert!(
        settled_total >= p.n as u64,
        "n={}: {settled_total} balls at convergence (round {at}): some bin is idle",
        p.n
    );
    for (r, s) in steps.iter().enumerate().skip(at) {
        assert_eq!(
            s.total_balls, settled_total,
            "n={}: the ball count moved at round {r} after converging at {at}",
            p.n
        );
    }
    assert!(
        sim.loads().iter().all(|&l| l > 0),
        "n={}: an idle bin after convergence: {:?}",
        p.n,
        sim.loads()
    );
}

/// Theorem 5.1: with lambda = 1, tau = 4 ln n, b = 2.4 ln n the recycled model converges within
/// 10^4 rounds for at least 18 of 20 seeds and stays converged (checked over 2 * 10^4 rounds),
/// while OPS's maximum load keeps growing.
#[test]
fn recycled_converges_and_ops_grows_at_full_rate() {
    for n in [16usize, 32] {
        let p = RecycledParams::paper(n);
        assert_eq!(p.lambda, 1.0);
        let mut converged = 0;
        let mut rounds_needed = Vec::new();
        let mut ops_growing = 0;
        for seed in 0..20u64 {
            let run = recycled::run(&p, 20_000, sub_seed(100 + n as u64, seed));
            if let Some(at) = run.converged_at {
                rounds_needed.push(at);
                assert_work_conserving_after(&p, sub_seed(100 + n as u64, seed), at, 20_000);
                if at <= 10_000 && run.final_state_converged {
                    converged += 1;
                }
            }
            let o = ops::max_load_trace(n, 1.0, 10_000, sub_seed(200 + n as u64, seed));
            let early = o[..1000].iter().max().unwrap();
            let late = o[9000..].iter().max().unwrap();
            if late > early {
                ops_growing += 1;
            }
        }
        println!(
            "n={n} tau={} b={}: converged {converged}/20, rounds {:?}; OPS growing {ops_growing}/20",
            p.tau, p.colours_per_bin, rounds_needed
        );
        assert!(
            converged >= 18,
            "n={n}: only {converged}/20 seeds converged"
        );
        assert!(
            ops_growing >= 15,
            "n={n}: OPS grew in only {ops_growing}/20 seeds"
        );
    }
}

/// Figure 17: at lambda = 0.99 OPS's maximum load grows with the number of bins.
#[test]
fn ops_max_load_grows_with_n() {
    let ns = [8usize, 16, 32, 64, 128];
    let finals: Vec<f64> = ns
        .iter()
        .map(|&n| {
            let s = ops::max_load_over_trials(n, 0.99, 1000, 100, sub_seed(7, n as u64));
            // Mean over the last 100 rounds of the trial-averaged max load.
            s.mean[900..].iter().sum::<f64>() / 100.0
        })
        .collect();
    println!("OPS lambda=0.99 mean max load (rounds 901-1000) for n={ns:?}: {finals:?}");
    for w in finals.windows(2) {
        assert!(w[1] > w[0], "max load does not grow with n: {finals:?}");
    }
}

/// The literal round-robin reading of the model does not settle at full rate (documented in
/// `recycled::Feedback::RoundRobin`): the total load only grows while some bin is empty.
#[test]
fn literal_round_robin_reading_does_not_converge() {
    let mut p = RecycledParams::paper(16);
    p.feedback = Feedback::RoundRobin;
    let converged = (0..5u64)
        .filter(|&s| {
            recycled::run(&p, 5_000, sub_seed(300, s))
                .converged_at
                .is_some()
        })
        .count();
    assert_eq!(converged, 0);
}

/// Figure 14: 32 flows over 32 uplinks through the simulator's own ECMP hash. The median load
/// imbalance is below 1 % with 2^16 EVs and above 10 % with fewer than 2^8 EVs.
#[test]
fn ev_imbalance_matches_figure_14() {
    let salts = ev::salts(11, 101);
    let median = |evs: u32| ev::summarize(&ev::imbalances(32, evs, 32, &salts)).median;
    let big = median(1 << 16);
    println!("32 flows, 2^16 EVs: median imbalance {:.3} %", 100.0 * big);
    assert!(big < 0.01, "median imbalance at 2^16 EVs is {big}");
    for k in 4..8 {
        let m = median(1 << k);
        println!("32 flows, 2^{k} EVs: median imbalance {:.1} %", 100.0 * m);
        assert!(m > 0.10, "median imbalance at 2^{k} EVs is only {m}");
    }
    // A single flow is far worse balanced than 32 flows at the same EV-set size.
    let one = ev::summarize(&ev::imbalances(1, 1 << 10, 32, &salts)).median;
    assert!(one > 3.0 * median(1 << 10));
}
