//! The network model: packets, egress ports, topologies as graphs, forwarding tables and
//! explicit paths. Nothing here knows about transports or schemes.
pub mod candidate_hops;
pub mod candidates;
pub mod context;
pub mod forwarding;
pub mod hash;
pub mod lane;
pub mod mmu;
pub mod outbox;
pub mod packet;
pub mod paths;
pub mod port;
pub mod topology;
pub mod world;

pub use context::RunContext;
pub use packet::{Kind, Packet};
pub use topology::{DragonflySpec, FatTreeSpec, LeafSpineSpec, RailSpec, Topology};
