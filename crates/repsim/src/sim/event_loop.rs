//! The event loop: running a simulation up to a time, to its end or to its next completion,
//! and routing every event to the entity it happens at and the component that owns it (an
//! arrival to its node, a port's wake and a switch's egress to the port's node, a timer to its
//! owner), with the PFC deadlock watch's instants in between.
use super::{observer, pfc, shard, Simulation};
use crate::engine::{queue, EventOrder, Time};
use crate::net::world::{EventKind, Owner, Timer};

impl Simulation {
    /// Processes every event up to and including time `until` (never at or past the
    /// configured end) and leaves the clock at `until` (or just before the end), so that flows
    /// added next start then. Returns false when nothing is left to do before the end.
    pub fn run_until(&mut self, until: Time) -> bool {
        let limit = until.min(self.cfg.end.saturating_sub(1));
        let more = self.process::<false>(limit);
        self.world.now = self.world.now.max(limit);
        more
    }

    /// Runs until no event is left before the end time.
    pub fn run_until_idle(&mut self) {
        self.process::<false>(self.cfg.end.saturating_sub(1));
    }

    /// Runs until some flow completes (returning its index) or, if none does, until `until`
    /// (returning `None`; the clock is then left at `until` as with [`Self::run_until`]). With
    /// an observer, it runs to the end of the completion's slice ([`super::OBSERVER_SLICE`]),
    /// where the observer hears of it, and leaves the clock there.
    pub fn run_until_completion(&mut self, until: Time) -> Option<u32> {
        if self.completions.is_empty() {
            let limit = until.min(self.cfg.end.saturating_sub(1));
            self.process::<true>(limit);
            if self.completions.is_empty() {
                self.world.now = self.world.now.max(limit);
                return None;
            }
        }
        Some(self.completions.remove(0))
    }

    /// The event loop: processes events up to `limit`, stopping early after a completion if
    /// `STOP_ON_COMPLETION` (at the end of its slice, when observing). Returns whether
    /// anything is left before the end.
    fn process<const STOP_ON_COMPLETION: bool>(&mut self, limit: Time) -> bool {
        if self.observing {
            return self.process_in_slices::<STOP_ON_COMPLETION>(limit);
        }
        self.process_events::<STOP_ON_COMPLETION>(limit)
    }

    /// [`Self::process`] while observing: the events run slice by slice, and at each slice end
    /// with something noted the observer hears of it (see [`super::observer`]). The next
    /// slice end is that of the earliest note, or of the next event when nothing is noted (no
    /// sooner than one slice after the last telling), so slices with nothing noted are passed
    /// over.
    fn process_in_slices<const STOP_ON_COMPLETION: bool>(&mut self, limit: Time) -> bool {
        loop {
            let earliest = match self.first_noted_time() {
                Some(t) => t,
                None => match self.world.events.peek_time() {
                    Some(t) => t,
                    None => return false,
                },
            };
            let at = self.next_telling.max(observer::slice_end(earliest));
            if at > limit {
                return self.process_events::<false>(limit);
            }
            self.process_events::<false>(at);
            if self.halt.is_some() {
                return false;
            }
            if self.has_noted() {
                self.tell_slice(at);
                self.next_telling = at + observer::OBSERVER_SLICE;
                if STOP_ON_COMPLETION && !self.completions.is_empty() {
                    return true;
                }
            }
        }
    }

    /// [`Self::process`] in one go.
    fn process_events<const STOP_ON_COMPLETION: bool>(&mut self, limit: Time) -> bool {
        let events_before = self.world.counters.events;
        let more = self.event_loop::<STOP_ON_COMPLETION>(limit);
        if self.world.counters.events != events_before {
            self.last_event = self.world.now;
        }
        more
    }

    /// Runs the events up to `limit` (see [`Self::process`]); what is scheduled outside an
    /// event (before, between and after runs) is the control entity's.
    ///
    /// The PFC deadlock watch looks at its fixed instants in between, each once every event
    /// before it has run (see [`pfc`]).
    fn event_loop<const STOP_ON_COMPLETION: bool>(&mut self, limit: Time) -> bool {
        let more = loop {
            let watch = self.pfc_next_watch();
            if watch > limit {
                break self.run_events::<STOP_ON_COMPLETION, false>(limit);
            }
            let more = self.run_events::<STOP_ON_COMPLETION, false>(watch - 1);
            let waiting = STOP_ON_COMPLETION && !self.completions.is_empty();
            // An instant is looked at only once an event at or after it, up to the limit,
            // is next: as a run split over threads does (whose windows go where events are).
            let next = self.world.events.peek_time();
            if self.halt.is_some() || waiting || next.is_none_or(|t| t > limit) {
                break more;
            }
            let delivered = self.world.counters.data_delivered;
            let paused = self.pfc_paused_links(watch);
            self.pfc_watch(delivered, &paused);
            if self.halt.is_some() {
                break false;
            }
        };
        let control = self.world.control_entity();
        self.world.enter(control);
        more
    }

    /// With `PARTITION`, this simulation is one partition of a network split over threads: it
    /// runs only the timers of its own nodes (see [`shard`]) and notes each event's key.
    pub(super) fn run_events<const STOP_ON_COMPLETION: bool, const PARTITION: bool>(
        &mut self,
        limit: Time,
    ) -> bool {
        if self.halt.is_some() {
            return false;
        }
        while let Some(t) = self.world.events.peek_time() {
            if t > limit {
                return t < self.cfg.end;
            }
            let earlier = self.world.now;
            let (key, ev) = self.world.events.pop_keyed().expect("peeked");
            self.current_key = key;
            let t = queue::key_time(key);
            self.prefetch_ahead();
            self.world.now = t;
            self.world.counters.events += 1;
            // Each event runs as the entity it happens at, which orders what it schedules.
            match ev.kind() {
                EventKind::Arrive(h, link) => {
                    let node = self.world.port_to[link as usize];
                    self.world.enter(node);
                    self.on_arrive(h, link, node)
                }
                EventKind::PortWake(p) => {
                    let node = self.world.port_from[p as usize];
                    self.world.enter(node);
                    self.world.ports[p as usize].set_wakeup_pending(false);
                    self.start_next(p);
                }
                EventKind::Egress(h) => {
                    let port = self.world.pkts.get(h).egress;
                    let node = self.world.port_from[port as usize];
                    self.world.enter(node);
                    self.enqueue_switch(port, h);
                }
                EventKind::Timer(timer) => {
                    let entity = self.timer_entity(timer, queue::key_order(key));
                    if PARTITION {
                        // Every event counts once network-wide: where its entity is.
                        match self.timer_turn(timer, entity) {
                            shard::TimerTurn::Own => {}
                            shard::TimerTurn::Replica => self.world.counters.events -= 1,
                            shard::TimerTurn::Skip => {
                                self.world.counters.events -= 1;
                                self.world.now = earlier;
                                continue;
                            }
                        }
                    }
                    self.world.enter(entity);
                    self.on_timer(timer, entity);
                    // Only timers halt a run (the PFC deadlock watch).
                    if self.halt.is_some() {
                        return false;
                    }
                }
            }
            if STOP_ON_COMPLETION && !self.completions.is_empty() {
                return true;
            }
        }
        false
    }

    /// The entity a timer of order `order` fires at: a connection's and a flow start's at the
    /// flow's sending host, a receiver's notice at the receiving host, a pull pacer's at its
    /// host, a PFC pause's expiry at the paused port's node and a pause refresh at the pausing
    /// node, a switch scheme's at the switch that set it (schemes set timers only while a
    /// switch runs them), a trigger's notice at the trigger's home host; faults, reconvergence, workload sources and the congestion
    /// control's timed switch at the control entity.
    fn timer_entity(&self, timer: Timer, order: u64) -> u32 {
        match timer.owner {
            Owner::Switch => EventOrder::entity_of(order),
            Owner::Connection | Owner::FlowStart => self.flows[timer.id as usize].spec.src,
            Owner::Receiver => self.flows[timer.id as usize].spec.dst,
            Owner::Dependency => self.flows[timer.id as usize].spec.src,
            Owner::Trigger => self.trigger_home(timer.id),
            Owner::Pacer => timer.id,
            Owner::Pfc if timer.kind == pfc::timer::EXPIRE => {
                self.world.port_from[timer.id as usize]
            }
            Owner::Pfc => self.world.port_to[timer.id as usize],
            Owner::Fault | Owner::Reroute | Owner::Source | Owner::CcSwitch => {
                self.world.control_entity()
            }
        }
    }

    fn on_timer(&mut self, timer: Timer, entity: u32) {
        match timer.owner {
            Owner::Connection => self.on_connection_timer(timer),
            Owner::FlowStart => self.on_flow_start(timer.id),
            Owner::Fault => {
                if let Some(f) = self.faults.as_deref_mut() {
                    f.on_action(&mut self.world, timer.id);
                }
            }
            Owner::Reroute => {
                if let Some(f) = self.faults.as_deref_mut() {
                    f.on_reroute(&mut self.world, timer.id);
                }
            }
            Owner::Switch => self.on_scheme_timer(timer, entity - self.world.topo.hosts),
            Owner::Source => self.on_source(timer.id),
            Owner::Pacer => self.on_pacer(timer.id),
            Owner::Pfc => self.on_pfc_timer(timer),
            Owner::Receiver => self.on_sender_finished(timer.id),
            Owner::Dependency => self.release_dependency(timer.id),
            Owner::Trigger => self.count_activation(timer.id),
            Owner::CcSwitch => self.switch_on_timed_switch(),
        }
    }
}
