//! Network model: packets, topologies, routing, egress queues.
pub mod hash;
pub mod packet;
pub mod port;
pub mod topo_file;
pub mod topology;

pub use packet::{Kind, Packet};
pub use topology::{FatTreeSpec, Topology};
