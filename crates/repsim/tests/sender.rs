//! The sending side of a connection under a window, a retransmission timer and RTS.
use repsim::cc::{CcParams, CcSpec};
use repsim::engine::{Rng, Time};
use repsim::transport::sender::*;
use repsim::transport::{FlowStats, Sizes};
use std::sync::{Arc, Mutex};

use repsim::lb::{AckFeedback, LbContext, LbEvent, LbSpec, LoadBalancer, PathChoice};

const MTU: u32 = 4150;
const HEADER: u32 = 64;
const RTO: Time = 40_000_000;
const LINE: u64 = 400_000_000_000;

/// A sender of a flow of `packets` full packets with a constant window of `window_packets`.
fn sender_of(packets: u64, window_packets: u64) -> Sender {
    sender_with_window(packets, window_packets as f64)
}

/// A sender of a flow of `packets` full packets with a constant window of `window` packets
/// (fractions allowed).
fn sender_with_window(packets: u64, window: f64) -> Sender {
    let sizes = Sizes::new(packets * 4086, MTU, HEADER);
    let window_bytes = (window * MTU as f64) as u64;
    let cc = CcSpec::new(repsim::cc::mprdma::MprdmaConfig {
        initial_cwnd: Some(repsim::units::SizeQ(repsim::units::Size::Packets(window))),
        max_cwnd_bdp: 1.0,
        ..Default::default()
    })
    .build(&CcParams {
        mtu: MTU,
        base_rtt: 8_000_000,
        bdp: window_bytes,
        line_rate: LINE,
        network_rtt: 8_000_000,
        trimming: false,
        timed_switch_on: false,
    });
    let ctx = LbContext {
        base_rtt: 8_000_000,
        rto: RTO,
        bdp_packets: 4,
        trimming: false,
        initial_window: window_bytes,
        ..LbContext::example()
    };
    let mut rng = Rng::new(1);
    let lb = LbSpec::named("ops").unwrap().build(&ctx, &mut rng);
    Sender::new(sizes, LINE, cc, lb, rng)
}

/// With a window of 4.5 packets, the REPS artifact's rule sends while the window exceeds the
/// bytes in flight (5 packets, the last overshooting) and requests an ACK on the packet that
/// fills it; uet-htsim's (`window_fit`) sends only packets that fit whole (4) and requests an
/// ACK on the one after which the next would not fit.
#[test]
fn the_window_fit_rule_sends_whole_packets_and_asks_for_an_ack_a_packet_early() {
    let requests = |fit: bool| {
        let mut s = sender_with_window(20, 4.5).with_window_fit(fit);
        let mut asked = Vec::new();
        while s.can_send() {
            asked.push(s.transmit(0, RTO).window_full);
        }
        asked
    };
    assert_eq!(requests(false), [false, false, false, false, true]);
    assert_eq!(requests(true), [false, false, false, true]);
}

/// A load balancer that sprays random EVs and keeps every `covered` list it hears.
struct CoverRecorder(Arc<Mutex<Vec<u16>>>);

impl LoadBalancer for CoverRecorder {
    fn next(&mut self, _now: Time, rng: &mut Rng) -> PathChoice {
        PathChoice::ev(rng.below(65536) as u16)
    }
    fn wants_covered(&self) -> bool {
        true
    }
    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        self.0.lock().expect("not poisoned").extend(ack.covered);
        None
    }
}

fn sender(window_packets: u64) -> Sender {
    sender_of(20, window_packets)
}

/// Sends while the window allows; returns the PSNs sent.
fn fill(s: &mut Sender, now: Time) -> Vec<u32> {
    let mut sent = Vec::new();
    while s.can_send() {
        sent.push(s.transmit(now, RTO).psn);
    }
    sent
}

/// A timeout of the oldest packet, as the simulation handles it.
fn time_out(s: &mut Sender) -> u64 {
    let (_, psn) = s.oldest_in_flight().unwrap();
    s.time_out(psn, RTO, RTO, &mut FlowStats::default()).wire
}

fn ack_of(psn: u32, cum: u32) -> AckInfo {
    AckInfo {
        nack: false,
        psn,
        sent_at: 0,
        ev: 0,
        ecn: false,
        cnp: false,
        cum_ack: cum,
        sack_base: cum + 1,
        sack_bits: 0,
        one_way: None,
    }
}

#[test]
fn rts_only_when_the_window_has_no_room_and_once_per_rto() {
    // A full window: the timeout takes the packet off in_flight and the window alike, so
    // there is still no room for it.
    let mut s = sender(4);
    assert_eq!(fill(&mut s, 0), vec![0, 1, 2, 3]);
    let wire = time_out(&mut s);
    assert!(!s.can_send(), "the window forbids the retransmission");
    assert!(s.rts_due(RTO, wire, false, RTO));
    let rts = s.send_rts(RTO, HEADER, RTO);
    assert_eq!(rts.psn, 4, "the RTS takes the next PSN");
    assert_eq!(
        s.in_flight(),
        3 * MTU as i64,
        "an RTS adds nothing to in_flight"
    );
    // Another timeout within one RTO of it may not send a second RTS.
    let wire = time_out(&mut s);
    assert!(!s.rts_due(RTO + RTO / 2, wire, false, RTO));
    assert!(s.rts_due(2 * RTO, wire, false, RTO), "one RTO later it may");
    assert!(
        s.rts_due(RTO + RTO / 2, wire, false, 0),
        "with no gap (uet-htsim under receiver credit) at once"
    );
    // A lone packet: after its timeout the window has room, so no RTS.
    let mut s = sender(4);
    s.transmit(0, RTO);
    let wire = time_out(&mut s);
    assert!(s.can_send());
    assert!(!s.rts_due(RTO, wire, false, RTO));
}

#[test]
fn window_room_after_a_timeout_is_the_complement_of_the_rts_test() {
    // A full window: no room for the lost packet once more (an RTS is due instead).
    let mut s = sender(4);
    fill(&mut s, 0);
    let wire = time_out(&mut s);
    assert!(!s.window_has_room(wire) && s.rts_due(RTO, wire, false, RTO));
    // A lone packet in a 4-packet window: room for it, and no RTS.
    let mut s = sender(4);
    s.transmit(0, RTO);
    let wire = time_out(&mut s);
    assert!(s.window_has_room(wire) && !s.rts_due(RTO, wire, false, RTO));
    assert!(!s.window_has_room(4 * wire), "not for four packets");
    // A credit-gated sender has no window to have room in.
    let mut s = credit_sender(20, 2.0);
    s.transmit(0, RTO);
    assert!(!s.window_has_room(0));
}

#[test]
fn data_after_an_rts_takes_the_next_psns() {
    let mut s = sender(4);
    fill(&mut s, 0);
    time_out(&mut s);
    s.send_rts(RTO, HEADER, RTO);
    // Acknowledge everything outstanding: PSN 0 (queued), 1-3, and the RTS (PSN 4).
    let mut stats = FlowStats::default();
    s.on_ack(RTO, &ack_of(4, 5), &mut stats);
    assert_eq!(s.cum_acked(), 5);
    let tx = s.transmit(2 * RTO, RTO);
    assert_eq!(
        (tx.psn, tx.wire, tx.retransmit),
        (5, MTU, false),
        "data packet 4 travels with PSN 5"
    );
    assert_eq!(s.data_sent_once(), 5);
    assert!(!s.finished());
}

#[test]
fn a_lost_rts_costs_64_bytes_of_in_flight_accounting() {
    let mut s = sender(4);
    fill(&mut s, 0);
    time_out(&mut s);
    let rts = s.send_rts(RTO, HEADER, RTO).psn;
    // The three data packets still out are acknowledged; in_flight is exact again.
    for psn in 1..4 {
        s.mark_acked(psn);
    }
    assert_eq!(s.in_flight(), 0);
    // The RTS is lost: its timeout takes 64 bytes off although it never added them.
    let (_, oldest) = s.oldest_in_flight().unwrap();
    assert_eq!(oldest, rts);
    assert_eq!(time_out(&mut s), 64);
    assert_eq!(s.in_flight(), -64);
    // Retransmissions go lowest PSN first: the data packet, then the RTS as a 64-byte data
    // packet, which counts in in_flight like data.
    let tx = s.transmit(2 * RTO, RTO);
    assert_eq!((tx.psn, tx.wire, tx.retransmit), (0, MTU, true));
    let tx = s.transmit(2 * RTO, RTO);
    assert_eq!((tx.psn, tx.wire, tx.retransmit), (rts, 64, true));
    assert_eq!(s.in_flight(), MTU as i64);
    // Both arrive and are acknowledged: 64 bytes short of the truth for good.
    assert_eq!(s.mark_acked(0), MTU as u64);
    assert_eq!(s.mark_acked(rts), 64);
    assert_eq!(s.in_flight(), -64);
    assert_eq!(
        s.window(),
        4 * MTU as i64 - MTU as i64 - 64,
        "the window lost 64 too"
    );
}

#[test]
fn an_rts_acknowledged_while_queued_gives_its_bytes_back() {
    let mut s = sender(4);
    fill(&mut s, 0);
    time_out(&mut s);
    let rts = s.send_rts(RTO, HEADER, RTO).psn;
    let before = s.in_flight();
    s.declare_lost(rts);
    assert_eq!(s.in_flight(), before - 64);
    // Its own ACK arrives late, while the retransmission still waits: nothing was added
    // for it, so what the timeout took is given back and no payload is credited.
    assert_eq!(s.mark_acked(rts), 0);
    assert_eq!(s.in_flight(), before);
    // The original RTS's ACK when it was not declared lost credits nothing either.
    let mut s = sender(4);
    fill(&mut s, 0);
    time_out(&mut s);
    let rts = s.send_rts(RTO, HEADER, RTO).psn;
    let before = s.in_flight();
    assert_eq!(s.mark_acked(rts), 0);
    assert_eq!(s.in_flight(), before);
}

#[test]
fn acks_report_every_ev_they_cover_the_echoed_one_last() {
    let covered = Arc::new(Mutex::new(Vec::new()));
    let cc = sender(8).into_state().cc;
    let lb = Box::new(CoverRecorder(covered.clone()));
    let sizes = Sizes::new(20 * 4086, MTU, HEADER);
    let mut s = Sender::new(sizes, LINE, cc, lb, Rng::new(1));
    fill(&mut s, 0);
    let evs: Vec<u16> = (0..8).map(|p| s.record(p).ev).collect();
    // An ACK for PSN 5 that also acknowledges 0..3 cumulatively and 4 selectively.
    let ack = AckInfo {
        ev: evs[5],
        cum_ack: 4,
        sack_base: 4,
        sack_bits: 0b11,
        ..ack_of(5, 4)
    };
    s.on_ack(1, &ack, &mut FlowStats::default());
    assert_eq!(
        *covered.lock().expect("not poisoned"),
        vec![evs[0], evs[1], evs[2], evs[3], evs[4], evs[5]]
    );
    assert_eq!(s.cum_acked(), 6);
}

/// Drives a sender through `packets` packets, acknowledging each in order one RTT later with
/// a window of 50 packets; returns the largest heap footprint seen.
fn peak_heap(packets: u64) -> usize {
    let mut s = sender_of(packets, 50);
    let mut stats = FlowStats::default();
    let mut now = 0;
    let mut acked = 0;
    let mut peak = 0;
    while !s.finished() {
        while s.can_send() {
            s.transmit(now, RTO);
        }
        peak = peak.max(s.heap_bytes());
        now += 1000;
        let next = acked;
        acked += 1;
        s.on_ack(now, &ack_of(next, acked), &mut stats);
    }
    peak
}

#[test]
fn sender_memory_follows_the_window_not_the_flow() {
    // 2,054 packets (8 MiB) against 262,144 (1 GiB), same window.
    let small = peak_heap(2054);
    let large = peak_heap(262_144);
    assert!(small > 0);
    assert!(
        large <= small,
        "a 1 GiB flow's sender holds {large} B, an 8 MiB flow's {small} B"
    );
}

/// A sender of `packets` full packets under EQDS credit with `initial_packets` of speculative
/// credit and a 4-packet maximum.
fn credit_sender(packets: u64, initial_packets: f64) -> Sender {
    let sizes = Sizes::new(packets * 4086, MTU, HEADER);
    let cc = CcSpec::new(repsim::cc::eqds::EqdsConfig {
        initial_credit: Some(repsim::units::SizeQ(repsim::units::Size::Packets(
            initial_packets,
        ))),
        max_credit_bdp: 1.0,
        ..Default::default()
    })
    .build(&CcParams {
        bdp: 4 * MTU as u64,
        ..CcParams::example()
    });
    let mut rng = Rng::new(1);
    let lb = LbSpec::named("ops")
        .unwrap()
        .build(&LbContext::example(), &mut rng);
    Sender::new(sizes, LINE, cc, lb, rng)
}

#[test]
fn credit_gates_sending_and_pulls_reopen_it() {
    let mut s = credit_sender(20, 2.0);
    assert!(s.credit_gated());
    assert_eq!(s.backlog(), 20 * MTU as u64);
    // Two packets of speculative credit: two go, the second asking for an ACK.
    let first = s.transmit(0, RTO);
    assert!(!first.window_full);
    let second = s.transmit(0, RTO);
    assert!(second.window_full, "no credit left after it");
    assert!(!s.can_send());
    assert_eq!(s.backlog(), 18 * MTU as u64);
    // Still speculating, nothing pulled or used: the target asks for a full credit (the
    // maximum, 4 packets, less the credit held, none).
    let r = s.pull_request();
    assert_eq!((r.target, r.used), (4 * MTU as u64, 0));
    // A PULL of 4096 bytes (cumulative, low 32 bits): positive credit, one more packet.
    assert!(s.on_pull(10, 4096));
    assert!(!s.on_pull(11, 4096), "a repeated PULL grants nothing");
    assert!(s.can_send());
    s.transmit(10, RTO);
    assert!(!s.can_send(), "4096 - 4150 < 0");
    // The retransmission queue counts in the backlog until the packet goes again.
    let wire = time_out(&mut s);
    assert_eq!(s.backlog(), 17 * MTU as u64 + wire);
    assert!(
        s.rts_due(RTO, wire, false, RTO),
        "no credit: an RTS asks for some"
    );
    s.on_pull(RTO, 3 * 4096);
    assert!(!s.rts_due(RTO, wire, false, RTO));
    assert!(
        s.rts_due(RTO, wire, true, RTO),
        "credit left, but the lost packet queued behind another retransmission"
    );
    let tx = s.transmit(RTO, RTO);
    assert!(tx.retransmit);
    assert_eq!(s.backlog(), 17 * MTU as u64);
}

/// `record_ref` is the record `record` returns, for every PSN sent and none past them.
#[test]
fn record_ref_is_the_stored_record() {
    let mut s = sender(4);
    let sent = fill(&mut s, 1_000);
    assert!(!sent.is_empty());
    for &psn in &sent {
        assert_eq!(s.record_ref(psn).copied(), Some(s.record(psn)), "psn {psn}");
        assert_eq!(s.record(psn).state, PsnState::InFlight);
    }
    assert!(s.record_ref(1_000).is_none());
}
