//! The end of an interval at one switch: its elephants-per-link samples and, at a ToR,
//! Algorithm 2 on the notifications it received, Algorithm 1 on the marks it collected, then
//! the per-interval resets.
use super::{Reunion, NEVER, TAGGED};
use crate::lb::LbEvent;
use crate::net::{Kind, Packet};
use crate::routing::LinkSample;
use crate::routing::SwitchCtx;

/// Reason of a reroute in `lb_events.csv`: a notification named the flow's bottleneck.
pub const REASON_COLLISION: &str = "collision";
/// Link Table count of a link a notification named: never selectable.
const BLOCKED: u32 = u32::MAX;

impl Reunion {
    /// Everything that happens at `switch` when interval `k` ends (now).
    pub(super) fn end_interval(&mut self, ctx: &mut SwitchCtx, switch: u32, k: u64) {
        self.counts.intervals += 1;
        let now = ctx.now();
        let topo = ctx.topology();
        for &link in topo.out_of(topo.switch_node(switch)) {
            let pe = &self.ports[link as usize];
            if pe.interval == k && pe.count > 0 && topo.links[link as usize].to >= topo.hosts {
                let sample = LinkSample {
                    time: now,
                    link,
                    elephants: pe.count as u32,
                };
                self.counts.max_elephants = self.counts.max_elephants.max(pe.count as u64);
                // Other switches' samples of this instant may be in already.
                let at = self
                    .samples
                    .iter()
                    .rposition(|s| (s.time, s.link) < (now, link))
                    .map_or(0, |i| i + 1);
                self.samples.insert(at, sample);
            }
        }
        let Some(edge) = self.edge_of(ctx, switch) else {
            return;
        };
        self.catch_up(edge, k);
        if !self.tors[edge].pending.is_empty() {
            self.reroute(ctx, edge, k);
        }
        self.notify(ctx, edge, k);
        self.close(edge, 1, k);
    }

    /// Applies at ToR `edge` the ends of the intervals before `k` it has not applied: it saw
    /// nothing in them, so all they do is halve its sketch and prune its idle flows.
    pub(super) fn catch_up(&mut self, edge: usize, k: u64) {
        let ended = self.tors[edge].ended;
        let Some(last) = k.checked_sub(1) else {
            return;
        };
        if ended == NEVER {
            // Nothing was ever counted here: there is nothing to halve or prune.
            self.tors[edge].ended = last;
        } else if ended < last {
            let missed = (last - ended).min(u32::MAX as u64) as u32;
            self.close(edge, missed, last);
        }
    }

    /// The resets at ToR `edge` after the end of `halvings` intervals, the last being `k`:
    /// halve the sketch that many times, clear the interval's tables, prune idle flows.
    fn close(&mut self, edge: usize, halvings: u32, k: u64) {
        let (floor, interval) = (self.elephant_bytes, self.interval);
        let tor = &mut self.tors[edge];
        tor.sketch.decay_by(halvings, floor);
        tor.arrived.clear();
        tor.bottlenecks.clear();
        tor.ended = k;
        // Flows idle for a whole interval leave the source's list (they re-register).
        let flows = &mut self.flows;
        tor.flows.retain(|&f| {
            let st = &mut flows[f as usize];
            let keep = st.last / interval + 1 >= k;
            st.registered = keep;
            keep
        });
    }

    /// The scratch Link Table's count of `link`, remembered for [`Self::clear_table`].
    fn table_entry(&mut self, link: u32) -> &mut u32 {
        if self.table[link as usize] == 0 {
            self.touched.push(link);
        }
        &mut self.table[link as usize]
    }

    /// Adds one elephant on every link of path `index` of `pair` in the scratch Link Table.
    fn count_path(&mut self, pair: u32, index: u32) {
        let at = self.paths.slot(pair, index) * super::MAX_HOPS;
        for hop in 0..super::MAX_HOPS {
            let link = self.path_links[at + hop];
            if link == super::NO_LINK {
                break;
            }
            let c = self.table_entry(link);
            *c = c.saturating_add(1);
        }
    }

    /// True if every link of the path carries fewer than `t` elephants (none blocked).
    fn path_is_free(&self, pair: u32, index: u32) -> bool {
        self.links(pair, index)
            .all(|l| self.table[l as usize] < self.tolerance)
    }

    /// Zeroes the scratch Link Table.
    fn clear_table(&mut self) {
        for &l in &self.touched {
            self.table[l as usize] = 0;
        }
        self.touched.clear();
    }

    /// Algorithm 2 at source ToR `edge` on the notifications about interval `k`.
    pub(super) fn reroute(&mut self, ctx: &mut SwitchCtx, edge: usize, k: u64) {
        // The Link Table: this source's flows that sent elephant packets in the interval (or
        // since), on their paths; a flow moved for this interval also on its old path.
        for i in 0..self.tors[edge].flows.len() {
            let st = self.flows[self.tors[edge].flows[i] as usize];
            if st.hot != super::NEVER && st.hot >= k {
                let index = self.paths.index(st.pair, st.code);
                self.count_path(st.pair, index);
                if st.rerouted == k {
                    let old = self.paths.index(st.pair, st.prev_code);
                    self.count_path(st.pair, old);
                }
            }
        }
        for i in 0..self.tors[edge].blocked.len() {
            let link = self.tors[edge].blocked[i];
            *self.table_entry(link) = BLOCKED;
        }
        let pending = std::mem::take(&mut self.tors[edge].pending);
        for p in &pending {
            let Some(&st) = self.flows.get(p.flow as usize) else {
                continue;
            };
            if !st.registered || st.src_edge as usize != edge || st.rerouted == k {
                continue;
            }
            let old = self.paths.index(st.pair, st.code);
            // A flow that no longer crosses the named bottleneck was moved off it since the
            // marked packets were sent: the collision the notification reports is gone.
            if !self.links(st.pair, old).any(|l| l == p.bottleneck) {
                self.counts.stale += 1;
                continue;
            }
            // The first free path other than the flow's own.
            let found =
                (0..self.paths.count(st.pair)).find(|&i| i != old && self.path_is_free(st.pair, i));
            let Some(new) = found else {
                self.counts.reroute_failed += 1;
                continue;
            };
            self.count_path(st.pair, new);
            let f = &mut self.flows[p.flow as usize];
            f.prev_code = f.code;
            f.code = self.paths.code(st.pair, new);
            f.rerouted = k;
            self.counts.reroutes += 1;
            ctx.record(
                p.flow,
                LbEvent::REROUTED.moved(old as u16, new as u16, REASON_COLLISION),
            );
        }
        let mut pending = pending;
        pending.clear();
        self.tors[edge].pending = pending;
        self.tors[edge].blocked.clear();
        self.clear_table();
    }

    /// Algorithm 1 at destination ToR `edge` for interval `k`: one notification per marked
    /// link, to the source ToR of the flow drawn for it.
    fn notify(&mut self, ctx: &mut SwitchCtx, edge: usize, k: u64) {
        if self.tors[edge].bottlenecks.is_empty() {
            return;
        }
        // GetLinkStats: every elephant that arrived in the interval, once, on its last path.
        for i in 0..self.tors[edge].arrived.len() {
            let st = self.flows[self.tors[edge].arrived[i] as usize];
            if st.dst_seen == k {
                let index = self.paths.index(st.dst_pair, st.dst_code);
                self.count_path(st.dst_pair, index);
            }
        }
        let switch = ctx.topology().edges[edge];
        let dst_node = |ctx: &SwitchCtx, src_edge: u32| {
            let topo = ctx.topology();
            topo.switch_node(topo.edges[src_edge as usize])
        };
        for i in 0..self.tors[edge].bottlenecks.len() {
            let b = self.tors[edge].bottlenecks[i];
            let Some(&st) = self.flows.get(b.flow as usize) else {
                continue;
            };
            let src_edge = st.dst_from;
            // The bottleneck, then the high-utilisation links on the source's own paths to
            // this destination.
            let mut words = vec![b.link];
            for index in 0..self.paths.count(st.dst_pair) {
                for link in self.links(st.dst_pair, index) {
                    if self.table[link as usize] >= self.tolerance && !words.contains(&link) {
                        words.push(link);
                    }
                }
            }
            let size = ctx.header_size().max(64) + 4 * words.len() as u32;
            let mut pkt = Packet::blank(Kind::Notify, size);
            pkt.dst = dst_node(ctx, src_edge);
            pkt.flow = b.flow;
            pkt.scheme = TAGGED;
            pkt.sent_at = ctx.now();
            let h = ctx.originate(switch, pkt);
            ctx.attach_payload(h, words);
            self.counts.notifications += 1;
            self.counts.notification_bytes += size as u64;
        }
        self.clear_table();
    }
}
