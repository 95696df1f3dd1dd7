//! REPS inside a toy transport loop.
//!
//! A sender keeps a fixed window of packets in flight over a fabric of 16 paths. The
//! switch hash is modelled as `path = ev % 16`. Path 3 is congested (its packets come
//! back ECN-marked) and path 11 fails at tick 20 000 (its packets are silently dropped
//! and detected by a retransmission timeout). The loop shows where each REPS call goes:
//!
//! * every send asks [`RepsState::next_ev`] for the EV to put in the header;
//! * every ACK calls [`RepsState::on_ack`] with the echoed EV and ECN bit;
//! * a timeout that the transport attributes to a failure calls
//!   [`RepsState::on_failure_detected`] (here: every timeout, as with packet trimming).
//!
//! Run with `cargo run -p reps --example transport_loop`.

use reps::{Config, RepsState, Transition, XorShift32};
use std::collections::VecDeque;

const PATHS: u16 = 16;
const CONGESTED_PATH: u16 = 3;
const FAILED_PATH: u16 = 11;
const FAIL_AT: u32 = 20_000;
const ONE_WAY_DELAY: u32 = 50; // ticks
const RTO: u32 = 400; // ticks
const WINDOW: usize = 32; // packets in flight, also the BDP in packets
const END: u32 = 120_000;

struct InFlight {
    ev: u16,
    sent_at: u32,
    delivered: bool,
}

fn main() {
    let mut cfg = Config::new(256);
    cfg.freeze_duration = 5_000; // ticks
    cfg.explore_packets = WINDOW as u16; // BDP in packets
    cfg.validate().expect("valid REPS configuration");

    let mut reps = RepsState::new();
    let mut rng = XorShift32::new(2024);
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    let mut sent_per_path = [0u64; PATHS as usize];
    let mut sent_to_failed_after_failure = 0u64;
    let mut sent_after_failure = 0u64;
    let (mut acks, mut marked, mut timeouts) = (0u64, 0u64, 0u64);

    for now in 0..END {
        // 1. Feedback: ACKs (or timeouts) for the oldest packets.
        while let Some(front) = in_flight.front() {
            if front.delivered && now >= front.sent_at + 2 * ONE_WAY_DELAY {
                let pkt = in_flight.pop_front().unwrap();
                let ecn = pkt.ev % PATHS == CONGESTED_PATH && rng_bit(&mut rng);
                acks += 1;
                marked += u64::from(ecn);
                if reps.on_ack(&cfg, pkt.ev, ecn, now) == Transition::ExitedFreezing {
                    println!(
                        "tick {now:>6}: left freezing, exploring {} packets",
                        cfg.explore_packets
                    );
                }
            } else if !front.delivered && now >= front.sent_at + RTO {
                in_flight.pop_front();
                timeouts += 1;
                // The transport decides this loss is a failure (trimming would have
                // turned a congestion loss into a NACK instead).
                if reps.on_failure_detected(&cfg, now) == Transition::EnteredFreezing {
                    println!(
                        "tick {now:>6}: timeout, entered freezing until {:?}",
                        reps.freezing_until()
                    );
                }
                // The retransmission is just another send below.
            } else {
                break;
            }
        }

        // 2. Sends: fill the window, one EV per packet.
        while in_flight.len() < WINDOW {
            let ev = reps.next_ev(&cfg, &mut rng);
            let path = ev % PATHS;
            sent_per_path[path as usize] += 1;
            let failed = now >= FAIL_AT && path == FAILED_PATH;
            if now >= FAIL_AT {
                sent_after_failure += 1;
                sent_to_failed_after_failure += u64::from(failed);
            }
            in_flight.push_back(InFlight {
                ev,
                sent_at: now,
                delivered: !failed,
            });
        }
    }

    println!("acks {acks}, ECN-marked {marked}, timeouts {timeouts}");
    println!("packets per path: {sent_per_path:?}");
    // Integer arithmetic only, like the library: thousandths of a percent.
    let milli_percent = 100_000 * sent_to_failed_after_failure / sent_after_failure.max(1);
    println!(
        "after the failure, {sent_to_failed_after_failure} of {sent_after_failure} packets \
         ({}.{:03}%) went to the failed path (a random spray would send 6.250%)",
        milli_percent / 1000,
        milli_percent % 1000
    );
}

/// One pseudo-random bit (marks half of the congested path's packets).
fn rng_bit(rng: &mut XorShift32) -> bool {
    use reps::RandomSource;
    rng.next_u32() & 1 == 1
}
