//! Reunion's rules, one by one, on a small leaf-spine (4 leaves, 4 spines, 2 hosts per leaf).
use super::*;
use crate::engine::time::US;
use crate::engine::Rng;
use crate::lb::PathMove;
use crate::net::world::World;
use crate::net::{LeafSpineSpec, Packet, RunContext};
use crate::routing::{RoutingScheme, SchemeAction, SwitchSpec};
use crate::units::TimeQ;

/// The leaf-spine in the shared scheme-test world (Reunion reads no egress port), salt 7 at
/// every switch.
fn world() -> World {
    let mut w = crate::routing::test_world(&[], 7);
    w.topo = LeafSpineSpec::at_100g(4, 4, 2)
        .build()
        .expect("a valid fabric");
    w.salts = vec![7; w.topo.switches.len()];
    w
}

fn scheme(w: &World, tolerance: u32) -> Reunion {
    let setup = SchemeSetup {
        topology: &w.topo,
        salts: &w.salts,
        next_hops: crate::net::candidate_hops::NextHops::Shortest,
    };
    Reunion::new(
        &ReunionConfig {
            tolerance,
            ..ReunionConfig::default()
        },
        &setup,
    )
}

/// An elephant data packet of `flow` from host `src` to host `dst`, tagged with path `code`,
/// arriving at a switch on link `ingress`, marked with `mark` (0: unmarked).
fn elephant(flow: u32, src: u32, dst: u32, code: u8, ingress: u32, mark: u64) -> Packet {
    let mut p = Packet::blank(Kind::Data, 1000);
    p.flow = flow;
    p.src = src;
    p.dst = dst;
    p.ingress = ingress;
    p.scheme = TAGGED | ELEPHANT | code as u16;
    p.aux = mark;
    p
}

/// Runs one ingress; returns the decision and the packet after it.
fn ingress(r: &mut Reunion, w: &mut World, switch: u32, p: Packet) -> (Ingress, Packet) {
    let cands: Vec<u32> = if p.dst < w.topo.hosts {
        w.topo.candidates_to_host(switch, p.dst).to_vec()
    } else {
        Vec::new()
    };
    let h = w.pkts.alloc(p);
    let mut rng = Rng::new(1);
    let mut actions = Vec::new();
    let mut ctx = SwitchCtx::new(w, &mut rng, 64, &mut actions);
    let d = r.ingress(&mut ctx, switch, h, &cands);
    (d, *w.pkts.get(h))
}

/// Ends interval `k` at every switch (now).
fn end_everywhere(r: &mut Reunion, ctx: &mut SwitchCtx, k: u64) {
    for switch in 0..ctx.topology().switches.len() as u32 {
        r.end_interval(ctx, switch, k);
    }
}

/// A link from node `from` to node `to`.
fn link(w: &World, from: u32, to: u32) -> u32 {
    (0..w.topo.links.len() as u32)
        .find(|&l| w.topo.links[l as usize].from == from && w.topo.links[l as usize].to == to)
        .expect("a link")
}

fn leaf(w: &World, i: u32) -> u32 {
    w.topo.edges[i as usize]
}

/// The link from the first spine down to switch `to`.
fn from_spine0(w: &World, to: u32) -> u32 {
    link(
        w,
        w.topo.switch_node(spine_switch(w, 0)),
        w.topo.switch_node(to),
    )
}

fn spine_switch(w: &World, i: u32) -> u32 {
    (0..w.topo.switches.len() as u32)
        .filter(|&s| w.topo.switches[s as usize].level == 2)
        .nth(i as usize)
        .expect("a spine")
}

#[test]
fn a_switch_marks_only_the_first_bottleneck() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    let spine = spine_switch(&w, 0);
    let (l0, l1, l2) = (leaf(&w, 0), leaf(&w, 1), leaf(&w, 2));
    let into_spine = link(&w, w.topo.switch_node(l0), w.topo.switch_node(spine));
    // Hosts 0 (leaf 0) and 4 (leaf 2) send to host 2 (leaf 1) through the spine.
    let down = link(&w, w.topo.switch_node(spine), w.topo.switch_node(l1));
    let from_leaf2 = link(&w, w.topo.switch_node(l2), w.topo.switch_node(spine));
    // One elephant on the downlink: at t = 1, no mark.
    let (d, p) = ingress(&mut r, &mut w, spine, elephant(1, 0, 2, 0, into_spine, 0));
    assert_eq!(d, Ingress::Forward(down));
    assert_eq!(p.aux, 0, "one elephant is within the tolerance");
    // A second elephant on the same port: both are marked from now on.
    let (_, p) = ingress(&mut r, &mut w, spine, elephant(2, 4, 2, 0, from_leaf2, 0));
    assert_eq!(p.aux, down as u64 + 1, "two elephants exceed t = 1");
    let (_, p) = ingress(&mut r, &mut w, spine, elephant(1, 0, 2, 0, into_spine, 0));
    assert_eq!(p.aux, down as u64 + 1);
    // A packet marked at an earlier hop keeps that mark.
    let earlier = into_spine as u64 + 1;
    let (_, p) = ingress(
        &mut r,
        &mut w,
        spine,
        elephant(1, 0, 2, 0, into_spine, earlier),
    );
    assert_eq!(p.aux, earlier, "never overwrite an earlier mark");
    // Mice are neither counted nor marked.
    let mut mouse = elephant(3, 1, 3, 0, into_spine, 0);
    mouse.scheme = TAGGED;
    let (_, p) = ingress(&mut r, &mut w, spine, mouse);
    assert_eq!(p.aux, 0);
    // At t = 2 the same two elephants are within the tolerance, even after a mouse on the
    // port (counted, it would make three).
    let mut r2 = scheme(&w, 2);
    let (_, p) = ingress(&mut r2, &mut w, spine, mouse);
    assert_eq!(p.aux, 0);
    for flow in [1, 2] {
        let (_, p) = ingress(
            &mut r2,
            &mut w,
            spine,
            elephant(flow, 0, 2, 0, into_spine, 0),
        );
        assert_eq!(p.aux, 0);
    }
}

#[test]
fn the_destination_notifies_one_source_per_marked_link_per_interval() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    let l1 = leaf(&w, 1);
    // Packets arrive at leaf 1 (hosts 2, 3) from spines; what matters is their marks.
    let spine_in = from_spine0(&w, l1);
    let (mark_a, mark_b) = (11u64, 22u64);
    let mut flows_on = [Vec::new(), Vec::new()];
    for round in 0..20u32 {
        // Flows 0..6 from hosts on leaves 0, 2, 3; marks on two links.
        for flow in 0..6u32 {
            let src = [0u32, 1, 4, 5, 6, 7][flow as usize];
            let mark = if flow < 3 { mark_a } else { mark_b };
            flows_on[(flow >= 3) as usize].push(flow);
            let p = elephant(flow, src, 2 + flow % 2, (flow % 4) as u8, spine_in, mark);
            w.now = round as u64 * US;
            let (d, _) = ingress(&mut r, &mut w, l1, p);
            let dst = 2 + flow % 2;
            assert_eq!(d, Ingress::Forward(w.topo.candidates_to_host(l1, dst)[0]));
        }
    }
    let mut rng = Rng::new(3);
    let mut actions = Vec::new();
    w.now = r.interval;
    let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
    end_everywhere(&mut r, &mut ctx, 0);
    let sent: Vec<(Packet, Vec<u32>)> = actions
        .iter()
        .filter_map(|a| match a {
            SchemeAction::Originate { switch, packet } => {
                assert_eq!(*switch, l1, "sent by the destination ToR");
                Some((*w.pkts.get(*packet), w.payloads[packet].clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 2, "one notification per marked link");
    let mut links: Vec<u32> = sent.iter().map(|(_, words)| words[0]).collect();
    links.sort_unstable();
    assert_eq!(links, vec![mark_a as u32 - 1, mark_b as u32 - 1]);
    for (p, words) in &sent {
        assert_eq!(p.kind, Kind::Notify);
        let on = (words[0] + 1) as u64 == mark_b;
        assert!(
            flows_on[on as usize].contains(&p.flow),
            "a flow seen on that link"
        );
        // Addressed to the flow's source ToR.
        let src = [0u32, 1, 4, 5, 6, 7][p.flow as usize];
        assert_eq!(p.dst, w.topo.switch_node(w.topo.host_edge[src as usize]));
        assert_eq!(
            p.size,
            64 + 4 * words.len() as u32,
            "header plus 4 B per link"
        );
    }
    // The tables were cleared: an interval without marks notifies nobody.
    let mut actions = Vec::new();
    w.now = 2 * r.interval;
    let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
    end_everywhere(&mut r, &mut ctx, 1);
    assert!(actions.is_empty(), "{actions:?}");
}

#[test]
fn the_marked_flow_is_drawn_at_random_among_the_links_flows() {
    // Over many intervals, each of three flows marked on one link gets notified.
    let mut w = world();
    let mut r = scheme(&w, 1);
    let l1 = leaf(&w, 1);
    let spine_in = from_spine0(&w, l1);
    let mut chosen = [0u32; 3];
    let mut rng = Rng::new(9);
    for k in 0..60u64 {
        for flow in 0..3u32 {
            w.now = k * r.interval + flow as u64;
            let p = elephant(flow, [0u32, 4, 6][flow as usize], 2, 0, spine_in, 5);
            let h = w.pkts.alloc(p);
            let mut actions = Vec::new();
            let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
            r.at_destination(&mut ctx, l1, h);
        }
        let mut actions = Vec::new();
        w.now = (k + 1) * r.interval;
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        end_everywhere(&mut r, &mut ctx, k);
        let [SchemeAction::Originate { packet, .. }] = actions[..] else {
            panic!("one notification: {actions:?}");
        };
        chosen[w.pkts.get(packet).flow as usize] += 1;
    }
    assert!(chosen.iter().all(|&c| c >= 8), "not random: {chosen:?}");
}

/// Registers `flows` (id, source host, destination host, path index) as elephants at their
/// source ToR in interval 0.
fn sources(r: &mut Reunion, w: &World, flows: &[(u32, u32, u32, u32)]) {
    for &(id, src, dst, index) in flows {
        let src_edge = edge_of_host(&w.topo, src);
        let pair = r.paths.pair(src_edge, edge_of_host(&w.topo, dst));
        let code = r.paths.code(pair, index);
        let st = r.flow(id);
        *st = FlowState {
            registered: true,
            src_edge,
            pair,
            code,
            hot: 0,
            last: 0,
            ..NEW_FLOW
        };
        r.tors[src_edge as usize].flows.push(id);
    }
}

#[test]
fn rerouting_avoids_loaded_and_named_links_and_moves_a_flow_once() {
    let mut w = world();
    let mut rng = Rng::new(77);
    // Random cases: elephants from leaf 0 to leaves 1-3 on random paths, random notified
    // flows (with repeats) and random named links; every reroute must land on a path whose
    // links all carried fewer than t elephants at that point (an independent replay of the
    // Link Table checks it) and no flow may move twice.
    let mut moved_total = 0;
    for case in 0..300 {
        let t = 1 + case % 2;
        let mut r = scheme(&w, t);
        let n = 1 + rng.below(6);
        let flows: Vec<(u32, u32, u32, u32)> = (0..n)
            .map(|i| (i, i % 2, 2 + rng.below(6), rng.below(4)))
            .collect();
        sources(&mut r, &w, &flows);
        let mut named = Vec::new();
        let mut fresh = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let flow = rng.below(n);
            // Mostly a link of the flow's path (as marked packets name it); sometimes any
            // link: unless the flow crosses it, the notification is stale and ignored.
            let st = r.flows[flow as usize];
            let path: Vec<u32> = r.links(st.pair, r.paths.index(st.pair, st.code)).collect();
            let bottleneck = if rng.below(4) == 0 {
                rng.below(w.topo.links.len() as u32)
            } else {
                path[rng.below(path.len() as u32) as usize]
            };
            if path.contains(&bottleneck) {
                fresh.push(flow);
            }
            named.push(bottleneck);
            r.tors[0].pending.push(Pending { flow, bottleneck });
            r.tors[0].blocked.push(bottleneck);
            if rng.coin() {
                let extra = rng.below(w.topo.links.len() as u32);
                r.tors[0].blocked.push(extra);
                named.push(extra);
            }
        }
        // The replayed Link Table before rerouting.
        let mut table = vec![0u32; w.topo.links.len()];
        for &(id, ..) in &flows {
            let st = r.flows[id as usize];
            for l in r.links(st.pair, r.paths.index(st.pair, st.code)) {
                table[l as usize] += 1;
            }
        }
        for &l in &named {
            table[l as usize] = u32::MAX;
        }
        let mut actions = Vec::new();
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        r.reroute(&mut ctx, 0, 0);
        let mut moved = Vec::new();
        for a in &actions {
            let SchemeAction::Record { flow, event } = *a else {
                panic!("only records: {a:?}");
            };
            let Some(PathMove { old, new, reason }) = event.path else {
                panic!("a path change");
            };
            assert_eq!(event.name, "rerouted");
            assert_eq!(reason, "collision");
            assert!(
                !moved.contains(&flow),
                "case {case}: flow {flow} moved twice"
            );
            moved.push(flow);
            let st = r.flows[flow as usize];
            assert!(
                fresh.contains(&flow),
                "case {case}: flow {flow} moved on a stale notification"
            );
            assert_ne!(old, new);
            assert_eq!(r.paths.index(st.pair, st.code), new as u32);
            let links: Vec<u32> = r.links(st.pair, new as u32).collect();
            assert!(
                links.iter().all(|&l| table[l as usize] < t),
                "case {case}: flow {flow} onto a loaded or named link"
            );
            for l in links {
                table[l as usize] += 1;
            }
        }
        moved_total += moved.len();
        assert!(r.tors[0].pending.is_empty() && r.tors[0].blocked.is_empty());
        assert!(r.table.iter().all(|&c| c == 0), "scratch table cleared");
    }
    assert!(
        moved_total > 50,
        "the cases should move flows: {moved_total}"
    );
}

#[test]
fn a_flow_without_a_free_path_stays() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    // Four elephants from leaf 0 to leaf 1, one per spine: every uplink carries one.
    let flows: Vec<(u32, u32, u32, u32)> = (0..4).map(|i| (i, i % 2, 2 + i % 2, i)).collect();
    sources(&mut r, &w, &flows);
    let bottleneck = r.links(r.flows[0].pair, 0).next().unwrap();
    r.tors[0].pending.push(Pending {
        flow: 0,
        bottleneck,
    });
    let mut rng = Rng::new(1);
    let mut actions = Vec::new();
    let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
    r.reroute(&mut ctx, 0, 0);
    assert!(actions.is_empty());
    assert_eq!(r.counts.reroute_failed, 1);
    assert_eq!(r.paths.index(r.flows[0].pair, r.flows[0].code), 0);
}

#[test]
fn the_source_tor_detects_elephants_and_tags_packets() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    let l0 = leaf(&w, 0);
    let nic = w.topo.host_uplink[0];
    let mut p = Packet::blank(Kind::Data, 1000);
    p.src = 0;
    p.dst = 4;
    p.ingress = nic;
    p.flow = 9;
    let mut elephant_at = None;
    for i in 0..2000u64 {
        w.now = i * 80_000; // 1000 B at 100 Gb/s
        let (d, q) = ingress(&mut r, &mut w, l0, p);
        let Ingress::Forward(port) = d else {
            panic!("forwarded");
        };
        assert_ne!(q.scheme & TAGGED, 0);
        let pair = r.paths.pair(0, 2);
        let expect = follow(q.scheme as u8, 1, w.topo.candidates_to_host(l0, 4));
        assert_eq!(port, expect, "the packet follows its code");
        assert_eq!(
            r.paths.index(pair, q.scheme as u8),
            r.paths.index(pair, r.flows[9].code)
        );
        if q.scheme & ELEPHANT != 0 && elephant_at.is_none() {
            elephant_at = Some(i);
        }
    }
    // 10 Gb/s x 1 ms = 1.25 MB floor: the 1250th packet makes it an elephant.
    assert_eq!(elephant_at, Some(1249));
    assert!(
        r.clocks[l0 as usize].armed_for != NEVER,
        "the source ToR's interval timer runs"
    );
}

#[test]
fn parses_by_name_and_as_a_table() {
    assert_eq!(
        SwitchSpec::named("reunion"),
        Some(SwitchSpec::new(ReunionConfig::default()))
    );
    let spec: SwitchSpec =
        toml::from_str("scheme = \"reunion\"\ninterval = \"250us\"\ntolerance = 2").unwrap();
    let Some(cfg) = spec.config::<ReunionConfig>().cloned() else {
        panic!("reunion");
    };
    assert_eq!((cfg.interval, cfg.tolerance), (TimeQ(250 * US), 2));
    assert!(toml::from_str::<SwitchSpec>("scheme = \"reunion\"\nt = 2").is_err());
    let bad = |c: ReunionConfig| c.validate(&RunContext::new(4150, 64)).unwrap_err();
    assert!(bad(ReunionConfig {
        tolerance: 0,
        ..ReunionConfig::default()
    })
    .to_string()
    .starts_with("tolerance:"));
    assert!(bad(ReunionConfig {
        sketch_seeds: vec![1, 2],
        ..ReunionConfig::default()
    })
    .to_string()
    .starts_with("sketch_seeds:"));
    assert!(bad(ReunionConfig {
        interval: TimeQ(0),
        ..ReunionConfig::default()
    })
    .to_string()
    .starts_with("interval:"));
}

/// A notification for `flow` naming `bottleneck`, addressed to source ToR `edge`, arriving
/// there (its words attached as the destination ToR attaches them).
fn notify(r: &mut Reunion, w: &mut World, edge: u32, flow: u32, bottleneck: u32) -> Ingress {
    let switch = leaf(w, edge);
    let mut p = Packet::blank(Kind::Notify, 68);
    p.dst = w.topo.switch_node(switch);
    p.flow = flow;
    p.scheme = TAGGED;
    let h = w.pkts.alloc(p);
    w.attach_payload(h, vec![bottleneck]);
    let mut rng = Rng::new(1);
    let mut actions = Vec::new();
    let mut ctx = SwitchCtx::new(w, &mut rng, 64, &mut actions);
    let d = r.ingress(&mut ctx, switch, h, &[]);
    assert!(w.payloads.is_empty(), "the scheme took the words");
    d
}

#[test]
fn a_notification_moves_its_flow_on_arrival_and_a_stale_one_does_not() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    // Flows 0 and 1 from leaf 0 to leaf 1, both on path 0: a collision on its uplink.
    sources(&mut r, &w, &[(0, 0, 2, 0), (1, 1, 3, 0)]);
    let pair = r.flows[0].pair;
    let uplink = r.links(pair, 0).next().expect("a link");
    let index = |r: &Reunion, f: usize| r.paths.index(pair, r.flows[f].code);
    // The notification about interval 0 arrives early in interval 1: the flow moves at once,
    // to the first path free of elephants.
    w.now = r.interval + 5 * US;
    let d = notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(d, Ingress::Consume);
    assert_eq!(index(&r, 1), 1, "moved on arrival");
    assert_eq!(r.counts.reroutes, 1);
    // A second one for flow 1 in the same interval: a flow moves at most once per interval.
    notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(index(&r, 1), 1);
    // Flow 0 named for the same interval: path 1 now carries flow 1 (and path 0 still counts
    // flow 1 for this interval), so it takes path 2.
    notify(&mut r, &mut w, 0, 0, uplink);
    assert_eq!(index(&r, 0), 2);
    assert_eq!(r.counts.reroutes, 2);
    // In the next interval, one naming the old uplink again (its marked packets were still
    // queued) is stale: flow 1 no longer crosses it.
    r.flows[0].hot = 1;
    r.flows[1].hot = 1;
    w.now = 2 * r.interval + 5 * US;
    notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(index(&r, 1), 1, "a stale notification moves nothing");
    assert_eq!(r.counts.stale, 1);
    assert_eq!(r.counts.reroutes, 2);
}

#[test]
fn acting_at_the_interval_end_waits_for_it() {
    let mut w = world();
    let setup = SchemeSetup {
        topology: &w.topo,
        salts: &w.salts,
        next_hops: crate::net::candidate_hops::NextHops::Shortest,
    };
    let mut r = Reunion::new(
        &ReunionConfig {
            act_on: ActOn::IntervalEnd,
            ..ReunionConfig::default()
        },
        &setup,
    );
    sources(&mut r, &w, &[(0, 0, 2, 0), (1, 1, 3, 0)]);
    let pair = r.flows[0].pair;
    let uplink = r.links(pair, 0).next().expect("a link");
    w.now = r.interval + 5 * US;
    notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(
        r.paths.index(pair, r.flows[1].code),
        0,
        "not before the interval ends"
    );
    // Both flows sent elephant packets in interval 1 too.
    r.flows[0].hot = 1;
    r.flows[1].hot = 1;
    let mut rng = Rng::new(1);
    let mut actions = Vec::new();
    w.now = 2 * r.interval;
    let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
    end_everywhere(&mut r, &mut ctx, 1);
    assert_eq!(
        r.paths.index(pair, r.flows[1].code),
        1,
        "moved at the interval's end"
    );
}

#[test]
fn act_on_parses() {
    let c: ReunionConfig = toml::from_str("act_on = \"interval-end\"").expect("parses");
    assert_eq!(c.act_on, ActOn::IntervalEnd);
    assert_eq!(ReunionConfig::default().act_on, ActOn::Arrival);
}

#[test]
fn a_path_freed_by_a_finished_flow_is_reused() {
    let mut w = world();
    let mut r = scheme(&w, 1);
    // Flow 0 ran on path 1 and finished in interval 0; flows 1 and 2 share path 0 in
    // interval 2 (the paper's Fig. 10 discussion: idle paths of completed flows are reused).
    sources(&mut r, &w, &[(0, 0, 2, 1), (1, 0, 2, 0), (2, 1, 3, 0)]);
    r.flows[1].hot = 2;
    r.flows[2].hot = 2;
    let pair = r.flows[1].pair;
    let uplink = r.links(pair, 0).next().expect("a link");
    w.now = 3 * r.interval + 5 * US;
    notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(
        r.paths.index(pair, r.flows[1].code),
        1,
        "onto the finished flow's path"
    );
    // While flow 0 still sends elephant packets, its path is taken.
    let mut r = scheme(&w, 1);
    sources(&mut r, &w, &[(0, 0, 2, 1), (1, 0, 2, 0), (2, 1, 3, 0)]);
    for f in 0..3 {
        r.flows[f].hot = 2;
    }
    notify(&mut r, &mut w, 0, 1, uplink);
    assert_eq!(r.paths.index(pair, r.flows[1].code), 2);
}

#[test]
fn a_tor_back_from_idle_intervals_applies_their_ends_as_a_running_timer_would() {
    let mut w = world();
    let l0 = leaf(&w, 0);
    let mut p = Packet::blank(Kind::Data, 1000);
    p.src = 0;
    p.dst = 4;
    p.ingress = w.topo.host_uplink[0];
    p.flow = 9;
    // Both see an elephant in interval 0. `running` then ends every interval to 5, as a timer
    // that never stops would; `idle` has only its own timer, which stops after interval 1.
    let mut running = scheme(&w, 1);
    let mut idle = scheme(&w, 1);
    for i in 0..1500u64 {
        w.now = i * 80_000;
        ingress(&mut running, &mut w, l0, p);
        ingress(&mut idle, &mut w, l0, p);
    }
    let mut rng = Rng::new(1);
    let mut actions = Vec::new();
    for k in 0..6 {
        w.now = (k + 1) * running.interval;
        let mut ctx = SwitchCtx::new(&mut w, &mut rng, 64, &mut actions);
        running.end_interval(&mut ctx, l0, k);
        let clock = idle.clocks[l0 as usize];
        if clock.armed_for == k {
            let timer = SchemeTimer {
                kind: INTERVAL_TIMER,
                gen: clock.slot.gen,
                id: l0,
            };
            idle.on_timer(&mut ctx, timer);
        }
    }
    assert_eq!(
        idle.clocks[l0 as usize].armed_for, NEVER,
        "the timer stopped"
    );
    assert_eq!(idle.tors[0].ended, 1);
    assert_ne!(idle.tors[0].sketch, running.tors[0].sketch);
    // A packet in interval 6: `idle` applies the ends of intervals 2 to 5 first.
    w.now = 6 * running.interval + 1;
    ingress(&mut running, &mut w, l0, p);
    ingress(&mut idle, &mut w, l0, p);
    assert_eq!(idle.tors[0].ended, 5);
    assert_eq!(idle.tors[0].sketch, running.tors[0].sketch);
    assert_eq!(idle.tors[0].flows, running.tors[0].flows);
    assert_eq!(idle.flows[9].code, running.flows[9].code);
    assert_eq!(idle.flows[9].hot, running.flows[9].hot);
}
