//! Where a simulation's memory goes: bytes per structure (`repsim check --memory`, `repsim bench
//! --scale`). Counts what each structure holds on the heap now (capacities, which never shrink
//! during a run, so after a run they show its peak), not allocator overhead. The exception is a
//! flow's sender and receiver, whose windows are freed when the flow ends: those of finished
//! flows are counted with what they held then, so after a run that line is the sum over all
//! flows, the peak when every flow overlaps the others (a permutation) and more than it
//! otherwise.
use std::mem::size_of;

use super::{Flow, HostState, Simulation};
use crate::net::port::{Port, PortCold};
use crate::net::Packet;

/// Heap bytes of a flow's sender and receiver (both boxed: their structs are heap too).
pub(super) fn endpoint_bytes(flow: &Flow) -> usize {
    sender_bytes(flow) + receiver_bytes(flow)
}

/// Bytes a flow's sender holds (0 once it let go).
pub(super) fn sender_bytes(flow: &Flow) -> usize {
    (flow.sender.as_deref()).map_or(0, |s| size_of_val(s) + s.heap_bytes())
}

/// Bytes a flow's receiver holds (0 once it let go).
pub(super) fn receiver_bytes(flow: &Flow) -> usize {
    (flow.receiver.as_deref()).map_or(0, |r| size_of_val(r) + r.heap_bytes())
}

/// One line of a memory breakdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryItem {
    /// What it is.
    pub name: &'static str,
    /// How many of them (ports, flows, packets, ...), where that means something.
    pub count: usize,
    /// Bytes held.
    pub bytes: usize,
}

impl Simulation {
    /// Bytes held by each large structure, largest first, then the total.
    pub fn memory_breakdown(&self) -> Vec<MemoryItem> {
        let w = &self.world;
        let topo = &w.topo;
        let routes = &topo.routes;
        let port_queues: usize = w.ports.iter().map(Port::heap_bytes).sum();
        let flows = self.flows.held();
        let endpoints: usize =
            flows.iter().map(endpoint_bytes).sum::<usize>() + self.endpoint_bytes_released;
        let host_lists: usize = self
            .hosts
            .iter()
            .map(|h| h.ready.capacity() * size_of::<u32>())
            .sum();
        let mut items = vec![
            MemoryItem {
                name: "event queue",
                count: w.events.len(),
                bytes: w.events.heap_bytes() + w.order.heap_bytes(),
            },
            MemoryItem {
                name: "packet arena",
                count: w.pkts.peak(),
                bytes: w.pkts.heap_bytes(),
            },
            MemoryItem {
                name: "ports",
                count: w.ports.len(),
                bytes: w.ports.capacity() * size_of::<Port>()
                    + w.port_cold.capacity() * size_of::<PortCold>()
                    + w.port_to.capacity() * 4
                    + w.port_from.capacity() * 4
                    + self.port_hosts.capacity() * size_of::<super::PortHost>()
                    + w.port_classes.heap_bytes(),
            },
            MemoryItem {
                name: "port queues (packet handles)",
                count: w.ports.len(),
                bytes: port_queues,
            },
            MemoryItem {
                name: "forwarding table (switch x edge switch)",
                count: routes.table.len(),
                bytes: (routes.table.capacity() + routes.uniform.capacity()) * 4,
            },
            MemoryItem {
                name: "forwarding port groups",
                count: routes.group_count(),
                bytes: routes.group_ports.capacity() * 4,
            },
            MemoryItem {
                name: "topology (nodes, links, adjacency)",
                count: topo.links.len(),
                bytes: topo.heap_bytes(),
            },
            MemoryItem {
                name: "flows",
                count: flows.len(),
                bytes: std::mem::size_of_val(flows),
            },
            MemoryItem {
                name: "senders and receivers (windows, SACK state)",
                count: flows.len(),
                bytes: endpoints,
            },
            MemoryItem {
                name: "hosts (ready lists)",
                count: self.hosts.len(),
                bytes: self.hosts.capacity() * size_of::<HostState>() + host_lists,
            },
            MemoryItem {
                name: "explicit paths",
                count: w.paths.len(),
                bytes: w.paths.heap_bytes(),
            },
        ];
        items.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(b.name)));
        let total = items.iter().map(|i| i.bytes).sum();
        items.push(MemoryItem {
            name: "total",
            count: 0,
            bytes: total,
        });
        items
    }

    /// Bytes one more packet in flight costs: its arena slot plus, at most, one event entry.
    pub fn bytes_per_packet_in_flight() -> usize {
        size_of::<Packet>() + 16
    }
}
