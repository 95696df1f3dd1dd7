//! Conservation: every payload byte offered is delivered to the application exactly once, and
//! every data packet sent is accounted for as delivered, duplicate, trimmed, dropped or still in
//! the network, at the end of a run and in the middle of one; so is every packet of every other
//! kind (ACK, NACK, RTS, PULL, PFC frame, scheme packets): sent = arrived + dropped + in flight.
mod common;

use repsim::engine::time::US;
use repsim::sim::Phase;
use repsim::Simulation;

/// A congested 32-host tree: a 12-to-1 incast with small buffers, so that overflows happen.
fn congested(trimming: bool, lb: &str) -> String {
    common::incast_32(11, lb, "300KiB", (12, 3, 9), trimming, "")
}

#[test]
fn incast_conserves_bytes_and_packets() {
    for trimming in [true, false] {
        for lb in ["reps", "ops", "ecmp"] {
            let scn = common::parse(&congested(trimming, lb));
            let b = scn.build(lb, None).unwrap();
            let mut sim = Simulation::new(b).unwrap();
            // Mid-run: packets are in flight and the books still balance.
            sim.run_until(30 * US);
            assert!(sim.data_in_network() > 0);
            common::assert_books_balance(&sim);
            common::assert_kind_books_balance(&sim);
            sim.run_until_idle();
            common::assert_books_balance(&sim);
            common::assert_kind_books_balance(&sim);
            let c = sim.counters();
            if trimming {
                assert!(c.trims > 0, "{lb}: the incast should overflow and trim");
                assert_eq!(c.data_dropped, 0);
            } else {
                assert!(
                    c.data_dropped > 0,
                    "{lb}: the incast should overflow and drop"
                );
                assert_eq!(c.trims, 0);
            }
            let mut packets = 0u64;
            for f in sim.flows() {
                assert_eq!(
                    f.phase,
                    Phase::Done,
                    "{lb} trimming={trimming}: flow {} unfinished",
                    f.spec.id
                );
                assert_eq!(
                    f.delivered, f.spec.bytes,
                    "{lb}: flow {} delivered {} of {}",
                    f.spec.id, f.delivered, f.spec.bytes
                );
                packets += f.spec.bytes.div_ceil(4086);
            }
            assert_eq!(
                c.data_delivered, packets,
                "each packet delivered exactly once"
            );
            let rtx: u64 = sim.flows().iter().map(|f| f.stats.retransmissions).sum();
            assert_eq!(
                c.data_sent,
                packets + rtx,
                "sent = first transmissions + retransmissions"
            );
            assert!(
                rtx > 0,
                "{lb}: losses must have been repaired by retransmissions"
            );
            assert_eq!(sim.data_in_network(), 0);
            assert_eq!(sim.live_packets(), 0, "no packet leaked");
        }
    }
}

#[test]
fn ready_scenarios_conserve() {
    for name in ["reps-micro-symmetric.toml", "reps-micro-asymmetric.toml"] {
        let scn = common::load(name);
        for lb in scn.lbs() {
            let sim = common::run(&scn, &lb, None);
            common::assert_books_balance(&sim);
            common::assert_kind_books_balance(&sim);
            for f in sim.flows() {
                assert_eq!(f.delivered, f.spec.bytes, "{name} {lb}: flow {}", f.spec.id);
            }
            assert_eq!(sim.live_packets(), 0, "{name} {lb}: packets leaked");
        }
    }
}
