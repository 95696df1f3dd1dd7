//! repsim: a deterministic packet-level simulator for datacenter multipath load balancing.
pub mod net;
