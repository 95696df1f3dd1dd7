//! One partition of a network split over threads: which nodes it owns, which events it runs,
//! the packets it takes in from the others, and how the partitions' simulations fold back into
//! one when the run ends (see [`super::parallel`] for the threads and windows).
//!
//! Every partition holds a whole [`Simulation`] built from the same run specification, so
//! every table that is set up once (flows, topology, forwarding, classes) is the same in all
//! of them, and each partition runs only the events of the nodes it owns:
//! - a packet put on a link to another partition's node leaves through the world's outbox
//!   ([`crate::net::outbox`]) and arrives there as an event with the same time and tie-break;
//! - the control entity's events (the setup's flow starts, workload sources) run in every
//!   partition alike, and each keeps only what they schedule for its own nodes;
//! - a flow's start runs at both ends: its sending host's partition keeps the sender, its
//!   receiving host's partition the receiver.
//!
//! What one partition writes is then disjoint from what the others write: a flow's sender-side
//! fields at its source, its receiver-side fields at its destination, a port's state where the
//! port is, and the counters as shares that add up. [`Simulation::fold_partitions`] puts them
//! together into one simulation whose outputs are those of a run on one thread.
use std::sync::Arc;

use super::{Phase, Simulation, Switching};
use crate::net::outbox::{Outbox, Parcel};
use crate::net::topology::{PartitionRule, Partitioning};
use crate::net::world::{Event, Owner, Timer};

/// What a partition knows about the split.
pub(super) struct Shard {
    /// Its index.
    pub index: u32,
    /// Partition of every node.
    pub of_node: Arc<[u32]>,
    /// The key of the event that made each load-balancer record (same index).
    pub lb_keys: Vec<u128>,
    /// The key of the event at which each congestion-window sample was taken (same index).
    pub cwnd_keys: Vec<u128>,
}

/// Why a run of switch scheme `switch` cannot be split over threads yet (see
/// [`Simulation::partition_blockers`]).
pub(super) fn split_blockers(switch: &crate::routing::SwitchSpec) -> Vec<String> {
    let mut why = Vec::new();
    if let Some(shared) = switch.shared_between_switches() {
        why.push(format!("switch scheme {} ({shared})", switch.name()));
    }
    why
}

/// Whether a partition runs a timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TimerTurn {
    /// Another partition's: skipped.
    Skip,
    /// Run here and counted among the run's events.
    Own,
    /// Run here as in every partition (the control's) or as the far end of a flow's start,
    /// and counted by another partition.
    Replica,
}

impl Simulation {
    /// Why this run cannot be split over threads yet: one line per feature that shares state
    /// between partitions without a message (empty: it can).
    pub fn partition_blockers(&self) -> Vec<String> {
        split_blockers(&self.cfg.switch)
    }

    /// The split of this run's network into at most `parts` partitions: under
    /// [`Self::partition_rule`], with the hosts each instant trigger joins
    /// ([`Self::hosts_kept_together`]) in one partition.
    pub fn partitioning(&self, parts: u32) -> Partitioning {
        self.topology()
            .partition_joining(parts, self.partition_rule(), &self.hosts_kept_together())
    }

    /// Which nodes a split of this run keeps together: every edge switch in one partition
    /// when the switch scheme's edge switches share state
    /// ([`crate::routing::RoutingScheme::edges_share_state`]), else the network's structure.
    pub fn partition_rule(&self) -> PartitionRule {
        if self.cfg.switch.edges_share_state() {
            PartitionRule::EdgesTogether
        } else {
            PartitionRule::Structure
        }
    }

    /// Makes this simulation partition `index` of `partitioning`'s split of its network.
    pub(super) fn become_partition(&mut self, index: u32, of_node: Arc<[u32]>, parts: u32) {
        self.world.outbox = Some(Box::new(Outbox::new(
            index,
            &of_node,
            &self.world.port_to,
            parts,
        )));
        self.shard = Some(Box::new(Shard {
            index,
            of_node,
            lb_keys: Vec::new(),
            cwnd_keys: Vec::new(),
        }));
    }

    /// True when this simulation runs node `node`'s events (always, unsplit).
    #[inline]
    pub(super) fn owns(&self, node: u32) -> bool {
        self.shard
            .as_deref()
            .is_none_or(|s| s.of_node[node as usize] == s.index)
    }

    /// Whether this partition runs `timer`, whose entity is `entity`.
    pub(super) fn timer_turn(&self, timer: Timer, entity: u32) -> TimerTurn {
        let shard = self.shard.as_deref().expect("only partitions ask");
        if entity == self.world.control_entity() {
            return if shard.index == 0 {
                TimerTurn::Own
            } else {
                TimerTurn::Replica
            };
        }
        if self.owns(entity) {
            return TimerTurn::Own;
        }
        if timer.owner == Owner::FlowStart {
            let dst = self.flows[timer.id as usize].spec.dst;
            if self.owns(dst) {
                return TimerTurn::Replica;
            }
        }
        TimerTurn::Skip
    }

    /// Runs this partition's events up to and including `limit`.
    pub(super) fn run_window(&mut self, limit: crate::engine::Time) {
        let events_before = self.world.counters.events;
        self.run_events::<false, true>(limit);
        if self.world.counters.events != events_before {
            self.last_event = self.world.now;
        }
        let control = self.world.control_entity();
        self.world.enter(control);
    }

    /// This partition's part of a checkpoint's detail: the payload delivered to the receivers
    /// it holds, and the running flows whose senders it holds.
    pub(super) fn partition_detail(&self) -> super::parallel::PartDetail {
        let base = self.flows.base();
        let mut detail = super::parallel::PartDetail::default();
        for (i, f) in self.flows.iter().enumerate() {
            if self.owns(f.spec.dst) {
                detail.payload_delivered += f.delivered;
            }
            if f.phase == Phase::Running && self.owns(f.spec.src) {
                detail.running.push((base + i as u32, f.spec.id));
            }
        }
        detail
    }

    /// The payload delivered so far and the running flows' ids, in flow order (what a
    /// checkpoint's caller may ask for; see [`super::parallel::Watch`]).
    pub fn checkpoint_detail(&self) -> super::parallel::Detail {
        let part = self.partition_detail();
        super::parallel::Detail {
            payload_delivered: part.payload_delivered,
            running: part.running.into_iter().map(|(_, id)| id).collect(),
        }
    }

    /// Moves this partition's clock to `t` if it is behind (a run stopped at a checkpoint
    /// leaves every partition where one thread's `run_until(t)` would).
    pub(super) fn settle_at(&mut self, t: crate::engine::Time) {
        self.world.now = self.world.now.max(t);
    }

    /// The last instant an event may happen at (just before the configured end).
    pub(super) fn last_instant(&self) -> crate::engine::Time {
        self.cfg.end.saturating_sub(1)
    }

    /// The time of this partition's next event, if any.
    pub(super) fn next_event_time(&mut self) -> Option<crate::engine::Time> {
        self.world.events.peek_time()
    }

    /// What this partition sent to partition `to` since the last exchange.
    pub(super) fn sent_to(&mut self, to: usize) -> &mut Parcel {
        &mut self.world.outbox.as_deref_mut().expect("a partition").sent[to]
    }

    /// Takes in packets another partition sent here, leaving `parcel` empty: each arrives as
    /// it would have on one thread, at its time and with its tie-break.
    pub(super) fn take_in(&mut self, parcel: &mut Parcel) {
        let mut payloads = parcel.payloads.drain(..).peekable();
        for (i, (&(at, order), &packet)) in parcel.stamps.iter().zip(&parcel.packets).enumerate() {
            let link = packet.egress;
            let h = self.world.pkts.alloc(packet);
            if payloads.peek().is_some_and(|(at, _)| *at as usize == i) {
                let (_, words) = payloads.next().expect("peeked");
                self.world.payloads.insert(h, words);
            }
            self.world.events.push(at, order, Event::arrive(h, link));
        }
        drop(payloads);
        parcel.stamps.clear();
        parcel.packets.clear();
        for (at, order, event) in parcel.events.drain(..) {
            self.world.events.push(at, order, event);
        }
    }

    /// Schedules `timer` at node `node`'s entity: here, or through the outbox when another
    /// partition owns the node (ordered as one thread would: by the running entity's count).
    /// Only for what reaches another node no sooner than a link could carry it.
    pub(super) fn set_timer_at(&mut self, node: u32, at: crate::engine::Time, timer: Timer) {
        let Some(shard) = self
            .shard
            .as_deref()
            .filter(|s| s.of_node[node as usize] != s.index)
        else {
            self.world.set_timer(at, timer);
            return;
        };
        let to = shard.of_node[node as usize] as usize;
        let at = at.max(self.world.now);
        let order = self.world.order.next_order(at - self.world.now);
        let outbox = self.world.outbox.as_deref_mut().expect("a partition");
        outbox.sent[to]
            .events
            .push((at, order, Event::timer(timer)));
    }

    /// Schedules flow `f`'s start at `at` (a flow released by the flows it waited for) and,
    /// when another partition holds its receiving end, the start's replica there, one
    /// crossing of the fabric later (still before its first packet can arrive), with the
    /// same tie-break.
    pub(super) fn schedule_start(&mut self, f: u32, at: crate::engine::Time) {
        let at = at.max(self.world.now);
        let order = self.world.order.next_order(at - self.world.now);
        let start = Event::timer(super::flows::start_timer(f));
        self.world.events.push(at, order, start);
        let Some(shard) = self.shard.as_deref() else {
            return;
        };
        let spec = &self.flows[f as usize].spec;
        let (src, dst) = (spec.src, spec.dst);
        let to = shard.of_node[dst as usize];
        if to == shard.of_node[src as usize] {
            return;
        }
        let later = at + self.one_way_latency(src, dst);
        let outbox = self.world.outbox.as_deref_mut().expect("a partition");
        outbox.sent[to as usize].events.push((later, order, start));
    }

    /// Folds the partitions of one run (in partition order) into the simulation a single
    /// thread would have ended with: each flow's sender side from its source's partition and
    /// receiver side from its destination's, each port from its node's, counters and books
    /// summed, load-balancer records in event order.
    pub(super) fn fold_partitions(mut parts: Vec<Simulation>) -> Simulation {
        let of_node = Arc::clone(&parts[0].shard.as_deref().expect("partitions").of_node);
        let owner = |node: u32| of_node[node as usize] as usize;
        let flows = parts[0].flows.len();
        // The receiver halves first: the senders' swap below moves flows between partitions.
        let received: Vec<_> = (0..flows)
            .map(|i| {
                let f = &parts[owner(parts[0].flows[i].spec.dst)].flows[i];
                (f.delivered, f.stats.max_reorder, f.stats.reorder)
            })
            .collect();
        let (first, rest) = parts.split_first_mut().expect("one partition at least");
        for (i, halves) in received.into_iter().enumerate() {
            let src = owner(first.flows[i].spec.src);
            if src != 0 {
                std::mem::swap(&mut first.flows[i], &mut rest[src - 1].flows[i]);
            }
            let f = &mut first.flows[i];
            (f.delivered, f.stats.max_reorder, f.stats.reorder) = halves;
        }
        for p in 0..first.world.ports.len() {
            let node = owner(first.world.port_from[p]);
            if node != 0 {
                std::mem::swap(
                    &mut first.world.ports[p],
                    &mut rest[node - 1].world.ports[p],
                );
                std::mem::swap(
                    &mut first.world.port_cold[p],
                    &mut rest[node - 1].world.port_cold[p],
                );
            }
        }
        let rest: Vec<&Simulation> = rest.iter().collect();
        first.absorb_partitions(&rest, 1, &owner);
        parts.swap_remove(0)
    }

    /// What a run split over threads has produced so far, as one thread would show it: `fresh`
    /// (the same run, built and not run) with every flow's record (its sender's, with the
    /// receiver's counts), each port's counters and every partition's outputs folded in. The
    /// partitions go on unchanged; the view has no senders, receivers or queues, for its
    /// summary and rows only.
    pub(super) fn folded_view(mut fresh: Simulation, parts: &[Simulation]) -> Simulation {
        let of_node = Arc::clone(&parts[0].shard.as_deref().expect("partitions").of_node);
        let owner = |node: u32| of_node[node as usize] as usize;
        let mut flows = super::flow_table::FlowTable::new();
        for i in 0..parts[0].flows.len() {
            let spec = &parts[0].flows[i].spec;
            let received = &parts[owner(spec.dst)].flows[i];
            let mut f = parts[owner(spec.src)].flows[i].without_endpoints();
            f.delivered = received.delivered;
            (f.stats.max_reorder, f.stats.reorder) =
                (received.stats.max_reorder, received.stats.reorder);
            flows.push(f);
        }
        fresh.flows = flows;
        for p in 0..fresh.world.port_cold.len() {
            let part = &parts[owner(fresh.world.port_from[p])];
            fresh.world.port_cold[p] = part.world.port_cold[p].clone();
        }
        fresh.halt.clone_from(&parts[0].halt);
        let all: Vec<&Simulation> = parts.iter().collect();
        fresh.absorb_partitions(&all, 0, &owner);
        fresh
    }

    /// Folds partitions `parts` (partition `first_index` and on; this simulation is partition
    /// 0 when `first_index` is 1) into this simulation's outputs: load-balancer records and
    /// congestion-window samples in event order, each port's collected series, PFC and credit
    /// state from its owner, the switch scheme's, the faults' and the counters' totals.
    fn absorb_partitions(
        &mut self,
        parts: &[&Simulation],
        first_index: usize,
        owner: &dyn Fn(u32) -> usize,
    ) {
        let index = |k: usize| first_index + k;
        let mut records = Vec::new();
        let mut samples = Vec::new();
        if let Some(shard) = self.shard.as_deref_mut() {
            let keys = std::mem::take(&mut shard.lb_keys);
            records.extend(keyed(0, keys, self.lb_records.drain(..)));
            let keys = std::mem::take(&mut shard.cwnd_keys);
            if let Some(c) = self.collector.as_deref() {
                samples.extend(keyed(0, keys, c.cwnd_samples().iter().copied()));
            }
        }
        for (k, part) in parts.iter().enumerate() {
            let shard = part.shard.as_deref().expect("partition");
            let records_of = part.lb_records.iter().copied();
            records.extend(keyed(index(k), shard.lb_keys.clone(), records_of));
            if let Some(c) = part.collector.as_deref() {
                let samples_of = c.cwnd_samples().iter().copied();
                samples.extend(keyed(index(k), shard.cwnd_keys.clone(), samples_of));
            }
        }
        self.lb_records = in_event_order(records);
        if let Some(c) = self.collector.as_deref_mut() {
            c.set_cwnd_samples(in_event_order(samples));
            for (k, part) in parts.iter().enumerate() {
                let theirs = |port: u32| owner(part.world.port_from[port as usize]) == index(k);
                c.absorb_ports(
                    part.collector.as_deref().expect("every partition collects"),
                    theirs,
                );
            }
        }
        if let Some(pfc) = self.pfc.as_deref_mut() {
            for (k, part) in parts.iter().enumerate() {
                let theirs = |node: u32| owner(node) == index(k);
                let other = part.pfc.as_deref().expect("every partition has PFC");
                pfc.absorb(other, &self.world.topo, theirs);
            }
        }
        fold_scheme_outputs(self, parts);
        let holder = |node: u32| owner(node).checked_sub(first_index).map(|k| parts[k]);
        self.fold_credit(&holder);
        if let Some(faults) = self.faults.as_deref_mut() {
            for part in parts {
                faults.absorb(
                    part.faults
                        .as_deref()
                        .expect("every partition has the faults"),
                );
            }
        }
        if let Some(counter) = self.fabric.elephants.as_deref_mut() {
            for part in parts {
                counter.absorb(
                    part.fabric
                        .elephants
                        .as_deref()
                        .expect("every partition counts"),
                );
            }
        }
        for part in parts {
            add_counters(&mut self.world.counters, &part.world.counters);
            add_books(&mut self.books, &part.books);
            self.world.pkts.add_peak_of(&part.world.pkts);
            self.fabric.reorder.absorb(&part.fabric.reorder);
            self.last_event = self.last_event.max(part.last_event);
            self.world.now = self.world.now.max(part.world.now);
            self.endpoint_bytes_released += part.endpoint_bytes_released;
            self.held_data += part.held_data;
            self.rejected.extend(part.rejected.iter().cloned());
        }
        self.world.outbox = None;
        self.shard = None;
        self.ran_as = (first_index + parts.len()) as u32;
    }
}

/// Combines the partitions' switch scheme counts (maxima for names starting `max_`, sums for
/// the rest) and link samples (by time, then link, as one thread's interval ends make them)
/// into `first`'s: each partition's instance of the scheme ran only its own switches.
fn fold_scheme_outputs(first: &mut Simulation, rest: &[&Simulation]) {
    let samples_of = |part: &Simulation| match &part.switching {
        Switching::Scheme { scheme, .. } => scheme.link_samples().to_vec(),
        Switching::Hashed => Vec::new(),
    };
    if !matches!(first.switching, Switching::Scheme { .. }) {
        return;
    }
    let mut stats = first.switch_stats();
    let mut link_samples = samples_of(first);
    for part in rest {
        for (total, (name, value)) in stats.iter_mut().zip(part.switch_stats()) {
            debug_assert_eq!(total.0, name, "every partition's scheme counts alike");
            total.1 = if name.starts_with("max_") {
                total.1.max(value)
            } else {
                total.1 + value
            };
        }
        link_samples.extend(samples_of(part));
    }
    link_samples.sort_by_key(|s| (s.time, s.link));
    if let Switching::Scheme { folded, .. } = &mut first.switching {
        *folded = Some(Box::new(super::SchemeOutputs {
            stats,
            link_samples,
        }));
    }
}

/// Items of partition `part` with the keys of the events that made them, and their index.
fn keyed<T>(
    part: usize,
    keys: Vec<u128>,
    items: impl Iterator<Item = T>,
) -> impl Iterator<Item = (u128, usize, usize, T)> {
    keys.into_iter()
        .zip(items)
        .enumerate()
        .map(move |(i, (key, item))| (key, part, i, item))
}

/// The partitions' items in the order one thread made them: by the key of the event that made
/// each (unique to one partition), then in the order that event made them.
fn in_event_order<T>(mut items: Vec<(u128, usize, usize, T)>) -> Vec<T> {
    items.sort_by_key(|&(key, part, i, _)| (key, part, i));
    items.into_iter().map(|(.., item)| item).collect()
}

/// Adds `b`'s counters to `a`'s.
fn add_counters(a: &mut crate::net::world::Counters, b: &crate::net::world::Counters) {
    let crate::net::world::Counters {
        data_sent,
        data_bytes_sent,
        data_delivered,
        data_duplicates,
        trimmed_arrivals,
        data_dropped,
        trims,
        acks_sent,
        nacks_sent,
        control_arrived,
        control_dropped,
        rts_sent,
        scheme_packets,
        scheme_consumed,
        credits_sent,
        credits_arrived,
        events,
        pfc_frames_sent,
        pfc_frames_arrived,
    } = *b;
    a.data_sent += data_sent;
    a.data_bytes_sent += data_bytes_sent;
    a.data_delivered += data_delivered;
    a.data_duplicates += data_duplicates;
    a.trimmed_arrivals += trimmed_arrivals;
    a.data_dropped += data_dropped;
    a.trims += trims;
    a.acks_sent += acks_sent;
    a.nacks_sent += nacks_sent;
    a.control_arrived += control_arrived;
    a.control_dropped += control_dropped;
    a.rts_sent += rts_sent;
    a.scheme_packets += scheme_packets;
    a.scheme_consumed += scheme_consumed;
    a.credits_sent += credits_sent;
    a.credits_arrived += credits_arrived;
    a.events += events;
    a.pfc_frames_sent += pfc_frames_sent;
    a.pfc_frames_arrived += pfc_frames_arrived;
}

/// Adds `b`'s books to `a`'s.
fn add_books(a: &mut super::PacketBooks, b: &super::PacketBooks) {
    for k in 0..super::books::KINDS {
        a.sent[k] += b.sent[k];
        a.arrived[k] += b.arrived[k];
        a.held[k] += b.held[k];
        for c in 0..super::books::CAUSES.len() {
            a.dropped[k][c] += b.dropped[k][c];
        }
    }
}
