//! The RoCE NIC modes' sender rules: go-back-N and IRN recovery, IRN's cap and timeouts.
use repsim::cc::{CcParams, CcSpec};
use repsim::engine::time::US;
use repsim::engine::{Rng, Time};
use repsim::lb::{LbContext, LbSpec};
use repsim::transport::sender::*;
use repsim::transport::{FlowStats, Sizes};
use repsim::transport::{GbnRewind, Recovery};
use repsim::units::{Size, SizeQ};

const MTU: u32 = 1048;
const HEADER: u32 = 48;
const RTO: Time = 4_000 * US;

/// A sender of `packets` full packets under a constant window of `window` packets.
fn sender(packets: u64, window: f64, recovery: Recovery) -> Sender {
    let sizes = Sizes::new(packets * (MTU - HEADER) as u64, MTU, HEADER);
    let cc = CcSpec::new(repsim::cc::constant::ConstantConfig {
        window: Some(SizeQ(Size::Packets(window))),
        rate: None,
    })
    .build(&CcParams {
        mtu: MTU,
        ..CcParams::example()
    });
    let mut rng = Rng::new(1);
    let lb = LbSpec::named("ecmp")
        .unwrap()
        .build(&LbContext::example(), &mut rng);
    Sender::new(sizes, 100_000_000_000, cc, lb, rng).with_recovery(recovery)
}

/// Sends while the window allows, one packet per time unit from `t`; returns the PSNs.
fn fill(s: &mut Sender, t: &mut Time) -> Vec<u32> {
    let mut sent = Vec::new();
    while s.can_send() {
        sent.push(s.transmit(*t, RTO).psn);
        *t += 1;
    }
    sent
}

fn answer(nack: bool, psn: u32, sent_at: Time, cum: u32, sack_bits: u64) -> AckInfo {
    AckInfo {
        nack,
        psn,
        sent_at,
        ev: 0,
        ecn: false,
        cnp: nack,
        cum_ack: cum,
        sack_base: cum + 1,
        sack_bits,
        one_way: None,
    }
}

#[test]
fn go_back_n_resends_from_the_first_hole_and_everything_after() {
    let mut s = sender(20, 8.0, Recovery::gbn(GbnRewind::Fresh));
    let mut t = 0;
    assert_eq!(fill(&mut s, &mut t), (0..8).collect::<Vec<_>>());
    let mut stats = FlowStats::default();
    // 0 and 1 arrive; 2 is lost; 3 arrives out of order and is NACKed with expected 2.
    s.on_ack(100, &answer(false, 0, 0, 1, 0), &mut stats);
    s.on_ack(101, &answer(false, 1, 1, 2, 0), &mut stats);
    s.on_ack(102, &answer(true, 3, 3, 2, 0), &mut stats);
    assert_eq!(s.cum_acked(), 2);
    for psn in 2..8 {
        assert_eq!(s.record(psn).state, PsnState::Queued, "psn {psn}");
    }
    assert_eq!(s.in_flight(), 0);
    // Everything from the hole goes again, in order, before new data.
    let mut t = 200;
    assert_eq!(fill(&mut s, &mut t), (2..10).collect::<Vec<_>>());
    // A NACK triggered by a packet that left before the rewind is old news.
    s.on_ack(300, &answer(true, 5, 5, 2, 0), &mut stats);
    assert!((2..10).all(|p| s.record(p).state == PsnState::InFlight));
    // One triggered by a packet sent after it (2 was lost again): back to 2 once more.
    s.on_ack(301, &answer(true, 4, 202, 2, 0), &mut stats);
    assert!((2..10).all(|p| s.record(p).state == PsnState::Queued));
    assert_eq!(stats.nacks, 3);
}

#[test]
fn go_back_n_rewinds_on_every_nack_when_asked() {
    let mut s = sender(20, 8.0, Recovery::gbn(GbnRewind::EveryNack));
    let mut t = 0;
    fill(&mut s, &mut t);
    let mut stats = FlowStats::default();
    s.on_ack(100, &answer(false, 0, 0, 1, 0), &mut stats);
    s.on_ack(101, &answer(true, 2, 2, 1, 0), &mut stats);
    let mut t = 200;
    assert_eq!(fill(&mut s, &mut t), (1..9).collect::<Vec<_>>());
    // A NACK triggered by a packet that left before that rewind sends it back again.
    s.on_ack(300, &answer(true, 5, 5, 1, 0), &mut stats);
    assert!((1..9).all(|p| s.record(p).state == PsnState::Queued));
    assert_eq!(stats.nacks, 2);
}

#[test]
fn go_back_n_timeout_resends_everything_outstanding() {
    let mut s = sender(20, 4.0, Recovery::gbn(GbnRewind::Fresh));
    let mut t = 0;
    fill(&mut s, &mut t);
    s.on_ack(10, &answer(false, 0, 0, 1, 0), &mut FlowStats::default());
    let RtoCheck::Expired(psn) = s.check_rto(RTO + 1, RTO) else {
        panic!("packet 1 is overdue")
    };
    assert_eq!(psn, 1);
    let out = s.time_out(psn, RTO + 1, RTO, &mut FlowStats::default());
    assert_eq!(out.rearm, None, "nothing left in flight");
    assert!((1..4).all(|p| s.record(p).state == PsnState::Queued));
    let mut t = RTO + 2;
    assert_eq!(fill(&mut s, &mut t), vec![1, 2, 3, 4]);
}

#[test]
fn irn_retransmits_only_the_holes() {
    let mut s = sender(40, 100.0, Recovery::irn(100 * MTU as u64, MTU));
    let mut t = 0;
    assert_eq!(fill(&mut s, &mut t).len(), 40);
    let mut stats = FlowStats::default();
    // 0 and 1 arrive, 2 is lost, 3 arrives: NACK for 3 with the SACK bitmap from 3.
    s.on_ack(100, &answer(false, 1, 1, 2, 0), &mut stats);
    s.on_ack(101, &answer(true, 3, 3, 2, 0b1), &mut stats);
    assert_eq!(s.record(2).state, PsnState::Queued);
    assert_eq!(s.record(3).state, PsnState::Acked);
    assert!((4..40).all(|p| s.record(p).state == PsnState::InFlight));
    assert!(s.in_recovery());
    // Only the hole goes again.
    assert!(s.can_send());
    let tx = s.transmit(200, RTO);
    assert!(tx.retransmit && tx.psn == 2);
    assert!(
        !s.can_send(),
        "nothing else is missing and all data was sent"
    );
    // 4 is lost too; 5's NACK finds it (sent before 5) but not 2, resent since.
    s.on_ack(201, &answer(true, 5, 5, 2, 0b101), &mut stats);
    assert_eq!(s.record(4).state, PsnState::Queued);
    assert_eq!(s.record(2).state, PsnState::InFlight);
    assert_eq!(s.next_retransmission(), Some(4));
    // The cumulative point passes the highest PSN sent at the start: recovery is over.
    s.on_ack(300, &answer(false, 39, 39, 40, 0), &mut stats);
    assert!(!s.in_recovery());
}

#[test]
fn irn_caps_bytes_in_flight_at_its_bdp() {
    let mut s = sender(40, 100.0, Recovery::irn(5 * MTU as u64, MTU));
    let mut t = 0;
    assert_eq!(fill(&mut s, &mut t).len(), 5);
    // Without the cap the window (100 packets) would have let all 40 go.
    let mut g = sender(40, 100.0, Recovery::gbn(GbnRewind::Fresh));
    assert_eq!(fill(&mut g, &mut t).len(), 40);
}

#[test]
fn irn_timeout_is_short_with_at_most_three_packets_in_flight() {
    let recovery = Recovery::irn(100 * MTU as u64, MTU);
    let (low, high) = (recovery.rto_low, recovery.rto_high);
    assert_eq!((low, high), (100 * US, 320 * US));
    let mut s = sender(3, 100.0, recovery);
    let mut t = 0;
    let tx = s.transmit(t, RTO);
    assert_eq!(tx.arm_rto, Some(low), "armed with the shorter one");
    t += 1;
    fill(&mut s, &mut t);
    // 3 packets in flight: 100 us.
    assert_eq!(s.rto_for(RTO), low);
    assert_eq!(s.check_rto(low - 1, RTO), RtoCheck::Rearm(low));
    assert_eq!(s.check_rto(low, RTO), RtoCheck::Expired(0));
    // 4 packets in flight: 320 us.
    let mut s = sender(4, 100.0, recovery);
    let mut t = 0;
    fill(&mut s, &mut t);
    assert_eq!(s.rto_for(RTO), high);
    assert_eq!(s.check_rto(low, RTO), RtoCheck::Rearm(high));
    // IRN's timeout resends every hole at once.
    let out = s.time_out(0, high, RTO, &mut FlowStats::default());
    assert_eq!(out.rearm, None);
    assert_eq!(s.in_flight(), 0);
}
