//! Network model: links, switches, queues, routing.
pub mod hash;
