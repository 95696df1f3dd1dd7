use super::*;
use crate::engine::time::US;
use crate::engine::Rng;
use crate::net::world::World;
use crate::net::RunContext;
use crate::net::{LeafSpineSpec, Topology};
use crate::routing::RoutingScheme;
use crate::routing::{SchemeAction, SwitchSpec};
use crate::units::TimeQ;

/// 4 leaves x 3 spines, 2 hosts per leaf, 1 µs links: host 0 on leaf 0, host 7 on leaf 3.
fn leaf_spine() -> Topology {
    LeafSpineSpec::at_100g(4, 3, 2)
        .build()
        .expect("a valid fabric")
}

struct Bench {
    w: World,
    cw: ConWeave,
    rng: Rng,
    actions: Vec<SchemeAction>,
}

const SRC_TOR: u32 = 0;
const DST_TOR: u32 = 3;
const SRC: u32 = 0;
const DST: u32 = 7;

impl Bench {
    fn new() -> Self {
        let mut w = crate::routing::test_world(&[1], 0);
        w.topo = leaf_spine();
        let setup = SchemeSetup {
            topology: &w.topo,
            salts: &[0; 16],
            next_hops: crate::net::candidate_hops::NextHops::Shortest,
        };
        let cw = ConWeave::new(ConWeaveConfig::default().params(), &setup);
        Bench {
            w,
            cw,
            rng: Rng::new(3),
            actions: Vec::new(),
        }
    }

    fn at(&mut self, t: Time) {
        self.w.now = t;
        self.actions.clear();
    }

    /// A tagged data packet of `flow` arriving at the destination ToR from a spine.
    fn tagged(&mut self, flow: u32, scheme: u16, tx_ns: u32, tail_ns: u32) -> Handle {
        let topo = &self.w.topo;
        let dst_tor = topo.switch_node(DST_TOR);
        let from_spine = (0..topo.links.len() as u32)
            .find(|&l| {
                topo.links[l as usize].to == dst_tor && topo.links[l as usize].from > dst_tor
            })
            .expect("a spine link");
        let mut p = Packet::blank(Kind::Data, 1000);
        p.flow = flow;
        p.src = SRC;
        p.dst = DST;
        p.ingress = from_spine;
        p.scheme = TAGGED | scheme;
        p.aux = tx_ns as u64 | (tail_ns as u64) << 32;
        self.w.pkts.alloc(p)
    }

    fn at_destination(&mut self, h: Handle) -> Ingress {
        let port = self.w.topo.host_downlink[DST as usize];
        let mut ctx = SwitchCtx::new(&mut self.w, &mut self.rng, 64, &mut self.actions);
        self.cw.ingress(&mut ctx, DST_TOR, h, &[port])
    }

    /// A data packet of `flow` from host 0 arriving at its source ToR; returns (port, tag).
    fn at_source(&mut self, flow: u32) -> (u32, u16, u64) {
        let topo = &self.w.topo;
        let cands = topo.candidates_to_host(SRC_TOR, DST).to_vec();
        let mut p = Packet::blank(Kind::Data, 1000);
        p.flow = flow;
        p.src = SRC;
        p.dst = DST;
        p.ingress = topo.host_uplink[SRC as usize];
        let h = self.w.pkts.alloc(p);
        let mut ctx = SwitchCtx::new(&mut self.w, &mut self.rng, 64, &mut self.actions);
        let Ingress::Forward(port) = self.cw.ingress(&mut ctx, SRC_TOR, h, &cands) else {
            panic!("the source ToR forwards");
        };
        let p = self.w.pkts.get(h);
        (port, p.scheme, p.aux)
    }

    /// A control message from the destination ToR arriving at the source ToR.
    fn control(&mut self, flow: u32, message: u16, epoch: u16, code: u8) -> Ingress {
        let mut p = Packet::blank(Kind::Notify, 64);
        p.flow = flow;
        p.src = self.w.topo.switch_node(DST_TOR);
        p.dst = self.w.topo.switch_node(SRC_TOR);
        p.scheme = TAGGED | message << CONTROL_SHIFT | epoch << 8 | code as u16;
        let h = self.w.pkts.alloc(p);
        let mut ctx = SwitchCtx::new(&mut self.w, &mut self.rng, 64, &mut self.actions);
        self.cw.ingress(&mut ctx, SRC_TOR, h, &[])
    }

    /// Fires flow `flow`'s flush timer as armed now (`stale`: the previous arming).
    fn fire(&mut self, flow: u32, stale: bool) {
        let gen = self.cw.dst[flow as usize].flush.gen;
        let timer = SchemeTimer {
            kind: FLUSH_TIMER,
            gen: if stale { gen.wrapping_sub(1) } else { gen },
            id: flow,
        };
        let mut ctx = SwitchCtx::new(&mut self.w, &mut self.rng, 64, &mut self.actions);
        self.cw.on_timer(&mut ctx, timer);
    }

    fn released(&self) -> Vec<Handle> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                SchemeAction::Release { packet, .. } => Some(*packet),
                _ => None,
            })
            .collect()
    }

    /// Control messages originated since the last `at`.
    fn sent(&self) -> Vec<u16> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                SchemeAction::Originate { packet, .. } => {
                    Some((self.w.pkts.get(*packet).scheme >> CONTROL_SHIFT) & 3)
                }
                _ => None,
            })
            .collect()
    }
}

const EPOCH1: u16 = 1 << 8;

#[test]
fn holds_phase_one_until_the_deadline_then_delivers_in_order() {
    let mut b = Bench::new();
    let port = b.w.topo.host_downlink[DST as usize];
    b.at(0);
    let first = b.tagged(0, INIT | EPOCH1, 0, 0);
    assert_eq!(b.at_destination(first), Ingress::Forward(port));
    assert_eq!(b.sent(), vec![RTT_REPLY]);
    // Phase-1 packets overtake the TAIL (sent at 1 µs): held.
    b.at(2 * US);
    let x = b.tagged(0, PHASE | EPOCH1, 2000, 1000);
    assert_eq!(b.at_destination(x), Ingress::Hold);
    b.at(3 * US);
    let y = b.tagged(0, PHASE | EPOCH1, 2100, 1000);
    assert_eq!(b.at_destination(y), Ingress::Hold);
    // Expected TAIL: phase-0 arrival (0) + (TAIL sent - phase-0 sent = 1 µs) + 16 µs extra.
    assert_eq!(b.cw.dst[0].flush_at, 17 * US);
    b.at(17 * US);
    b.fire(0, true);
    assert!(b.released().is_empty(), "a stale timer releases nothing");
    b.fire(0, false);
    assert_eq!(b.released(), vec![x, y], "first in, first out");
    assert_eq!(b.cw.counts.flushed_on_deadline, 1);
    assert_eq!(b.cw.counts.max_held_packets, 2);
    assert_eq!(b.cw.counts.max_held_bytes, 2000);
    assert!(b.cw.held.iter().all(|h| h.packets == 0 && h.bytes == 0));
    // After the flush the flow is in phase 1: later phase-1 packets pass.
    b.at(18 * US);
    let z = b.tagged(0, PHASE | EPOCH1, 3000, 1000);
    assert_eq!(b.at_destination(z), Ingress::Forward(port));
    // A straggler of an older epoch passes too; a newer epoch starts afresh.
    let old = b.tagged(0, 0, 100, 0);
    assert_eq!(b.at_destination(old), Ingress::Forward(port));
    let next = b.tagged(0, INIT | 2 << 8, 19_000, 0);
    assert_eq!(b.at_destination(next), Ingress::Forward(port));
    assert_eq!(b.cw.dst[0].epoch, 2);
    assert_eq!(b.cw.dst[0].rx_phase, 0);
}

#[test]
fn a_tail_releases_the_queue_just_after_it() {
    let mut b = Bench::new();
    let port = b.w.topo.host_downlink[DST as usize];
    b.at(0);
    let first = b.tagged(1, INIT | EPOCH1, 0, 0);
    assert_eq!(b.at_destination(first), Ingress::Forward(port));
    b.at(US);
    let x = b.tagged(1, PHASE | EPOCH1, 900, 800);
    assert_eq!(b.at_destination(x), Ingress::Hold);
    let deadline = b.cw.dst[1].flush_at;
    assert_eq!(deadline, 16 * US + 800 * NS);
    b.at(2 * US);
    let tail = b.tagged(1, TAIL | EPOCH1, 800, 0);
    assert_eq!(
        b.at_destination(tail),
        Ingress::Forward(port),
        "the TAIL goes first"
    );
    assert_eq!(b.sent(), vec![CLEAR]);
    assert_eq!(b.cw.dst[1].flush_at, 2 * US + NS);
    b.at(2 * US + NS);
    b.fire(1, false);
    assert_eq!(b.released(), vec![x]);
    assert_eq!(b.cw.counts.flushed_on_tail, 1);
    assert_eq!(b.cw.counts.flushed_on_deadline, 0);
    // ECN-marked data is answered with NOTIFY for its path.
    b.at(3 * US);
    let marked = b.tagged(1, PHASE | EPOCH1 | 2, 2900, 800);
    b.w.pkts.get_mut(marked).flags |= flags::ECN;
    assert_eq!(b.at_destination(marked), Ingress::Forward(port));
    assert_eq!(b.sent(), vec![NOTIFY]);
    let notify = b
        .actions
        .iter()
        .find_map(|a| match a {
            SchemeAction::Originate { packet, switch } => Some((*packet, *switch)),
            _ => None,
        })
        .expect("a notify");
    let p = b.w.pkts.get(notify.0);
    assert_eq!(notify.1, DST_TOR);
    assert_eq!(p.dst, b.w.topo.switch_node(SRC_TOR));
    assert_eq!(p.scheme as u8, 2, "the marked packet's path");
}

#[test]
fn the_source_opens_epochs_and_switches_paths_on_a_late_reply() {
    let mut b = Bench::new();
    b.at(0);
    let (port, tag, aux) = b.at_source(5);
    assert_eq!(tag & (TAGGED | INIT | TAIL | PHASE), TAGGED | INIT);
    assert_eq!((tag >> 8) & 15, 1, "first epoch");
    assert_eq!(aux, 0, "sent at 0, no TAIL");
    let code = tag as u8;
    b.at(US);
    let (again, tag, _) = b.at_source(5);
    assert_eq!((again, tag), (port, TAGGED | EPOCH1 | code as u16));
    // Deadline: base RTT 4 µs + 4 µs; at the deadline the reply is not late yet.
    b.at(8 * US);
    assert_eq!(b.at_source(5).1 & (INIT | TAIL), 0);
    b.at(8 * US + NS);
    let (tail_port, tail, _) = b.at_source(5);
    assert_eq!(tail & (TAIL | PHASE), TAIL, "the TAIL is a phase-0 packet");
    assert_eq!(tail_port, port, "on the old path");
    assert_eq!(b.cw.counts.tails, 1);
    b.at(9 * US);
    let (_, after, aux) = b.at_source(5);
    assert_eq!(after & (PHASE | INIT | TAIL), PHASE);
    assert_eq!(after as u8, b.cw.src[5].code);
    assert_eq!(aux >> 32, 8001, "the TAIL's send time");
    // CLEAR of this epoch stabilises the flow: the next packet opens epoch 2.
    assert_eq!(b.control(5, CLEAR, 1, 0), Ingress::Consume);
    b.at(10 * US);
    let (_, tag, _) = b.at_source(5);
    assert_eq!(tag & (INIT | PHASE), INIT);
    assert_eq!((tag >> 8) & 15, 2);
    // A timely RTT_REPLY does the same; a reply of another epoch does nothing.
    b.at(11 * US);
    b.control(5, RTT_REPLY, 1, 0);
    assert!(!b.cw.src[5].stabilized);
    b.control(5, RTT_REPLY, 2, 0);
    assert!(b.cw.src[5].stabilized);
    b.at(12 * US);
    assert_eq!((b.at_source(5).1 >> 8) & 15, 3);
    // A gap over tx_expiry (300 µs) opens an epoch too.
    b.at(13 * US);
    assert_eq!(b.at_source(5).1 & INIT, 0);
    b.at(313 * US + NS);
    let (_, tag, _) = b.at_source(5);
    assert_eq!(tag & INIT, INIT);
    assert_eq!((tag >> 8) & 15, 4);
}

#[test]
fn notify_marks_a_path_bad_for_exactly_the_pause_time() {
    let mut b = Bench::new();
    let topo = &b.w.topo;
    let pair = b.cw.paths.pair(
        topo.edge_index[SRC_TOR as usize],
        topo.edge_index[DST_TOR as usize],
    );
    assert_eq!(b.cw.paths.count(pair), 3);
    let code = b.cw.paths.code(pair, 1);
    b.at(5 * US);
    assert_eq!(b.control(9, NOTIFY, 0, code), Ingress::Consume);
    let pause = 16 * US;
    assert!(b.cw.bad(pair, 1, 5 * US));
    assert!(b.cw.bad(pair, 1, 5 * US + pause - 1));
    assert!(!b.cw.bad(pair, 1, 5 * US + pause));
    assert!(!b.cw.bad(pair, 0, 5 * US) && !b.cw.bad(pair, 2, 5 * US));
    // While paths 0 and 1 are bad a new path is path 2 or none.
    b.control(9, NOTIFY, 0, b.cw.paths.code(pair, 0));
    let good = b.cw.paths.code(pair, 2);
    let mut found = 0;
    for _ in 0..100 {
        let mut ctx = SwitchCtx::new(&mut b.w, &mut b.rng, 64, &mut b.actions);
        if let Some(c) = b.cw.good_path(&mut ctx, pair) {
            assert_eq!(c, good);
            found += 1;
        }
    }
    assert!(found > 20, "{found}");
}

#[test]
fn epochs_compare_modulo_sixteen() {
    assert!(newer(1, 0) && newer(0, 15) && newer(7, 0));
    assert!(!newer(8, 0) && !newer(0, 1) && !newer(3, 3));
}

#[test]
fn presets_and_overrides() {
    assert_eq!(
        SwitchSpec::named("conweave"),
        Some(SwitchSpec::new(ConWeaveConfig::default()))
    );
    let spec: SwitchSpec = toml::from_str(
        "scheme = \"conweave\"\npreset = \"fat-tree-lossless\"\npath_pause_time = \"8us\"",
    )
    .unwrap();
    let Some(cfg) = spec.config::<ConWeaveConfig>().cloned() else {
        panic!("conweave");
    };
    let p = cfg.params();
    assert_eq!(p.extra_voq_flush_time, 64 * US);
    assert_eq!(p.default_voq_waiting_time, 600 * US);
    assert_eq!(p.path_pause_time, 8 * US);
    let laps = Preset::Laps.params();
    assert_eq!(
        (laps.tx_expiry, laps.extra_reply_deadline, laps.base_rtt),
        (10 * US, 80 * NS, BaseRtt::Host)
    );
    assert!(toml::from_str::<SwitchSpec>("scheme = \"conweave\"\npreset = \"x\"").is_err());
    let bad = ConWeaveConfig {
        aging: Some(TimeQ(US)),
        ..ConWeaveConfig::default()
    };
    assert!(bad
        .validate(&RunContext::new(4150, 64))
        .unwrap_err()
        .to_string()
        .starts_with("aging:"));
}
