//! ECMP: one EV for the whole connection (`flow_index mod evs_size`, as the reference does), so
//! every packet of a flow follows one hashed path and collisions between flows persist.
use super::{LbContext, LbOptions, LoadBalancer};
use crate::engine::{Rng, Time};

/// Fixed-path ECMP.
pub struct Ecmp {
    ev: u16,
}

/// Registry constructor.
pub fn build(opts: &LbOptions, ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
    Box::new(Ecmp {
        ev: (ctx.flow_index % opts.evs_size) as u16,
    })
}

impl LoadBalancer for Ecmp {
    fn next_ev(&mut self, _now: Time, _rng: &mut Rng) -> u16 {
        self.ev
    }
}
