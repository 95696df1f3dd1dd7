//! Port service: when a port is free, the next packet goes on its wire (a switch port serves
//! its header lane, then its data lane; a host NIC its header lane, then its host's senders).
use super::prefetch::{prefetch_flow, Stage};
use super::{Flow, HostState, Simulation, Switching};
use crate::engine::prefetch::{prefetch, prefetch_all};
use crate::engine::Handle;
use crate::net::lane::Queued;
use crate::net::port::{Admission, Port, SWITCH_PORT};
use crate::routing::SwitchCtx;
use crate::sim::observer::DropCause;
use crate::transport::Sender;

impl Simulation {
    /// Makes sure port `port` is served: now if its wire is free, else when it frees up.
    #[inline]
    pub(super) fn kick(&mut self, port: u32) {
        let now = self.world.now;
        let p = &mut self.world.ports[port as usize];
        if p.wakeup_pending() {
            return;
        }
        if p.busy(now) {
            p.set_wakeup_pending(true);
            let at = p.busy_until;
            self.world.schedule_port_wake(at, port);
        } else {
            self.start_next(port);
        }
    }

    /// Queues packet `h` in the header lane of host NIC `port` (the caller kicks the port).
    #[inline]
    pub(super) fn queue_header(&mut self, port: u32, h: Handle) {
        let size = self.world.pkts.get(h).size;
        self.world.ports[port as usize]
            .headers
            .push_back(Queued::new(h, size));
    }

    /// Prefetch stage `stage` of port `p` waking to send (see [`super::prefetch`]): far
    /// ahead every line of the port and its entry of `port_hosts` (the compact port -> host
    /// array, with the flow a host NIC expects to pull from next, kept as it pulls); then the
    /// queue slot it serves next, or for an idle host NIC the record of that flow, and the
    /// host's state (a NIC reads its ready list after every transmission); for an idle NIC,
    /// then the sender it will pull from and the front of its host's ready list; last, that
    /// sender's controls and the ends of its PSN records and send order. (A port with packets
    /// queued needs nothing past the slot: it holds the size they are served by.)
    #[inline(always)]
    pub(super) fn prefetch_port_wake(&self, stage: Stage, p: u32) {
        let w = &self.world;
        match stage {
            Stage::Far => {
                if let Some(port) = w.ports.get(p as usize) {
                    prefetch_all(port);
                }
                if let Some(nic) = self.port_hosts.get(p as usize) {
                    prefetch(nic);
                }
            }
            Stage::Mid => {
                if let Some(host) = self.nic_host(p) {
                    prefetch(host);
                }
                match w.ports.get(p as usize).and_then(next_slot) {
                    Some(slot) => prefetch(slot),
                    None => {
                        if let Some(flow) = self.idle_nic_flow(p) {
                            prefetch_flow(flow);
                        }
                    }
                }
            }
            Stage::Near => {
                if w.ports.get(p as usize).and_then(next_slot).is_none() {
                    if let Some(sender) = self.expected_sender(p) {
                        prefetch_all(sender);
                    }
                    let front = self.nic_host(p).and_then(|h| h.ready.as_slices().0.first());
                    if let Some(front) = front {
                        prefetch(front);
                    }
                }
            }
            Stage::Last => {
                if let Some(sender) = self.idle_nic_sender(p) {
                    sender.prefetch_controls();
                    sender.prefetch_send_lists();
                }
            }
        }
    }

    /// The state of the host whose NIC `port` is, if it is a host NIC.
    #[inline]
    fn nic_host(&self, port: u32) -> Option<&HostState> {
        let host = self.port_hosts.get(port as usize)?.host;
        self.hosts.get(host as usize)
    }

    /// The flow host NIC `port` is expected to pull its next packet from when it has nothing
    /// queued (not checked here), if it is a host NIC.
    #[inline]
    fn idle_nic_flow(&self, port: u32) -> Option<&Flow> {
        let f = self.port_hosts.get(port as usize)?.next_pull;
        self.flows.get(f as usize)
    }

    /// The sender of [`Self::idle_nic_flow`] (whether the NIC has something queued is not
    /// checked here).
    #[inline]
    fn expected_sender(&self, port: u32) -> Option<&Sender> {
        self.idle_nic_flow(port)?.sender.as_deref()
    }

    /// The sender host NIC `port` will pull its next packet from, if it is a host NIC with
    /// nothing queued.
    #[inline]
    fn idle_nic_sender(&self, port: u32) -> Option<&Sender> {
        if self
            .world
            .ports
            .get(port as usize)
            .and_then(next_slot)
            .is_some()
        {
            return None;
        }
        self.expected_sender(port)
    }

    /// The port's wire is free: put its next packet on it.
    pub(super) fn start_next(&mut self, port: u32) {
        let host = self.port_hosts[port as usize].host;
        // A packet whose mark waits for its departure is settled as it leaves.
        if self.world.ports[port as usize].departing() {
            self.world.settle_departure(port);
        }
        // Only the collector asks whether this packet was marked (the cold part of the port is
        // otherwise not read when serving it).
        let marks_before = self
            .collector
            .is_some()
            .then(|| self.world.port_cold[port as usize].ecn_marks());
        // PFC: the bytes to credit to the packet's ingress account once it is on the wire.
        let mut pfc_credit = None;
        let next = if host == SWITCH_PORT {
            let h = if self.pfc.is_some() {
                let (h, credit) = self.pfc_dequeue(port);
                pfc_credit = credit;
                h
            } else {
                self.world.dequeue(port)
            };
            if let (
                Some(q),
                Switching::Scheme {
                    egress_hook: true, ..
                },
            ) = (h, &self.switching)
            {
                self.scheme_egress(port, q.handle);
            }
            h
        } else {
            match self.world.ports[port as usize].headers.pop_front() {
                Some(q) => Some(q),
                None if self.pfc.is_some() && self.pfc_host_paused(port) => None,
                None => {
                    let pulled = self.pull_data(host);
                    self.note_next_pull(port, host);
                    pulled
                }
            }
        };
        let Some(mut q) = next else { return };
        let h = q.handle;
        let deliver = match self.faults.as_deref_mut() {
            None => true,
            Some(f) => f.on_wire(&mut self.world, port, &mut q),
        };
        let now = self.world.now;
        self.world.transmit(port, q, deliver);
        let p = &self.world.ports[port as usize];
        if let Some(c) = self.collector.as_deref_mut() {
            c.on_tx(
                port,
                now,
                q.size,
                Some(self.world.port_cold[port as usize].ecn_marks()) != marks_before,
            );
        }
        // A packet whose mark waits for its departure wakes the port then, whatever is queued.
        let more = !p.is_empty()
            || (host != SWITCH_PORT && !self.hosts[host as usize].ready.is_empty())
            || p.departing();
        if more {
            let at = p.busy_until;
            self.world.ports[port as usize].set_wakeup_pending(true);
            self.world.schedule_port_wake(at, port);
        }
        if !deliver {
            self.fault_drop(h);
        }
        if let Some((ingress, size)) = pfc_credit {
            self.pfc_release(port, ingress, size);
        }
    }

    /// The switch scheme watches a packet leave a switch port.
    fn scheme_egress(&mut self, port: u32, h: Handle) {
        let switch = self.world.topo.links[port as usize].from - self.world.topo.hosts;
        let header = self.transport.header;
        if let Switching::Scheme { scheme, rngs, .. } = &mut self.switching {
            let rng = &mut rngs[switch as usize];
            let mut ctx = SwitchCtx::new(&mut self.world, rng, header, &mut self.scheme_actions);
            scheme.egress(&mut ctx, switch, port, h);
        }
        self.run_scheme_actions();
    }

    /// A packet reaches a switch egress queue: it is queued, trimmed or dropped.
    #[inline]
    pub(super) fn enqueue_switch(&mut self, port: u32, h: Handle) {
        let now = self.world.now;
        if let Some(c) = self.collector.as_deref_mut() {
            if !self.world.pkts.get(h).is_header() {
                c.on_data_arrival(port, now, self.world.ports[port as usize].occupancy(now));
            }
        }
        if self.pfc.is_some() && !self.pfc_admit(port, h) {
            self.kick(port);
            return;
        }
        match self.world.admit(port, h) {
            Admission::Queued => {}
            Admission::Trimmed(v) => {
                if self.world.topo.links[port as usize].to < self.world.topo.hosts {
                    self.world.pkts.get_mut(v).trimmed_at_last_hop = true;
                }
                if let Some(c) = self.collector.as_deref_mut() {
                    c.on_trim(port, now);
                }
            }
            Admission::Dropped(v) => self.overflow_drop(port, v),
        }
        self.kick(port);
    }

    /// Packet `h` found no room at switch port `port`: the collector and observer hear of it
    /// and it is freed.
    pub(super) fn overflow_drop(&mut self, port: u32, h: Handle) {
        if let Some(c) = self.collector.as_deref_mut() {
            c.on_drop(port, self.world.now);
        }
        self.observe_drop(h, port, DropCause::Overflow);
        self.world.pkts.free(h);
    }

    /// The congestion control's timed switch ([`crate::cc::CcScheme::timed_switch_at`]) turns
    /// on, at its time: every running sender hears of it and every later one is built with it
    /// on. (The reference flips one global flag at the first switch-queue arrival after the
    /// time, anywhere in the network: an instant no host could know of, and that a run split
    /// over threads could not find; under load it is within a packet time of the time.)
    #[cold]
    pub(super) fn switch_on_timed_switch(&mut self) {
        self.timed_switch_on = true;
        for flow in self.flows.iter_mut() {
            if let Some(s) = flow.sender.as_mut() {
                s.cc_mut().on_timed_switch();
            }
        }
    }
}

/// The queue slot a port serves next: the front of its header lane, else of its data lane.
#[inline]
fn next_slot(port: &Port) -> Option<&Queued> {
    port.headers.front().or_else(|| port.data.front())
}

#[cfg(test)]
mod tests {
    use crate::net::world::{Event, EventKind};

    /// A packet reaches a switch in the picosecond its egress port finishes the packet before
    /// it: by delay class the arrival (scheduled a link latency ahead) runs first; with
    /// `departures_first` the port's wake-up does, whichever entity scheduled what.
    #[test]
    fn departures_first_runs_a_port_wake_before_same_time_arrivals() {
        let first_at_the_tie = |departures_first: bool, waking_entity: u32| {
            let mut w = crate::routing::test_world(&[100_000_000_000; 2], 0);
            w.departures_first = departures_first;
            let tie = 1_332_000;
            w.enter(0);
            w.schedule(tie, Event::arrive(5, 0));
            w.now = tie - 332_000;
            w.enter(waking_entity);
            w.schedule_port_wake(tie, 1);
            w.schedule(tie + 1, Event::egress(9));
            let order: Vec<EventKind> = std::iter::from_fn(|| w.events.pop())
                .map(|(_, e)| e.kind())
                .collect();
            assert_eq!(order.len(), 3);
            assert_eq!(order[2], EventKind::Egress(9), "time still comes first");
            order[0]
        };
        for entity in [0, 1] {
            assert_eq!(first_at_the_tie(false, entity), EventKind::Arrive(5, 0));
            assert_eq!(first_at_the_tie(true, entity), EventKind::PortWake(1));
        }
    }
}
