use theory::{ops, recycled, rng::sub_seed};
fn main() {
    for n in [16usize, 32, 64] {
        let mut p = recycled::RecycledParams::paper(n); if std::env::var("RR").is_ok() { p.feedback = recycled::Feedback::RoundRobin; }
        let mut conv = vec![];
        let mut ok = 0;
        for s in 0..20u64 {
            let r = recycled::run(&p, 20000, sub_seed(1, s));
            if r.converged_at.map_or(false, |c| c <= 10000) && r.final_state_converged { ok += 1; }
            conv.push((r.converged_at, *r.max_load.iter().max().unwrap(), r.final_state_converged));
        }
        println!("n={n} tau={} b={} ok={ok} {:?}", p.tau, p.colours_per_bin, conv);
        let mut grow = 0;
        for s in 0..20u64 {
            let t = ops::max_load_trace(n, 1.0, 10000, sub_seed(2, s));
            if t[9000..].iter().max() > t[..1000].iter().max() { grow += 1; }
        }
        println!("  ops grows {grow}/20");
    }
}
