//! Observers: a library user's callbacks, called as things happen (flow completions,
//! load-balancer events, packet drops), with a way to add flows from them.
use super::Flow;
use crate::engine::Time;
use crate::lb::LbRecord;
use crate::net::Kind;
use crate::workload::FlowSpec;

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

/// Flows an observer wants added, collected while it runs and added right after.
#[derive(Default)]
pub struct Injector {
    pending: Vec<FlowSpec>,
}

impl Injector {
    /// Adds `spec` once the callback returns (it starts at its start time, or now if that has
    /// passed; dependencies on finished flows count as met). Flows that cannot be added are
    /// listed by [`super::Simulation::rejected_flows`].
    pub fn add_flow(&mut self, spec: FlowSpec) {
        self.pending.push(spec);
    }

    pub(super) fn take(&mut self) -> Vec<FlowSpec> {
        std::mem::take(&mut self.pending)
    }
}

/// Callbacks from a running simulation (every method has an empty default).
pub trait Observer: Send {
    /// `flow` finished (its last byte was acknowledged); `inject` adds follow-up flows.
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
