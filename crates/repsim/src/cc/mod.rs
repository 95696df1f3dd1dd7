//! Congestion control: one algorithm per file behind the [`CongestionControl`] trait, each with
//! its own configuration struct, and one line per algorithm in [`CcSpec`].
//!
//! A controller is sans-IO: the sender calls it on every ACK, NACK, retransmission timeout and
//! CNP, reads its window (bytes in flight allowed) and its pacing rate before each send, and
//! wakes it at the times it asks for ([`CongestionControl::next_timer`]). A receiver-driven
//! controller ([`CongestionControl::credit_gate`]) lets the sender send only while it holds
//! credit, which PULL packets from the receiver's pull pacer grant ([`eqds`]).
use std::fmt;
use std::sync::LazyLock;

use crate::engine::registry::{self, AsAny, Entry, Implements, Kind, Spec, Table};
use crate::engine::Time;
use crate::net::RunContext;
use crate::ConfigError;
use credit::ReceiverPacing;
pub use credit::{CreditGate, PullRequest};

pub mod constant;
pub mod credit;
pub mod dcqcn;
pub mod dctcp;
pub mod dctcp_rate;
pub mod eqds;
pub mod mprdma;
pub mod nscc;

/// What a controller knows about its connection when it is created.
#[derive(Clone, Copy, Debug)]
pub struct CcParams {
    /// Bytes of a full data packet on the wire.
    pub mtu: u32,
    /// Unloaded round-trip time of the connection's path.
    pub base_rtt: Time,
    /// Bandwidth-delay product of the path in bytes.
    pub bdp: u64,
    /// Bit rate of the sender's NIC.
    pub line_rate: u64,
    /// The largest unloaded round-trip time of any host pair in the network (the reference
    /// sizes NSCC's constants from it).
    pub network_rtt: Time,
    /// Switches trim overflowing packets (NACKs tell of losses) rather than drop them.
    pub trimming: bool,
    /// The run's timed switch has already turned on (see [`CcScheme::timed_switch_at`]).
    pub timed_switch_on: bool,
}

impl CcParams {
    /// A connection of the reference's 2-tier 400 Gb/s fabric (4150 B packets, base RTT
    /// 8.337 us, BDP 416,856 B): a starting point for tests and examples.
    pub fn example() -> CcParams {
        CcParams {
            mtu: 4150,
            base_rtt: 8_337_120,
            bdp: 416_856,
            line_rate: 400_000_000_000,
            network_rtt: 8_337_120,
            trimming: true,
            timed_switch_on: false,
        }
    }
}

/// One ACK as the controller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Bytes the ACK newly acknowledged.
    pub acked: u64,
    /// Its echoed ECN mark.
    pub ecn: bool,
    /// The receiver asked for a rate decrease.
    pub cnp: bool,
    /// Round-trip sample of the acknowledged PSN's latest transmission (`None` when that PSN
    /// was no longer outstanding).
    pub rtt: Option<Time>,
    /// Arrival time.
    pub now: Time,
    /// Bytes in flight once this ACK is accounted for.
    pub in_flight: i64,
}

/// A cumulative byte count `near` a known one, from the 32 bits a packet carries of it (counts
/// on the wire wrap; the two differ by far less than 2 GiB).
#[inline]
pub fn widen(wire: u32, near: u64) -> u64 {
    let diff = wire.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + diff).max(0) as u64
}

/// Bytes a window controller added to its window and took from it, by rule, over a
/// connection's life: what the UEC reference prints for each flow (`fair_inc` ... `nack_dec`),
/// tallied as it tallies them (fair and proportional increases as the window bytes they
/// added; a NACK's bytes whether or not quick adapt took their place).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowTally {
    /// Fair increase (delay at or above the target, no ECN).
    pub fair_increase: i64,
    /// Proportional increase (delay below the target, no ECN).
    pub proportional_increase: i64,
    /// Fast increase (delay near zero for a window's worth of bytes).
    pub fast_increase: i64,
    /// The periodic additive increase (`eta`).
    pub periodic_increase: i64,
    /// Multiplicative decrease (ECN with delay above the target).
    pub multiplicative_decrease: i64,
    /// Quick adapt's cuts to the bytes achieved.
    pub quick_adapt_decrease: i64,
    /// Bytes NACKed.
    pub nack_decrease: i64,
}

/// A congestion controller for one connection.
pub trait CongestionControl: Send {
    /// Bytes that may be in flight (`u64::MAX` for a rate-only controller).
    fn cwnd(&self) -> u64;
    /// Whether the controller ever paces (asked once, at start; when false,
    /// [`Self::pacing_rate`] is never called).
    fn paces(&self) -> bool {
        false
    }
    /// Pacing rate in bits per second (`None`: line rate).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// An ACK arrived.
    fn on_ack(&mut self, ack: &AckSample);
    /// A NACK arrived `rtt` after its packet's transmission; called just before
    /// [`Self::on_nack`] (ignored unless the controller samples NACK round trips).
    fn on_nack_rtt(&mut self, _rtt: Time) {}
    /// A packet of `size` bytes was trimmed and NACKed.
    fn on_nack(&mut self, size: u64, now: Time);
    /// The retransmission timer expired for a packet of `size` bytes.
    fn on_timeout(&mut self, size: u64, now: Time);
    /// Whether the controller ever uses timers (asked once, at start; when false,
    /// [`Self::next_timer`] is never called).
    fn has_timers(&self) -> bool {
        false
    }
    /// The earliest time the controller wants to be woken (its own timers), if any.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Woken at a time it asked for.
    fn on_timer(&mut self, now: Time) {
        let _ = now;
    }
    /// A copy of its state for another connection between the same hosts (connection reuse
    /// by record, `[transport] reuse = "record"`); `None` (the default): that connection
    /// starts with a new controller.
    fn copy_state(&self) -> Option<Box<dyn CongestionControl>> {
        None
    }
    /// The run's timed switch turned on ([`CcScheme::timed_switch_at`]); controllers
    /// without one ignore it.
    fn on_timed_switch(&mut self) {}
    /// The controller's credit gate, if sending is gated by receiver credit instead of the
    /// window (asked once, at start; the sender caches the answer).
    fn credit_gate(&self) -> Option<&dyn CreditGate> {
        None
    }
    /// The credit gate, to change.
    fn credit_gate_mut(&mut self) -> Option<&mut dyn CreditGate> {
        None
    }
    /// What its rules added to the window and took from it so far, for a controller that
    /// tallies them (NSCC); `None` otherwise.
    fn window_tally(&self) -> Option<WindowTally> {
        None
    }
}

/// The contract of a congestion control: its configuration type (deserialized from a
/// scenario's `[cc]`, registered under a name with [`CcSpec::register`]) checks itself against
/// the run and makes one [`CongestionControl`] per connection.
pub trait CcScheme: AsAny + fmt::Debug + Send + Sync {
    /// Checks the parameters; the message names the field.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError>;
    /// A controller for one connection.
    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl>;
    /// When the algorithm's timed switch turns on for every connection of the run (at this
    /// time: running controllers hear
    /// [`CongestionControl::on_timed_switch`], later ones are built with
    /// [`CcParams::timed_switch_on`]), if the algorithm declares one.
    fn timed_switch_at(&self) -> Option<Time> {
        None
    }
    /// The pull pacers the algorithm needs at every receiving host (credit pacing), if any,
    /// for hosts whose links in run at `link_rates` (bits per second, by host) and packets of
    /// `mtu` bytes; `seed` is the run's (each host's pacer derives its own stream). The first
    /// traffic class whose algorithm returns some paces every host.
    /// Credit-paced senders ask for credit with RTS, which only the UEC transport sends, so a
    /// scenario refuses RNIC transports with such an algorithm.
    fn receiver_pacing(
        &self,
        link_rates: &[u64],
        mtu: u32,
        seed: u64,
    ) -> Option<Box<dyn ReceiverPacing>> {
        let _ = (link_rates, mtu, seed);
        None
    }
    /// True if switch ports facing hosts must not mark ECN in runs of the algorithm.
    fn no_ecn_at_last_hop(&self) -> bool {
        false
    }
}

impl<T: CcScheme + 'static> Implements<dyn CcScheme> for T {
    fn boxed(self: Box<Self>) -> Box<dyn CcScheme> {
        self
    }
}

/// The kind of congestion controls in the scheme registry ([`crate::engine::registry`]).
pub struct CcKind;

impl Kind for CcKind {
    type Dyn = dyn CcScheme;
    const TAG: &'static str = "algo";
    const WHAT: &'static str = "congestion control";
    fn table() -> &'static Table<dyn CcScheme> {
        static TABLE: LazyLock<Table<dyn CcScheme>> = LazyLock::new(|| {
            registry::table(vec![
                Entry::of::<mprdma::MprdmaConfig>("mprdma"),
                Entry::of::<constant::ConstantConfig>("constant"),
                Entry::of::<dctcp::DctcpConfig>("dctcp"),
                Entry::of::<nscc::NsccConfig>("nscc"),
                Entry::of::<eqds::EqdsConfig>("eqds"),
                Entry::of::<dcqcn::DcqcnConfig>("dcqcn"),
                Entry::of::<dctcp_rate::DctcpRateConfig>("dctcp-rate"),
            ])
        });
        &TABLE
    }
}

/// A congestion control and its parameters, as a scenario names it (`cc = "mprdma"` or
/// `cc = { algo = "mprdma", initial_cwnd = "151pkt" }`).
pub type CcSpec = Spec<CcKind>;

/// The controller of connections whose transport keeps its own window and rate
/// ([`crate::lb::LbScheme::own_transport`]): built, never consulted.
pub fn unconsulted(p: &CcParams) -> Box<dyn CongestionControl> {
    constant::ConstantConfig::default().build(p)
}

impl Default for Spec<CcKind> {
    /// MPRDMA with its default parameters.
    fn default() -> Self {
        CcSpec::new(mprdma::MprdmaConfig::default())
    }
}
