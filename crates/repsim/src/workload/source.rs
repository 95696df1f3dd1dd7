//! Lazy workload sources: flows produced one at a time as simulated time reaches their start,
//! so a long trace never sits in memory.
use super::FlowSpec;

/// A stream of flows in non-decreasing start order. The simulation asks for the next flow when
/// the previous one's start time arrives.
pub trait FlowSource: Send {
    /// The next flow, or `None` when the source is exhausted.
    fn next_flow(&mut self) -> Option<FlowSpec>;
}

/// A source over a list of flows (sorted by start time when it is made).
pub struct ListSource {
    flows: std::vec::IntoIter<FlowSpec>,
}

impl ListSource {
    /// A source yielding `flows` in order of their start times (stable for equal times).
    pub fn new(mut flows: Vec<FlowSpec>) -> Self {
        flows.sort_by_key(|f| f.start);
        ListSource {
            flows: flows.into_iter(),
        }
    }
}

impl FlowSource for ListSource {
    fn next_flow(&mut self) -> Option<FlowSpec> {
        self.flows.next()
    }
}

/// Any closure producing flows is a source.
impl<F: FnMut() -> Option<FlowSpec> + Send> FlowSource for F {
    fn next_flow(&mut self) -> Option<FlowSpec> {
        self()
    }
}
