//! The connection factory: what a starting flow's sender and receiver are made of. It holds
//! what every connection of the run shares (the run's timeout and the allowances it is made of,
//! the seed; the transport settings come with each request, from the simulation's own copy) and
//! the finished connections that the next flow of
//! their pair and class continues with, and asks the flow's schemes, through their contracts,
//! for everything else: explicit routes, an own transport, the controller and the balancer.
use std::collections::BTreeMap;

use crate::cc::{CcParams, CcSpec};
use crate::engine::rng::Stream;
use crate::engine::time::SEC;
use crate::engine::{Rng, Time};
use crate::lb::{LbContext, LbSpec, Route};
use crate::transport::{
    AckPolicy, ConnectionState, Receiver, Recovery, ReuseMode, Sender, Sizes, TransportMode,
    TransportParams,
};

/// One flow's start, as the factory needs it.
pub(super) struct ConnectionRequest<'a> {
    /// The flow's index.
    pub flow: u32,
    /// (source, destination, class): the pair a reused connection must match.
    pub pair: (u32, u32, u16),
    /// Its payload bytes and their packets' layout under the run's header.
    pub sizes: Sizes,
    /// Unloaded RTT of its shortest path.
    pub base_rtt: Time,
    /// Bit rate of the sender's NIC.
    pub line_rate: u64,
    /// Its load balancer.
    pub lb: &'a LbSpec,
    /// Its congestion control.
    pub cc: &'a CcSpec,
    /// Its candidate explicit routes (as many as the load balancer wants).
    pub routes: &'a [Route],
    /// The run's timed switch has turned on ([`CcParams::timed_switch_on`]).
    pub timed_switch_on: bool,
    /// The run's transport settings.
    pub transport: &'a TransportParams,
    /// Switches trim (true) or drop overflowing packets.
    pub trimming: bool,
}

/// A new connection.
pub(super) struct Connection {
    /// Its sender.
    pub sender: Sender,
    /// Its receiver.
    pub receiver: Receiver,
    /// Its retransmission timeout.
    pub rto: Time,
}

/// Makes every connection of a run.
pub(super) struct ConnectionFactory {
    seed: u64,
    /// The largest unloaded RTT between two hosts.
    pub max_base_rtt: Time,
    /// Time to drain four full switch queues at the slowest host NIC.
    pub queue_drain: Time,
    /// The run's retransmission timeout.
    pub rto: Time,
    /// Finished connections by (source, destination, class), when connections are reused.
    idle: BTreeMap<(u32, u32, u16), ConnectionState>,
}

impl ConnectionFactory {
    /// A factory for a run of `seed` in a network whose largest base RTT, queue drain time and
    /// RTO are given.
    pub fn new(seed: u64, max_base_rtt: Time, queue_drain: Time, rto: Time) -> Self {
        ConnectionFactory {
            seed,
            max_base_rtt,
            queue_drain,
            rto,
            idle: BTreeMap::new(),
        }
    }

    /// Keeps a finished connection's controller and balancer for the next flow of `pair`.
    pub fn park(&mut self, pair: (u32, u32, u16), state: ConnectionState) {
        self.idle.insert(pair, state);
    }

    /// The state a starting flow of `pair` continues with, if a finished flow left one: a
    /// copy of it (the record stays for the pair's other flows), or the state itself when it is
    /// handed over or its schemes cannot copy it.
    fn reused(&mut self, pair: (u32, u32, u16), mode: ReuseMode) -> Option<ConnectionState> {
        if mode == ReuseMode::Record {
            let copy = self.idle.get(&pair).and_then(|record| {
                Some(ConnectionState {
                    cc: record.cc.copy_state()?,
                    lb: record.lb.copy_state()?,
                })
            });
            if copy.is_some() {
                return copy;
            }
        }
        self.idle.remove(&pair)
    }

    /// The sender and receiver of a starting flow.
    pub fn open(&mut self, req: &ConnectionRequest) -> Connection {
        let t = req.transport;
        let (mtu, header, trimming, ack) = (t.mtu, t.header, req.trimming, t.ack);
        let bdp = (req.base_rtt as u128 * req.line_rate as u128 / (8 * SEC as u128)) as u64;
        // A scheme with its own transport replaces the congestion control, which is then
        // never consulted.
        let own = req.lb.own_transport(req.routes, req.line_rate, mtu);
        let params = CcParams {
            mtu,
            base_rtt: req.base_rtt,
            bdp,
            line_rate: req.line_rate,
            network_rtt: self.max_base_rtt,
            trimming,
            timed_switch_on: req.timed_switch_on,
        };
        let cc = match own {
            Some(_) => crate::cc::unconsulted(&params),
            None => req.cc.build(&params),
        };
        // The run's RTO covers every shortest path; a flow sent over longer explicit routes
        // gets its longest route's round trip plus the same queueing allowance.
        let longest_route = req.routes.iter().map(|r| r.base_rtt).max().unwrap_or(0);
        let rto = match (&own, t.fixed_rto()) {
            (Some(own), _) => own.rto,
            (None, Some(rto)) => rto,
            (None, None) => self.rto.max(longest_route + self.queue_drain),
        };
        let mut rng = Rng::derive(self.seed, Stream::Flow, req.flow as u64);
        let lb = req.lb.build(
            &LbContext {
                flow_index: req.flow,
                base_rtt: req.base_rtt,
                rto,
                bdp_packets: (bdp / mtu as u64).max(1) as u32,
                trimming,
                packets_per_ack: (ack.every_bytes / mtu as u64).max(1) as u32,
                evs_size: t.evs_size,
                mtu,
                initial_window: cc.cwnd(),
                routes: req.routes,
            },
            &mut rng,
        );
        // Per-pair reuse: a finished flow's controller and load balancer carry on (except
        // credit-paced ones, whose grants count from each flow's start at the receiver).
        let (cc, lb) = match self.reused(req.pair, t.reuse_mode) {
            Some(state) if state.cc.credit_gate().is_none() => (state.cc, state.lb),
            _ => (cc, lb),
        };
        let (sender, receiver) = match own {
            None => {
                let recovery = t.recovery(req.line_rate, self.max_base_rtt);
                (
                    Sender::new(req.sizes, req.line_rate, cc, lb, rng)
                        .with_recovery(recovery)
                        .with_window_fit(t.window_fit),
                    Receiver::new(req.sizes.bytes, ack),
                )
            }
            Some(own) => {
                // The source route takes `route_header` bytes of every packet's MTU; the
                // receiver answers every packet at once, without CNPs.
                let sizes = Sizes::new(req.sizes.bytes, mtu, header + own.route_header);
                let policy = AckPolicy {
                    every_bytes: 1,
                    cnp_interval: None,
                    counter_16bit: false,
                    mode: TransportMode::Uec,
                    ..ack
                };
                (
                    Sender::new(sizes, req.line_rate, cc, lb, rng)
                        .with_recovery(Recovery::UEC)
                        .with_own_transport(own.transport),
                    Receiver::new(req.sizes.bytes, policy).with_delay_echo(own.route_header),
                )
            }
        };
        Connection {
            sender,
            receiver,
            rto,
        }
    }
}
