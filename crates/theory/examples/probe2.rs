use theory::recycled::*;
fn main() {
    let n: usize = std::env::args().nth(1).map_or(16, |s| s.parse().unwrap());
    let p = RecycledParams::paper(n);
    let mut sim = Recycled::new(p.clone(), 5);
    for r in 0..20000 {
        let s = sim.step();
        if r < 40 || r % 1000 == 0 {
            println!("r={r} max={} rand={} forg={} total={} remembering={} loads={:?}", s.max_load, s.random_throws, s.forgets, s.total_balls, sim.remembering(), sim.loads());
        }
    }
}
