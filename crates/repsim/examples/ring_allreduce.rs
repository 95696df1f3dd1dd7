//! A ring AllReduce driven from outside the simulator, with no files: the first step's flows
//! go in at the start, and every later step's flow is injected from the completion callback of
//! the flow it waits for.
//!
//! In a ring AllReduce of a `buffer`-byte vector over `N` hosts, each host sends a
//! `buffer / N` chunk to its ring successor in each of `2 (N - 1)` steps (reduce-scatter, then
//! all-gather), and may send step `k + 1` only once it has received step `k` from its
//! predecessor. On a network where every ring hop has its own path, each step takes one
//! chunk's serialisation plus a round trip, so the collective should take about
//! `2 (N - 1)` single-step times.
//!
//! Each step's flow is added when the observer hears of the completion it waits for: at the
//! end of that completion's microsecond of simulated time ([`repsim::sim::OBSERVER_SLICE`]),
//! which is where a run split over threads meets; the collective takes the same time at any
//! thread count.
//!
//! Run it with
//! `cargo run --release -p repsim --example ring_allreduce [hosts] [buffer MiB] [threads]`.
use repsim::engine::time::{Time, SEC, US};
use repsim::net::topology::fat_tree::FatTreeSpec;
use repsim::sim::parallel::run_on_threads_observed;
use repsim::sim::{Flow, Injector, Observer};
use repsim::workload::FlowSpec;
use repsim::{RunSpec, SimConfig, Simulation};

/// Link speed of the example's network.
const LINK_BPS: u64 = 400_000_000_000;

/// Injects each host's next step when the chunk it waits for has arrived.
struct Ring {
    hosts: u32,
    steps: u64,
    chunk: u64,
}

impl Ring {
    /// Step `step`'s flow from host `src` to its successor (ids are unique per step and host).
    fn flow(&self, step: u64, src: u32, start: Time) -> FlowSpec {
        let mut f = FlowSpec::new(
            step * self.hosts as u64 + src as u64,
            src,
            (src + 1) % self.hosts,
            self.chunk,
            start,
        );
        f.tag = step;
        f
    }
}

impl Observer for Ring {
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        // The receiver of step k now holds what it needs to send step k + 1.
        if flow.spec.tag < self.steps {
            inject.add_flow(self.flow(flow.spec.tag + 1, flow.spec.dst, 0));
        }
    }
}

/// What one collective took, beside the analytic estimate.
#[derive(Debug)]
pub struct Outcome {
    /// Time from the start to the last step's last acknowledgement.
    pub measured: Time,
    /// `2 (N - 1)` x (one chunk's serialisation + the largest base RTT between ring neighbours).
    pub analytic: Time,
    /// Flows run (one per host per step).
    pub flows: usize,
}

/// Runs a ring AllReduce of `buffer` bytes over `hosts` hosts (4 per ToR, two-tier fat tree
/// of 400 Gbps links, REPS and the default transport) on `threads` threads.
pub fn ring_allreduce(hosts: u32, buffer: u64, threads: u32) -> Outcome {
    let topology = FatTreeSpec::uniform(2, hosts, 4, hosts, 1, LINK_BPS, US, 0)
        .and_then(|spec| spec.build())
        .unwrap_or_else(|e| panic!("{hosts} hosts: {e}"));
    let ring = Ring {
        hosts,
        steps: 2 * (hosts as u64 - 1),
        chunk: buffer / hosts as u64,
    };
    let first_step: Vec<FlowSpec> = (0..hosts).map(|h| ring.flow(1, h, 0)).collect();
    let config = SimConfig::default();
    let transport = config.transport.resolve().expect("the default transport");
    let (chunk, steps) = (ring.chunk, ring.steps);
    let build = || {
        let spec = RunSpec::new(config.clone(), topology.clone(), first_step.clone());
        Simulation::new(spec)
    };
    let sim =
        run_on_threads_observed(threads, build, Box::new(ring)).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.all_done(), "every step finished");
    assert!(
        sim.rejected_flows().is_empty(),
        "{:?}",
        sim.rejected_flows()
    );

    let payload = transport.mtu - transport.header;
    let packets = chunk.div_ceil(payload as u64);
    let wire = chunk + packets * transport.header as u64;
    let worst_rtt = (0..hosts)
        .map(|h| sim.base_rtt(h, (h + 1) % hosts))
        .max()
        .unwrap_or(0);
    let single_step = serialization_of(wire) + worst_rtt;
    Outcome {
        measured: sim
            .flows()
            .iter()
            .filter_map(|f| f.finish)
            .max()
            .unwrap_or(0),
        analytic: steps * single_step,
        flows: sim.flows().len(),
    }
}

/// Serialisation time of `bytes` at the example's link speed (chunks may exceed `u32`).
fn serialization_of(bytes: u64) -> Time {
    (bytes as u128 * 8 * SEC as u128).div_ceil(LINK_BPS as u128) as Time
}

fn main() {
    let mut args = std::env::args().skip(1);
    let parse = |arg: Option<String>, default: u64, what: &str| match arg {
        None => default,
        Some(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("error: {what} must be a whole number, not {text:?}");
            std::process::exit(2);
        }),
    };
    let hosts = parse(args.next(), 16, "hosts") as u32;
    let mib = parse(args.next(), 64, "buffer MiB");
    let threads = parse(args.next(), 1, "threads") as u32;
    if hosts < 2 || !hosts.is_multiple_of(4) {
        eprintln!("error: hosts must be a multiple of 4 (4 per ToR), at least 4");
        std::process::exit(2);
    }
    if threads == 0 {
        eprintln!("error: threads must be at least 1");
        std::process::exit(2);
    }
    let outcome = ring_allreduce(hosts, mib << 20, threads);
    println!(
        "ring AllReduce of {mib} MiB over {hosts} hosts on {threads} thread(s): {} flows, {:.1} us (analytic {:.1} us, ratio {:.3})",
        outcome.flows,
        outcome.measured as f64 / 1e6,
        outcome.analytic as f64 / 1e6,
        outcome.measured as f64 / outcome.analytic as f64
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collective_takes_2_n_minus_1_single_steps() {
        let hosts = 16;
        let outcome = ring_allreduce(hosts, 64 << 20, 1);
        assert_eq!(outcome.flows, (hosts * 2 * (hosts - 1)) as usize);
        let ratio = outcome.measured as f64 / outcome.analytic as f64;
        assert!((0.9..=1.1).contains(&ratio), "{outcome:?}: ratio {ratio}");
    }

    #[test]
    fn the_collective_takes_the_same_time_on_threads() {
        let one = ring_allreduce(16, 16 << 20, 1);
        for threads in [2, 3] {
            let many = ring_allreduce(16, 16 << 20, threads);
            assert_eq!(many.measured, one.measured, "{threads} threads");
            assert_eq!(many.flows, one.flows, "{threads} threads");
        }
    }
}
