//! OPS (oblivious packet spraying): a fresh uniformly random EV for every packet; feedback is
//! ignored.
use super::{random_ev, LbContext, LbOptions, LoadBalancer};
use crate::engine::{Rng, Time};

/// Oblivious spraying.
pub struct Ops {
    evs_size: u32,
}

/// Registry constructor.
pub fn build(opts: &LbOptions, _ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
    Box::new(Ops {
        evs_size: opts.evs_size,
    })
}

impl LoadBalancer for Ops {
    fn next_ev(&mut self, _now: Time, rng: &mut Rng) -> u16 {
        random_ev(rng, self.evs_size)
    }
}
