//! The discrete-event core: integer-picosecond time, the event queue, seeded random streams,
//! the packet arena and disjoint sets. Nothing here knows about networks.
pub mod arena;
pub mod disjoint;
pub mod hugepage;
pub mod order;
pub mod prefetch;
pub mod queue;
pub mod registry;
pub mod rng;
pub mod time;

pub use arena::{Arena, Handle};
pub use order::EventOrder;
pub use queue::EventQueue;
pub use rng::Rng;
pub use time::Time;
