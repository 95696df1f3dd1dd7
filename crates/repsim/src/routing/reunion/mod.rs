//! Reunion (Computer Networks 2025, "Reunion: receiver-driven elephant rerouting"): the source
//! ToR finds elephants with a Count-Min Sketch and pins each to a ToR-to-ToR path; every switch
//! counts the elephants on its egress ports and marks the first link with more than `t` of
//! them into the packet; the destination ToR collects, per interval `s`, the elephants on each
//! link of its incoming paths and the marked links, and at the interval's end tells one
//! source ToR per marked link to move one elephant; the source moves it, as the notification
//! arrives (closing the interval it describes), to the first path none of whose links has `t`
//! or more elephants
//! (Algorithms 1 and 2 of the paper). There is no public code of Reunion: this file is the
//! reference, and the choices below are ours where the paper leaves them open.
//!
//! Header and paths:
//! - The PathID is the one-byte ToR-to-ToR path code of [`super::tor_paths`] (8 bits, as the
//!   paper's BTH field; a leaf-spine has at most 256 paths per ToR pair). Paths of a pair are
//!   numbered by their index, first-hop choice fastest; `old_path`/`new_path` in
//!   `lb_events.csv` are these indices. The switches after the source ToR follow the code.
//! - The Reunion header lives in the packet's scheme bytes: the elephant bit in
//!   `Packet::scheme`, the first bottleneck link in `Packet::aux` (its link id plus one; 0 =
//!   none). The paper writes the link as two switch ids; a link id carries the same and also
//!   tells parallel links apart. The header adds no bytes to the packet's size.
//!
//! Decisions the paper leaves open (it has no public implementation to settle them):
//! - Sketch (source ToR only, data packets only): counts bytes per 5-tuple (sender, receiver,
//!   connection), `sketch_width` x `sketch_depth` counters (2,000 x 7, the paper's example) of
//!   `counter_bits` bits (saturating), row seeds from the scenario seed (through the switch's
//!   salt) unless `sketch_seeds` gives them. At the end of every interval every counter is
//!   halved (not zeroed: an elephant stays an elephant at the start of the next interval).
//! - Elephant: among the `t x uplinks` hottest flows of the source ToR's top-k table (the
//!   paper's rule) *and* an estimate of at least `elephant_rate` x `s` (10 Gb/s: 1.25 MB per
//!   1000 us; without a floor a ToR with few flows would call every mouse an elephant). With
//!   halving, a flow sending steadily at rate r settles at an estimate of 2 r s, so flows
//!   above half the floor rate stay elephants; halving drops a finished flow out.
//! - "Elephants on a link": distinct elephant flows whose packets a switch sent on the port in
//!   the current interval (counted at ingress, when the port is chosen; source ToR and fabric
//!   switches, not the destination ToR's host ports). A switch marks when the count exceeds
//!   `t`, and never over an earlier mark.
//! - High utilisation (destination): links whose elephant count in the destination's Link
//!   Table is *at least* `t` (Section 3.4's text; Algorithm 1 writes "more than t", which
//!   would let Algorithm 2 pick a path that already carries `t` elephants when t = 1). The
//!   destination counts each elephant flow seen in the interval once, on the path its last
//!   packet carried. A notification lists only the high-utilisation links that lie on the
//!   notified source's own paths to this destination (the others cannot matter to it).
//! - Which source: per marked link, the flow of one marked packet drawn uniformly at random
//!   among the interval's marked packets on that link (reservoir sampling with the scheme's
//!   random stream; the paper argues the last packet is as good as random). One notification
//!   per marked link; the same flow may be drawn for two links.
//! - Notifications: `Kind::Notify` packets from the destination ToR to the source ToR, header
//!   lane (the control class, like ACKs and PFC frames), routed by ECMP over shortest paths;
//!   64 B (or the header size if larger) plus 4 B per link carried (the bottleneck and each
//!   high-utilisation link as two 2-byte switch ids). The list travels as the packet's
//!   payload words ([`SwitchCtx::attach_payload`]): the bottleneck's link id, then the
//!   others'.
//! - Rerouting (source): Algorithm 2 over the source's Link Table (its own flows that sent
//!   elephant packets in the interval the notification describes or since, on their paths,
//!   plus every link the notification named set to infinity); paths other than the flow's own
//!   are tried in index order, the first with every link below `t` wins (Algorithm 2 as
//!   printed has no `break` and would end on the last free path; the text says "an available
//!   path"; a random free path was tried and did no better: at 90 % load with 200 MB flows,
//!   max FCT 60.7 ms against 59.6) and its links count one more; a flow moves at most once per
//!   interval; a moved flow's old path still counts for that interval (as in the paper). No
//!   free path: the flow stays (`reroute_failed`).
//! - Stale notifications: a flow whose current path no longer crosses the notification's
//!   bottleneck link is not moved (`stale_notifications`). The notification names the link
//!   "where the hash collision occurred for this flow" (Section 3.5); a flow moved since then
//!   (by an earlier notification; its marked packets were still queued on the old path) has
//!   left that collision, and moving it again only reorders it.
//! - Intervals are aligned to multiples of `s` on the simulation clock at every switch (the
//!   paper does not say whether switches' intervals are synchronised; aligned is what a
//!   simulator's periodic timer gives). Each switch keeps its own interval timer (its state is
//!   its own: a run split over threads holds each switch where its partition runs), armed
//!   while the switch sees data or notifications and for one interval after. A ToR that saw
//!   nothing for some intervals applies their ends (the sketch's halvings, the idle flows'
//!   pruning) when it next sees something, as if its timer had run all along. The
//!   `intervals` count is the interval ends switches processed, summed over switches.
//! - When the source acts (`act_on`): by default as a notification arrives, a few
//!   microseconds after the interval it describes ended; Section 3.6 has the source act "when
//!   the statistical interval ends", and the interval whose statistics the notification
//!   carries is the one that just ended. Taken as the source's *next* interval end
//!   (`act_on = "interval-end"`; with aligned intervals always one whole interval later), the
//!   destination's next notification is computed before the first move has happened, so a
//!   collision is answered twice and the paper's herd argument ("each destination switch only
//!   selects one source switch to notify about a congested hop") fails: measured on
//!   `reunion-load` (200 MB flows), a second flow (or the same one again) moved for the same
//!   collision, two sources chasing each other between two spines every other interval, and
//!   the 40 % load tail 41.4 ms against 31.4 ms on arrival (90 %: 59.6 against 56.2 ms).
//! - Mice (not elephants): LetFlow-style flowlets at the source ToR with `flowlet` (500 us),
//!   the paper's fallback; a new flow starts on its ECMP-hashed path. Elephants change path
//!   only by Algorithm 2. ACKs, NACKs, other packets and traffic classes exempt from switch
//!   rerouting (`flags::SWITCH_EXEMPT`) are hashed as ECMP does.
use super::tor_paths::{edge_of_host, follow, from_host, TorPaths};
use super::{
    ecmp, Ingress, LinkSample, SchemeSetup, SchemeTimer, SwitchCtx, SwitchScheme, TimerSlot,
};
use crate::engine::{Handle, Time};
use crate::net::hash::ecmp_hash;
use crate::net::packet::{flags, NO_ROUTE};
use crate::net::{Kind, Topology};

mod config;
mod interval;
pub mod sketch;
#[cfg(test)]
mod tests;

pub use config::{ActOn, ReunionConfig};
use sketch::CountMinSketch;

/// `Packet::scheme` bit: the packet carries a path code in its low byte.
const TAGGED: u16 = 0x8000;
/// `Packet::scheme` bit: the source ToR classified the packet's flow as an elephant.
const ELEPHANT: u16 = 0x4000;
/// Links a path may cross (a 3-tier Clos path has 4).
const MAX_HOPS: usize = 6;
/// A missing link in the path table.
const NO_LINK: u32 = u32::MAX;
/// Elephant flows a port remembers per interval; counts saturate here.
const TRACKED: usize = 16;
/// Timer kind: the end of an interval.
const INTERVAL_TIMER: u8 = 1;
/// "Never" for interval indices.
const NEVER: u64 = u64::MAX;

/// One flow as the scheme knows it: at its source ToR and at its destination ToR.
#[derive(Clone, Copy, Debug)]
struct FlowState {
    /// Seen at its source ToR (registered in that ToR's list).
    registered: bool,
    /// Edge index of the source ToR.
    src_edge: u32,
    /// ToR pair.
    pair: u32,
    /// Current path code at the source.
    code: u8,
    /// Path code before its latest reroute (still counted in that interval's Link Table).
    prev_code: u8,
    /// Interval of its latest elephant packet at the source.
    hot: u64,
    /// Its last data packet at the source (its interval is `last / s`).
    last: Time,
    /// Interval it was last rerouted in.
    rerouted: u64,
    /// At the destination: the source ToR (edge index), pair and path code of its last
    /// elephant packet.
    dst_from: u32,
    dst_pair: u32,
    dst_code: u8,
    /// At the destination: interval of its last elephant packet.
    dst_seen: u64,
}

const NEW_FLOW: FlowState = FlowState {
    registered: false,
    src_edge: 0,
    pair: 0,
    code: 0,
    prev_code: 0,
    hot: NEVER,
    last: 0,
    rerouted: NEVER,
    dst_from: 0,
    dst_pair: 0,
    dst_code: 0,
    dst_seen: NEVER,
};

/// The elephants one egress port sent in the current interval.
#[derive(Clone, Copy, Debug)]
struct PortElephants {
    interval: u64,
    count: u8,
    flows: [u32; TRACKED],
}

/// A notification a source ToR received and will act on at the interval's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    flow: u32,
    bottleneck: u32,
}

/// A marked link at a destination ToR: the flow drawn for it and the marked packets seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bottleneck {
    link: u32,
    flow: u32,
    packets: u32,
}

/// Per edge switch: its source-side and destination-side tables.
#[derive(Clone, Debug)]
struct Tor {
    sketch: CountMinSketch,
    /// Flows this ToR sources (pruned when idle).
    flows: Vec<u32>,
    /// Notifications received this interval.
    pending: Vec<Pending>,
    /// Links notifications named this interval (infinite in the Link Table).
    blocked: Vec<u32>,
    /// Elephant flows that arrived here this interval (each once).
    arrived: Vec<u32>,
    /// Bottleneck Link Table of this interval.
    bottlenecks: Vec<Bottleneck>,
    /// The latest interval whose end this ToR has applied ([`NEVER`]: none yet).
    ended: u64,
}

/// One switch's interval timer.
#[derive(Clone, Copy, Debug)]
struct Clock {
    slot: TimerSlot,
    /// Interval the armed timer ends ([`NEVER`]: not armed).
    armed_for: u64,
    /// Data or a notification seen in the interval the timer ends.
    active: bool,
}

/// Counts kept for outputs.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    intervals: u64,
    notifications: u64,
    notification_bytes: u64,
    reroutes: u64,
    reroute_failed: u64,
    stale: u64,
    marked: u64,
    flowlets: u64,
    max_elephants: u64,
}

/// Reunion switches.
pub struct Reunion {
    interval: Time,
    act_on: ActOn,
    tolerance: u32,
    elephant_bytes: u32,
    flowlet: Time,
    salts: Vec<u32>,
    paths: TorPaths,
    /// `MAX_HOPS` links per path slot of `paths`.
    path_links: Vec<u32>,
    flows: Vec<FlowState>,
    ports: Vec<PortElephants>,
    tors: Vec<Tor>,
    /// Per-link scratch counts of a Link Table (zero between uses).
    table: Vec<u32>,
    touched: Vec<u32>,
    /// Per switch.
    clocks: Vec<Clock>,
    /// In time order, then link order.
    samples: Vec<LinkSample>,
    counts: Counts,
}

impl Reunion {
    fn new(cfg: &ReunionConfig, setup: &SchemeSetup) -> Self {
        let topo = setup.topology;
        let paths = TorPaths::new(topo);
        let path_links = path_links(topo, &paths);
        let depth = cfg.sketch_depth as usize;
        let tors = topo
            .edges
            .iter()
            .map(|&s| {
                let seeds: Vec<u32> = if cfg.sketch_seeds.is_empty() {
                    let salt = setup.salts.get(s as usize).copied().unwrap_or(s);
                    (0..depth as u32)
                        .map(|row| ecmp_hash(salt, row, 0x5ee0_d5e1))
                        .collect()
                } else {
                    cfg.sketch_seeds.clone()
                };
                let uplinks = topo
                    .out_of(topo.switch_node(s))
                    .iter()
                    .filter(|&&l| topo.links[l as usize].to >= topo.hosts)
                    .count();
                let k = cfg.tolerance as usize * uplinks.max(1);
                Tor {
                    sketch: CountMinSketch::new(cfg.sketch_width, &seeds, cfg.counter_bits, k),
                    flows: Vec::new(),
                    pending: Vec::new(),
                    blocked: Vec::new(),
                    arrived: Vec::new(),
                    bottlenecks: Vec::new(),
                    ended: NEVER,
                }
            })
            .collect();
        let elephant_bytes = cfg.floor_bytes().min(u32::MAX as u64) as u32;
        Reunion {
            interval: cfg.interval.0,
            act_on: cfg.act_on,
            tolerance: cfg.tolerance,
            elephant_bytes,
            flowlet: cfg.flowlet.0,
            salts: setup.salts.to_vec(),
            paths,
            path_links,
            flows: Vec::new(),
            ports: vec![
                PortElephants {
                    interval: NEVER,
                    count: 0,
                    flows: [0; TRACKED],
                };
                topo.links.len()
            ],
            tors,
            table: vec![0; topo.links.len()],
            touched: Vec::new(),
            clocks: vec![
                Clock {
                    slot: TimerSlot::default(),
                    armed_for: NEVER,
                    active: false,
                };
                topo.switches.len()
            ],
            samples: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// The links of path `index` of `pair`.
    fn links(&self, pair: u32, index: u32) -> impl Iterator<Item = u32> + '_ {
        let at = self.paths.slot(pair, index) * MAX_HOPS;
        self.path_links[at..at + MAX_HOPS]
            .iter()
            .copied()
            .take_while(|&l| l != NO_LINK)
    }

    fn flow(&mut self, flow: u32) -> &mut FlowState {
        let i = flow as usize;
        if i >= self.flows.len() {
            self.flows.resize(i + 1, NEW_FLOW);
        }
        &mut self.flows[i]
    }

    /// Marks `switch` active in the current interval and arms its interval timer for the
    /// interval's end if it is not armed; a ToR first applies the ends of the intervals it
    /// sat out.
    #[inline]
    fn keep_time(&mut self, ctx: &mut SwitchCtx, switch: u32) {
        let clock = &mut self.clocks[switch as usize];
        clock.active = true;
        if clock.armed_for == NEVER {
            let k = ctx.now() / self.interval;
            clock.armed_for = k;
            let timer = clock.slot.arm(INTERVAL_TIMER, switch);
            ctx.set_timer((k + 1) * self.interval, timer);
            if let Some(edge) = self.edge_of(ctx, switch) {
                self.catch_up(edge, k);
            }
        }
    }

    /// The edge index of `switch`, if it is a ToR.
    #[inline]
    fn edge_of(&self, ctx: &SwitchCtx, switch: u32) -> Option<usize> {
        let edge = ctx.topology().edge_index[switch as usize];
        ((edge as usize) < self.tors.len()).then_some(edge as usize)
    }

    /// Counts elephant `flow` on egress `port` in interval `k` and marks packet `h` if the
    /// port now carries more than `t` elephants and no earlier hop marked it.
    #[inline]
    fn count_and_mark(&mut self, ctx: &mut SwitchCtx, h: Handle, port: u32, flow: u32, k: u64) {
        let pe = &mut self.ports[port as usize];
        if pe.interval != k {
            pe.interval = k;
            pe.count = 0;
        }
        let known = (pe.count as usize).min(TRACKED);
        if !pe.flows[..known].contains(&flow) && (pe.count as usize) < TRACKED {
            pe.flows[known] = flow;
            pe.count += 1;
        }
        if pe.count as u32 > self.tolerance {
            let pkt = ctx.packet_mut(h);
            if pkt.aux == 0 {
                pkt.aux = port as u64 + 1;
                self.counts.marked += 1;
            }
        }
    }

    /// A data packet entering the fabric at its source ToR: sketch, path, header.
    fn at_source(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> u32 {
        let pkt = *ctx.packet(h);
        let now = ctx.now();
        let k = now / self.interval;
        let topo = ctx.topology();
        let src_edge = topo.edge_index[switch as usize];
        let pair = self.paths.pair(src_edge, edge_of_host(topo, pkt.dst));
        let level = topo.switches[switch as usize].level;
        let count = self.paths.count(pair);
        let salt = self.salts[switch as usize];
        let key = ((pkt.flow as u64) << 32) | pkt.flow_key() as u64;
        let floor = self.elephant_bytes;
        let hot = self.tors[src_edge as usize]
            .sketch
            .add_and_rank(key, pkt.size, floor);
        let mut st = *self.flow(pkt.flow);
        let fresh = !st.registered;
        if fresh {
            st.registered = true;
            st.src_edge = src_edge;
            st.pair = pair;
            let index = ecmp_hash(pkt.flow_key(), pkt.flow, salt) % count;
            st.code = self.paths.code(pair, index);
            self.tors[src_edge as usize].flows.push(pkt.flow);
        } else if !hot && now.saturating_sub(st.last) > self.flowlet {
            let index = ctx.rng().below(count);
            st.code = self.paths.code(pair, index);
            self.counts.flowlets += 1;
        }
        if hot {
            st.hot = k;
        }
        st.last = now;
        let code = st.code;
        self.flows[pkt.flow as usize] = st;
        let p = ctx.packet_mut(h);
        p.scheme = TAGGED | if hot { ELEPHANT } else { 0 } | code as u16;
        p.aux = 0;
        let port = follow(code, level, candidates);
        if hot {
            self.count_and_mark(ctx, h, port, pkt.flow, k);
        }
        port
    }

    /// An elephant packet reaching its destination ToR: Link Table and Bottleneck Link Table.
    fn at_destination(&mut self, ctx: &mut SwitchCtx, switch: u32, h: Handle) {
        let pkt = *ctx.packet(h);
        if pkt.scheme & ELEPHANT == 0 {
            return;
        }
        let k = ctx.now() / self.interval;
        let topo = ctx.topology();
        let dst_edge = topo.edge_index[switch as usize];
        let src_edge = edge_of_host(topo, pkt.src);
        let pair = self.paths.pair(src_edge, dst_edge);
        let st = self.flow(pkt.flow);
        st.dst_from = src_edge;
        st.dst_pair = pair;
        st.dst_code = pkt.scheme as u8;
        let first = st.dst_seen != k;
        st.dst_seen = k;
        let tor = &mut self.tors[dst_edge as usize];
        if first {
            tor.arrived.push(pkt.flow);
        }
        if pkt.aux == 0 {
            return;
        }
        let link = (pkt.aux - 1) as u32;
        let at = match tor.bottlenecks.iter().position(|b| b.link == link) {
            Some(i) => i,
            None => {
                tor.bottlenecks.push(Bottleneck {
                    link,
                    flow: pkt.flow,
                    packets: 0,
                });
                tor.bottlenecks.len() - 1
            }
        };
        let b = &mut tor.bottlenecks[at];
        b.packets += 1;
        // Reservoir sampling: every marked packet's flow is drawn with the same chance.
        if ctx.rng().below(b.packets) == 0 {
            b.flow = pkt.flow;
        }
    }

    /// A notification reached its source ToR: remember the flow and block the named links
    /// (`words`: the bottleneck link, then the high-utilisation ones).
    fn on_notification(&mut self, edge: usize, flow: u32, words: &[u32]) {
        let Some(&bottleneck) = words.first() else {
            return;
        };
        let tor = &mut self.tors[edge];
        tor.pending.push(Pending { flow, bottleneck });
        tor.blocked.extend_from_slice(words);
    }
}

/// The links of every path of every ToR pair, [`MAX_HOPS`] per path slot.
fn path_links(topo: &Topology, paths: &TorPaths) -> Vec<u32> {
    let edges = topo.edge_count();
    let mut out = vec![NO_LINK; paths.slots() * MAX_HOPS];
    for a in 0..edges {
        for b in 0..edges {
            if a == b {
                continue;
            }
            let pair = paths.pair(a, b);
            let target = topo.switch_node(topo.edges[b as usize]);
            for index in 0..paths.count(pair) {
                let code = paths.code(pair, index);
                let at = paths.slot(pair, index) * MAX_HOPS;
                let mut node = topo.switch_node(topo.edges[a as usize]);
                for hop in 0..MAX_HOPS {
                    if node == target || node < topo.hosts {
                        break;
                    }
                    let s = node - topo.hosts;
                    let group = topo.routes.group(s, b);
                    if group.is_empty() {
                        break;
                    }
                    let link = follow(code, topo.switches[s as usize].level, group);
                    out[at + hop] = link;
                    node = topo.links[link as usize].to;
                }
            }
        }
    }
    out
}

impl SwitchScheme for Reunion {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        let topo = ctx.topology();
        if pkt.kind == Kind::Notify && pkt.dst == topo.switch_node(switch) {
            if pkt.scheme & TAGGED != 0 {
                let edge = topo.edge_index[switch as usize] as usize;
                let words = ctx.take_payload(h);
                self.keep_time(ctx, switch);
                self.on_notification(edge, pkt.flow, &words);
                if self.act_on == ActOn::Arrival {
                    // It describes the interval that just ended (a notification takes
                    // microseconds; one later than an interval counts for the later one).
                    let k = (ctx.now() / self.interval).saturating_sub(1);
                    self.reroute(ctx, edge, k);
                }
            }
            return Ingress::Consume;
        }
        let Some(&first) = candidates.first() else {
            return Ingress::Drop;
        };
        if pkt.kind != Kind::Data
            || pkt.route != NO_ROUTE
            || pkt.dst >= topo.hosts
            || pkt.has(flags::SWITCH_EXEMPT)
        {
            return Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates));
        }
        let entering = from_host(topo, pkt.ingress);
        if !entering && pkt.scheme & TAGGED != 0 {
            self.keep_time(ctx, switch);
            if ctx.topology().links[first as usize].to == pkt.dst {
                self.at_destination(ctx, switch, h);
                return Ingress::Forward(first);
            }
            let level = ctx.topology().switches[switch as usize].level;
            let port = follow(pkt.scheme as u8, level, candidates);
            if pkt.scheme & ELEPHANT != 0 {
                let k = ctx.now() / self.interval;
                self.count_and_mark(ctx, h, port, pkt.flow, k);
            }
            return Ingress::Forward(port);
        }
        if entering && candidates.len() > 1 && pkt.src < topo.hosts {
            self.keep_time(ctx, switch);
            return Ingress::Forward(self.at_source(ctx, switch, h, candidates));
        }
        Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates))
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx, timer: SchemeTimer) {
        let switch = timer.id;
        let Some(clock) = self.clocks.get_mut(switch as usize) else {
            return;
        };
        if timer.kind != INTERVAL_TIMER || !clock.slot.fires(timer) {
            return;
        }
        let k = std::mem::replace(&mut clock.armed_for, NEVER);
        let active = std::mem::take(&mut clock.active);
        self.end_interval(ctx, switch, k);
        if active {
            self.keep_time(ctx, switch);
            // Re-armed by the interval's own activity: nothing has happened in the new one.
            self.clocks[switch as usize].active = false;
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counts;
        vec![
            ("intervals", c.intervals),
            ("notifications", c.notifications),
            ("notification_bytes", c.notification_bytes),
            ("reroutes", c.reroutes),
            ("reroute_failed", c.reroute_failed),
            ("stale_notifications", c.stale),
            ("marked_packets", c.marked),
            ("mice_flowlets", c.flowlets),
            ("max_elephants_per_link", c.max_elephants),
        ]
    }

    fn link_samples(&self) -> &[LinkSample] {
        &self.samples
    }
}
