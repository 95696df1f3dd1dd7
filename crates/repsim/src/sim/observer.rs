//! Observers: a library user's callbacks, told of flow completions, load-balancer events and
//! packet drops, with a way to add flows from them.
//!
//! What an observer hears is noted as it happens and told at the end of its slice of simulated
//! time ([`OBSERVER_SLICE`]): every event up to and including a multiple of the slice has run
//! when the observer hears of them, in the order one thread ran them, and the flows it adds
//! join the run at that instant. A run split over threads meets at the same instants, so an
//! observer hears the same things in the same order, and its flows start at the same times, at
//! any thread count.
use super::Flow;
use crate::engine::time::US;
use crate::engine::Time;
use crate::lb::LbRecord;
use crate::net::Kind;
use crate::workload::FlowSpec;

/// Simulated time between two instants at which observers hear what happened (and the flows
/// they add join the run).
pub const OBSERVER_SLICE: Time = US;

/// The first multiple of [`OBSERVER_SLICE`] at or after `t`: where what happens at `t` is told.
pub(super) fn slice_end(t: Time) -> Time {
    t.div_ceil(OBSERVER_SLICE).saturating_mul(OBSERVER_SLICE)
}

/// Why a packet was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// A full switch queue (trimming off).
    Overflow,
    /// A failed link or switch.
    Fault,
    /// No route was left at a switch.
    NoRoute,
    /// Random loss at the receiving port (`[loss]`).
    RandomLoss,
}

/// A lost packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketDrop {
    /// When.
    pub time: Time,
    /// The port (link) where it was lost (for `NoRoute`: the link it arrived on).
    pub port: u32,
    /// The flow it belonged to (meaningless for scheme-made packets).
    pub flow: u32,
    /// What it was.
    pub kind: Kind,
    /// Why it was lost.
    pub cause: DropCause,
}

/// Flows an observer wants added, collected while it hears a slice's events and added at the
/// slice's end.
#[derive(Default)]
pub struct Injector {
    pending: Vec<FlowSpec>,
}

impl Injector {
    /// Adds `spec` at the end of the slice being told (it starts at its start time, or then
    /// if that has passed; dependencies on finished flows count as met). Flows that cannot be
    /// added are listed by [`super::Simulation::rejected_flows`].
    pub fn add_flow(&mut self, spec: FlowSpec) {
        self.pending.push(spec);
    }

    /// The flows added so far, in the order they were.
    pub(super) fn take(&mut self) -> Vec<FlowSpec> {
        std::mem::take(&mut self.pending)
    }
}

/// Callbacks from a running simulation (every method has an empty default).
pub trait Observer: Send {
    /// `flow` finished (its last byte was acknowledged), as its sender sees it; `inject` adds
    /// follow-up flows.
    fn flow_completed(&mut self, flow: &Flow, inject: &mut Injector) {
        let _ = (flow, inject);
    }
    /// A load balancer did something worth recording.
    fn lb_event(&mut self, record: &LbRecord) {
        let _ = record;
    }
    /// A packet was lost.
    fn packet_dropped(&mut self, drop: &PacketDrop) {
        let _ = drop;
    }
}

/// Something an observer will hear of, as noted when it happened.
#[derive(Clone, Copy, Debug)]
pub(super) enum Heard {
    /// Flow (index) finished.
    Completed(u32),
    /// A load-balancer record.
    Lb(LbRecord),
    /// A lost packet.
    Drop(PacketDrop),
}

/// A noted event with where it happened: the key of the event that made it and the node it
/// happened at (one partition's, so that the partitions' notes interleave as one thread's).
#[derive(Clone, Copy, Debug)]
pub(super) struct Noted {
    pub key: u128,
    pub node: u32,
    pub heard: Heard,
}

/// What an observer is told: a noted event, a completed flow copied as its sender holds it.
pub(super) enum Told {
    /// A completed flow (index, copy).
    Completed(u32, Box<Flow>),
    /// A load-balancer record.
    Lb(LbRecord),
    /// A lost packet.
    Drop(PacketDrop),
}

/// One partition's (or one thread's) notes of a slice, ready to be told: with their key, node
/// and their place among that partition's notes.
pub(super) type Telling = Vec<(u128, u32, u32, Told)>;

/// A slice's notes from every partition in the order one thread made them: by event key, then
/// node, then each partition's own order.
pub(super) fn in_told_order(mut notes: Telling) -> Telling {
    notes.sort_by_key(|&(key, node, i, _)| (key, node, i));
    notes
}

/// The flows a slice's notes (in told order) report finished, with their finish times.
pub(super) fn finished_in(notes: &Telling) -> Vec<(u32, Time)> {
    (notes.iter())
        .filter_map(|(.., told)| match told {
            Told::Completed(f, flow) => Some((*f, flow.finish.unwrap_or_default())),
            _ => None,
        })
        .collect()
}

/// Tells `observer` a slice's notes (in told order); returns the flows it added, in the order
/// it added them.
pub(super) fn tell(observer: &mut dyn Observer, notes: Telling) -> Vec<FlowSpec> {
    let mut inject = Injector::default();
    for (.., told) in notes {
        match told {
            Told::Completed(_, flow) => observer.flow_completed(&flow, &mut inject),
            Told::Lb(record) => observer.lb_event(&record),
            Told::Drop(drop) => observer.packet_dropped(&drop),
        }
    }
    inject.take()
}

impl super::Simulation {
    /// Notes `heard`, which happened at node `node` in the event running now.
    pub(super) fn note(&mut self, node: u32, heard: Heard) {
        self.noted.push(Noted {
            key: self.current_key,
            node,
            heard,
        });
    }

    /// Whether something noted waits to be told.
    pub(super) fn has_noted(&self) -> bool {
        !self.noted.is_empty()
    }

    /// When the earliest note waiting to be told happened (notes are made in event order).
    pub(super) fn first_noted_time(&self) -> Option<Time> {
        (self.noted.first()).map(|n| crate::engine::queue::key_time(n.key))
    }

    /// The notes so far, ready to be told (each finished flow copied), forgotten here.
    pub(super) fn telling(&mut self) -> Telling {
        let noted = std::mem::take(&mut self.noted);
        (noted.into_iter().enumerate())
            .map(|(i, n)| {
                let told = match n.heard {
                    Heard::Completed(f) => {
                        Told::Completed(f, Box::new(self.flows[f as usize].without_endpoints()))
                    }
                    Heard::Lb(record) => Told::Lb(record),
                    Heard::Drop(drop) => Told::Drop(drop),
                };
                (n.key, n.node, i as u32, told)
            })
            .collect()
    }

    /// Learns that flow `f`, whose sender another partition holds, finished at `at` (so that
    /// a flow added later that waits for it finds it done, as on one thread).
    pub(super) fn learn_finished(&mut self, f: u32, at: Time) {
        let flow = &mut self.flows[f as usize];
        flow.finish.get_or_insert(at);
    }

    /// Adds the flows an observer added at the end of a slice; refusals are listed once (by
    /// the first partition of a split run).
    pub(super) fn add_told_flows(&mut self, specs: &[FlowSpec]) {
        let lists = self.shard.as_deref().is_none_or(|s| s.index == 0);
        for spec in specs {
            if let Err(e) = self.add_flow(spec.clone()) {
                if lists {
                    self.rejected.push(e.to_string());
                }
            }
        }
    }

    /// At slice end `at` on one thread: tells the observer (if any) what was noted and adds
    /// the flows it added, starting no sooner than `at`.
    pub(super) fn tell_slice(&mut self, at: Time) {
        self.world.now = self.world.now.max(at);
        let notes = in_told_order(self.telling());
        (self.completions).extend(finished_in(&notes).into_iter().map(|(f, _)| f));
        let Some(mut observer) = self.observer.take() else {
            return;
        };
        let specs = tell(&mut *observer, notes);
        self.observer = Some(observer);
        self.add_told_flows(&specs);
    }
}
