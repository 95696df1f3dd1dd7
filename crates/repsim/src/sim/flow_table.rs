//! The flow table: every connection by index, of which a finished prefix can be dropped
//! (streamed out, see [`super::Simulation::drop_finished_prefix`]) so that a long trace keeps
//! only the flows still around.
//!
//! Indices stay global: a dropped flow's index is never reused. Packets and timers of a
//! dropped flow may still be in flight; they find a stand-in that reads as a finished flow
//! with neither sender nor receiver (the state of any finished, retired flow), so they are
//! discarded exactly as they would have been for the real record.
use std::ops::{Index, IndexMut};

use super::{Flow, Phase};
use crate::transport::Sizes;
use crate::workload::FlowSpec;

pub(super) struct FlowTable {
    /// Index of `held[0]`: flows below it were dropped.
    base: u32,
    held: Vec<Flow>,
    /// What a dropped index reads as (its contents are never reported).
    dropped: Flow,
}

impl FlowTable {
    pub(super) fn new() -> Self {
        FlowTable {
            base: 0,
            held: Vec::new(),
            dropped: Flow {
                spec: FlowSpec::new(0, 0, 0, 1, 0),
                phase: Phase::Done,
                started_at: Some(0),
                finish: Some(0),
                base_rtt: 0,
                rto: 0,
                stats: Default::default(),
                delivered: 0,
                sizes: Sizes::new(1, 2, 1),
                sender: None,
                receiver: None,
                in_ready_list: false,
                pacing_pending: false,
                control_timer_at: None,
                control_timers: false,
                deps_left: 0,
                packet_flags: 0,
            },
        }
    }

    /// Flows ever added (the next index).
    pub(super) fn len(&self) -> usize {
        self.base as usize + self.held.len()
    }

    /// Index of the first flow still held.
    pub(super) fn base(&self) -> u32 {
        self.base
    }

    pub(super) fn push(&mut self, flow: Flow) {
        self.held.push(flow);
    }

    /// Flow `i`, unless it was dropped.
    pub(super) fn get(&self, i: usize) -> Option<&Flow> {
        i.checked_sub(self.base as usize)
            .and_then(|k| self.held.get(k))
    }

    /// The flows still held, in index order.
    pub(super) fn held(&self) -> &[Flow] {
        &self.held
    }

    /// The flows still held, in index order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, Flow> {
        self.held.iter()
    }

    /// The flows still held, in index order.
    pub(super) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Flow> {
        self.held.iter_mut()
    }

    /// Drops the first `n` held flows.
    pub(super) fn drop_front(&mut self, n: usize) {
        self.held.drain(..n);
        self.base += n as u32;
    }
}

impl Index<usize> for FlowTable {
    type Output = Flow;
    fn index(&self, i: usize) -> &Flow {
        match i.checked_sub(self.base as usize) {
            Some(k) => &self.held[k],
            None => &self.dropped,
        }
    }
}

impl IndexMut<usize> for FlowTable {
    fn index_mut(&mut self, i: usize) -> &mut Flow {
        match i.checked_sub(self.base as usize) {
            Some(k) => &mut self.held[k],
            None => {
                // Whatever a late packet did to the stand-in is forgotten.
                self.dropped.phase = Phase::Done;
                &mut self.dropped
            }
        }
    }
}
