//! ConWeave (Song et al., "Network Load Balancing with In-network Reordering Support for
//! RDMA", SIGCOMM 2023), as the ConWeave repository implements it (`peers.md` 3.4).
//!
//! The source ToR splits each flow into epochs. The first packet of an epoch (INIT, the
//! paper's RTT_REQUEST) asks the destination ToR for a reply; if the reply is not back by a
//! deadline (ToR-to-ToR base RTT + `extra_reply_deadline`), the current path is deemed slow:
//! the next packet is sent as the epoch's TAIL on the old path and the flow moves to a new
//! path (phase 1). The destination ToR holds phase-1 packets that overtake the TAIL in a
//! per-flow reorder queue and releases them, in arrival order, when the TAIL has arrived or
//! at a flush deadline, so the receiver sees the flow in order. The destination answers INIT
//! with RTT_REPLY, TAIL with CLEAR, and ECN-marked data with NOTIFY(path), which makes the
//! source avoid that path for `path_pause_time`. Control packets are real packets
//! ([`Kind::Notify`], 64 bytes, header lane, hashed like ECMP).
//!
//! Parameter sets (`preset`), every field overridable:
//!
//! | field | leaf-spine | fat-tree-irn | fat-tree-lossless | laps |
//! |---|---|---|---|---|
//! | tx_expiry | 300 µs | 1000 µs | 1000 µs | 10 µs |
//! | extra_reply_deadline | 4 µs | 4 µs | 4 µs | 80 ns |
//! | path_pause_time | 16 µs | 16 µs | 16 µs | 4 µs |
//! | extra_voq_flush_time | 16 µs | 16 µs | 64 µs | 32 µs |
//! | default_voq_waiting_time | 200 µs | 300 µs | 600 µs | 200 µs |
//! | aging | 2 ms | 2 ms | 2 ms | 2 ms |
//! | base_rtt | tor | tor | tor | host |
//!
//! (ConWeave repository `run.py` values for its leaf-spine and fat-tree runs, and the
//! constructor constants the LAPS repository runs with; `base_rtt = "host"` adds the host
//! links, as LAPS takes twice the host-to-host propagation.)
//!
//! Where the paper and the reference code differ, and what this model does:
//! - The paper's hardware keeps a 2-bit epoch and timestamps of limited width; here the epoch
//!   has 4 bits (compared modulo 16: 1-7 ahead is newer, 8-15 behind is older) and
//!   timestamps travel as 32-bit nanoseconds, so gaps up to about 4 s are exact.
//! - The reference marks bad paths in a 65,536-entry hashed table per switch; this model keeps
//!   an exact table per (ToR pair, path), without collisions.
//! - Reorder queues hold packets outside any buffer accounting (as the reference, unbounded);
//!   the paper's switch has a limited number of queues. Their occupancy is counted
//!   ([`SwitchScheme::stats`]).
//! - Path choice samples 2 random paths and takes the first not marked bad; if both are bad the
//!   flow stays (path-aware rerouting; `path_aware = false` takes a random path).
//! - Aging: idle flow state is forgotten after `aging` (checked lazily when the flow's next
//!   packet comes; a reorder queue in use is never aged).
//! - Paths are ToR-to-ToR path codes ([`super::tor_paths`]); hosts with several NICs are
//!   assumed to use their first. By default the fabric's shortest paths; with the run's
//!   `next_hops = "laps-candidates"` (the LAPS runs) the LAPS candidate routes of the ToR pair,
//!   the path ids the LAPS code samples from. The base RTT stays the shortest path's either way
//!   (the LAPS code takes twice the shortest host-to-host propagation).
use super::tor_paths::{edge_of_host, from_host, TorPaths};
use super::{ecmp, Ingress, SchemeSetup, SchemeTimer, SwitchCtx, SwitchScheme};
use crate::engine::time::NS;
use crate::engine::{Handle, Time};
use crate::net::packet::{flags, NO_ROUTE};
use crate::net::{Kind, Packet};

mod config;
mod state;
#[cfg(test)]
mod tests;

pub use config::{BaseRtt, ConWeaveConfig, Params, Preset};
use state::{DstFlow, SrcFlow, Voqs};

/// Tag bits in `Packet::scheme`: a ConWeave packet (data tag or control).
const TAGGED: u16 = 0x8000;
/// Data: the epoch's TAIL.
const TAIL: u16 = 0x4000;
/// Data: the epoch's first packet (RTT_REQUEST).
const INIT: u16 = 0x2000;
/// Data and control: phase 1.
const PHASE: u16 = 0x1000;
/// Control: which message, in bits 13-14.
const CONTROL_SHIFT: u16 = 13;
/// Control message kinds.
const RTT_REPLY: u16 = 1;
const CLEAR: u16 = 2;
const NOTIFY: u16 = 3;
/// Timer kind of a reorder queue's flush.
const FLUSH_TIMER: u8 = 1;

/// Counts a run reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// INIT (RTT_REQUEST) packets sent by source ToRs.
    pub inits: u64,
    /// TAIL packets sent (each one a path switch).
    pub tails: u64,
    /// RTT_REPLY packets sent by destination ToRs.
    pub replies: u64,
    /// CLEAR packets sent.
    pub clears: u64,
    /// NOTIFY packets sent.
    pub notifies: u64,
    /// Data packets held in reorder queues.
    pub held: u64,
    /// Most packets one ToR held at once (all its reorder queues).
    pub max_held_packets: u64,
    /// Most bytes one ToR held at once.
    pub max_held_bytes: u64,
    /// Reorder queues flushed at their deadline (the TAIL had not come).
    pub flushed_on_deadline: u64,
    /// Reorder queues flushed after their TAIL.
    pub flushed_on_tail: u64,
}

/// ConWeave ToRs.
pub struct ConWeave {
    p: Params,
    salts: Vec<u32>,
    paths: TorPaths,
    /// Per (ToR pair, path): the time until which the path is bad.
    bad_until: Vec<Time>,
    /// Per flow, at its source ToR.
    src: Vec<SrcFlow>,
    /// Per flow, at its destination ToR.
    dst: Vec<DstFlow>,
    voqs: Voqs,
    /// Packets and bytes each switch holds now (a switch's reorder memory is its own).
    held: Vec<Held>,
    counts: Counts,
}

/// What one switch holds in its reorder queues.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    packets: u64,
    bytes: u64,
}

/// Epoch `a` is newer than `b` (4-bit epochs, half the space ahead).
#[inline]
fn newer(a: u8, b: u8) -> bool {
    (1..8).contains(&(a.wrapping_sub(b) & 15))
}

/// Nanoseconds of a time, as a 32-bit wrapping timestamp.
#[inline]
fn stamp(t: Time) -> u32 {
    (t / NS) as u32
}

impl ConWeave {
    fn new(p: Params, setup: &SchemeSetup) -> Self {
        let paths = TorPaths::for_run(setup.topology, setup.next_hops);
        ConWeave {
            p,
            salts: setup.salts.to_vec(),
            bad_until: vec![0; paths.slots()],
            paths,
            src: Vec::new(),
            dst: Vec::new(),
            voqs: Voqs::default(),
            held: vec![Held::default(); setup.topology.switches.len()],
            counts: Counts::default(),
        }
    }

    /// The run's counts so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Whether path `index` of `pair` is marked bad now.
    fn bad(&self, pair: u32, index: u32, now: Time) -> bool {
        self.bad_until[self.paths.slot(pair, index)] > now
    }

    /// A new path for a flow of `pair`: the first of two random samples not marked bad (any
    /// sample without path awareness); `None` if both are bad.
    fn good_path(&self, ctx: &mut SwitchCtx, pair: u32) -> Option<u8> {
        let count = self.paths.count(pair);
        let now = ctx.now();
        for _ in 0..2 {
            let index = ctx.rng().below(count);
            if !self.p.path_aware || !self.bad(pair, index, now) {
                return Some(self.paths.code(pair, index));
            }
        }
        None
    }

    /// Base RTT of a packet's ToR pair.
    fn base_rtt(&self, ctx: &SwitchCtx, pair: u32, pkt: &Packet) -> Time {
        let tors = self.paths.base_rtt(pair);
        match self.p.base_rtt {
            BaseRtt::Tor => tors,
            BaseRtt::Host => {
                let topo = ctx.topology();
                let up = topo.links[topo.host_uplink[pkt.src as usize] as usize].latency;
                let down = topo.links[topo.host_downlink[pkt.dst as usize] as usize].latency;
                tors + 2 * (up + down)
            }
        }
    }

    /// The source ToR tags a data packet leaving for another ToR; returns its port.
    fn at_source(&mut self, ctx: &mut SwitchCtx, switch: u32, h: Handle, cands: &[u32]) -> u32 {
        let pkt = *ctx.packet(h);
        let now = ctx.now();
        let topo = ctx.topology();
        let (level, node) = (
            topo.switches[switch as usize].level,
            topo.switch_node(switch),
        );
        let pair = self.paths.pair(
            topo.edge_index[switch as usize],
            edge_of_host(topo, pkt.dst),
        );
        let flow = pkt.flow as usize;
        if flow >= self.src.len() {
            self.src.resize(flow + 1, SrcFlow::default());
        }
        let f = self.src[flow];
        let expired = !f.live || now.saturating_sub(f.active) > self.p.tx_expiry;
        let mut f = if f.live && now.saturating_sub(f.active) > self.p.aging {
            SrcFlow::default()
        } else {
            f
        };
        let (flag, code, phase);
        if expired || f.stabilized {
            f.epoch = (f.epoch + 1) & 15;
            f.phase = 0;
            f.tail_time = 0;
            f.deadline = now + self.base_rtt(ctx, pair, &pkt) + self.p.extra_reply_deadline;
            f.stabilized = false;
            if expired {
                // A gap longer than tx_expiry: moving now cannot reorder the flow.
                f.code = match (self.good_path(ctx, pair), f.live) {
                    (Some(code), _) => code,
                    (None, true) => f.code,
                    (None, false) => {
                        let index = ctx.rng().below(self.paths.count(pair));
                        self.paths.code(pair, index)
                    }
                };
            }
            flag = INIT;
            code = f.code;
            phase = 0;
            self.counts.inits += 1;
        } else if f.phase == 0 && now > f.deadline {
            // No timely RTT_REPLY: this packet closes the epoch on the old path.
            flag = TAIL;
            code = f.code;
            phase = 0;
            f.deadline = Time::MAX;
            f.phase = 1;
            f.tail_time = now;
            if let Some(good) = self.good_path(ctx, pair) {
                f.code = good;
            }
            self.counts.tails += 1;
        } else {
            flag = 0;
            code = f.code;
            phase = f.phase;
        }
        f.active = now;
        f.live = true;
        self.src[flow] = f;
        let p = ctx.packet_mut(h);
        p.scheme = TAGGED
            | flag
            | if phase == 1 { PHASE } else { 0 }
            | (f.epoch as u16) << 8
            | code as u16;
        let tail = if phase == 1 { stamp(f.tail_time) } else { 0 };
        p.aux = stamp(now) as u64 | (tail as u64) << 32;
        self.paths.port(pair, code, level, node, cands)
    }

    /// Sends a control message from destination ToR `switch` to the source ToR of `pkt`.
    fn reply(&mut self, ctx: &mut SwitchCtx, switch: u32, pkt: &Packet, message: u16) {
        let topo = ctx.topology();
        let mut c = Packet::blank(Kind::Notify, ctx.header_size().max(64));
        c.dst = topo.switch_node(topo.host_edge[pkt.src as usize]);
        c.flow = pkt.flow;
        c.scheme = TAGGED | message << CONTROL_SHIFT | (pkt.scheme & (PHASE | 0x0fff));
        match message {
            RTT_REPLY => self.counts.replies += 1,
            CLEAR => self.counts.clears += 1,
            _ => self.counts.notifies += 1,
        }
        ctx.originate(switch, c);
    }

    /// The source ToR reads a control message addressed to it.
    fn on_control(&mut self, ctx: &SwitchCtx, switch: u32, pkt: &Packet) {
        let now = ctx.now();
        let message = (pkt.scheme >> CONTROL_SHIFT) & 3;
        let epoch = ((pkt.scheme >> 8) & 15) as u8;
        if message == NOTIFY {
            let topo = ctx.topology();
            let Some(there) = pkt.src.checked_sub(topo.hosts) else {
                return;
            };
            let pair = self.paths.pair(
                topo.edge_index[switch as usize],
                topo.edge_index[there as usize],
            );
            let index = self.paths.index(pair, pkt.scheme as u8);
            let slot = self.paths.slot(pair, index);
            self.bad_until[slot] = now + self.p.path_pause_time;
            return;
        }
        let Some(f) = self.src.get_mut(pkt.flow as usize) else {
            return;
        };
        if !f.live || f.epoch != epoch {
            return;
        }
        let matches = match message {
            RTT_REPLY => f.phase == 0 && now <= f.deadline,
            CLEAR => f.phase == 1,
            _ => false,
        };
        if matches {
            f.stabilized = true;
            f.deadline = Time::MAX;
        }
    }

    /// The destination ToR's reordering for a tagged data packet: forward it or hold it.
    fn at_destination(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        port: u32,
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        let now = ctx.now();
        if pkt.has(flags::ECN) {
            self.reply(ctx, switch, &pkt, NOTIFY);
        }
        if pkt.scheme & INIT != 0 {
            self.reply(ctx, switch, &pkt, RTT_REPLY);
        }
        let is_tail = pkt.scheme & TAIL != 0;
        if is_tail {
            self.reply(ctx, switch, &pkt, CLEAR);
        }
        let flow = pkt.flow as usize;
        if flow >= self.dst.len() {
            self.dst.resize(flow + 1, DstFlow::default());
        }
        let epoch = ((pkt.scheme >> 8) & 15) as u8;
        let phase = (pkt.scheme & PHASE != 0) as u8;
        let tx = pkt.aux as u32;
        let tail_time = (pkt.aux >> 32) as u32;
        let mut d = self.dst[flow];
        if d.live && !d.reordering && now.saturating_sub(d.last) > self.p.aging {
            d = DstFlow::default();
        }
        d.last = now;
        if d.live && !newer(epoch, d.epoch) && epoch != d.epoch {
            // A straggler of an older epoch.
            self.dst[flow] = d;
            return Ingress::Forward(port);
        }
        let mut hold = false;
        if !d.live || epoch != d.epoch {
            self.dst[flow] = d;
            if d.reordering {
                self.flush(ctx, flow, Flush::NewEpoch);
            }
            d = self.dst[flow];
            d.live = true;
            d.epoch = epoch;
            d.rx_phase = is_tail as u8;
            d.phase0_cache = phase == 0;
            if phase == 0 {
                d.phase0_tx = tx;
                d.phase0_rx = now;
            } else {
                d.tail_time = tail_time;
            }
            hold = phase > d.rx_phase;
        } else {
            if phase == 0 {
                d.phase0_tx = tx;
                d.phase0_rx = now;
            } else {
                d.tail_time = tail_time;
            }
            if is_tail {
                if d.reordering {
                    // The TAIL is through: what waited behind it may go (just after it).
                    d.flush_at = now + NS;
                    d.tail_flush = true;
                    self.arm(ctx, flow, &mut d);
                } else {
                    d.rx_phase = 1;
                }
            } else if phase == 1 && d.rx_phase == 0 {
                hold = true;
            } else if phase == 0 && d.reordering && !d.tail_flush {
                d.flush_at = now + self.expected_tail_gap(&d) + self.p.extra_voq_flush_time;
                self.arm(ctx, flow, &mut d);
            }
        }
        if !hold {
            self.dst[flow] = d;
            return Ingress::Forward(port);
        }
        if !d.reordering {
            d.reordering = true;
            d.switch = switch;
            d.port = port;
            let gap = self.expected_tail_gap(&d) + self.p.extra_voq_flush_time;
            d.flush_at = if d.phase0_cache {
                (d.phase0_rx + gap).max(now)
            } else {
                now + gap
            };
            self.arm(ctx, flow, &mut d);
        }
        self.voqs.push(&mut d.queue, h);
        self.dst[flow] = d;
        let held = &mut self.held[d.switch as usize];
        held.packets += 1;
        held.bytes += pkt.size as u64;
        self.counts.held += 1;
        self.counts.max_held_packets = self.counts.max_held_packets.max(held.packets);
        self.counts.max_held_bytes = self.counts.max_held_bytes.max(held.bytes);
        Ingress::Hold
    }

    /// When the TAIL should arrive after the epoch's phase-0 packets.
    fn expected_tail_gap(&self, d: &DstFlow) -> Time {
        if d.phase0_cache {
            d.tail_time.wrapping_sub(d.phase0_tx) as Time * NS
        } else {
            self.p.default_voq_waiting_time
        }
    }

    /// (Re)sets the flush timer of flow `flow`'s reorder queue to `d.flush_at`.
    fn arm(&self, ctx: &mut SwitchCtx, flow: usize, d: &mut DstFlow) {
        let timer = d.flush.arm(FLUSH_TIMER, flow as u32);
        ctx.set_timer(d.flush_at.max(ctx.now()), timer);
    }

    /// Releases a flow's reorder queue in arrival order; the flow is then in phase 1.
    fn flush(&mut self, ctx: &mut SwitchCtx, flow: usize, why: Flush) {
        let mut d = self.dst[flow];
        while let Some(h) = self.voqs.pop(&mut d.queue) {
            let held = &mut self.held[d.switch as usize];
            held.packets -= 1;
            held.bytes -= ctx.packet(h).size as u64;
            ctx.release(d.switch, h, d.port);
        }
        match why {
            Flush::Deadline => self.counts.flushed_on_deadline += 1,
            Flush::Tail => self.counts.flushed_on_tail += 1,
            Flush::NewEpoch => {}
        }
        d.flush.cancel();
        d.reordering = false;
        d.tail_flush = false;
        d.rx_phase = 1;
        self.dst[flow] = d;
    }
}

/// Why a reorder queue is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flush {
    /// Its deadline passed before the TAIL came.
    Deadline,
    /// The TAIL came.
    Tail,
    /// A newer epoch started (its packets no longer wait for this one's TAIL).
    NewEpoch,
}

impl SwitchScheme for ConWeave {
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
                self.on_control(ctx, switch, &pkt);
            }
            return Ingress::Consume;
        }
        let Some(&first) = candidates.first() else {
            return Ingress::Drop;
        };
        if pkt.kind != Kind::Data || pkt.route != NO_ROUTE || pkt.dst >= topo.hosts {
            return Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates));
        }
        let entering = from_host(topo, pkt.ingress);
        if !entering && pkt.scheme & TAGGED != 0 {
            if topo.links[first as usize].to == pkt.dst {
                return self.at_destination(ctx, switch, h, first);
            }
            let port = self.paths.port_of_tagged(topo, switch, &pkt, candidates);
            return Ingress::Forward(port);
        }
        if entering && pkt.src < topo.hosts {
            let pair = self.paths.pair(
                topo.edge_index[switch as usize],
                edge_of_host(topo, pkt.dst),
            );
            if self.paths.has_choice(pair, candidates) {
                return Ingress::Forward(self.at_source(ctx, switch, h, candidates));
            }
        }
        Ingress::Forward(ecmp::pick(&pkt, self.salts[switch as usize], candidates))
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx, timer: SchemeTimer) {
        let flow = timer.id as usize;
        if timer.kind != FLUSH_TIMER || flow >= self.dst.len() {
            return;
        }
        if self.dst[flow].flush.fires(timer) {
            // A flush set just after a TAIL is the TAIL's; any other is a deadline.
            let why = if self.dst[flow].tail_flush {
                Flush::Tail
            } else {
                Flush::Deadline
            };
            self.flush(ctx, flow, why);
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counts;
        vec![
            ("inits", c.inits),
            ("tails", c.tails),
            ("rtt_replies", c.replies),
            ("clears", c.clears),
            ("notifies", c.notifies),
            ("held_packets", c.held),
            ("max_held_packets", c.max_held_packets),
            ("max_held_bytes", c.max_held_bytes),
            ("flushed_on_deadline", c.flushed_on_deadline),
            ("flushed_on_tail", c.flushed_on_tail),
        ]
    }
}
