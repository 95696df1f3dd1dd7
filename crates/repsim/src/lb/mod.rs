//! Sender-side load balancing: one scheme per file behind the [`LoadBalancer`] trait, each with
//! its own configuration struct, and one line per scheme in the [`LbSpec`] registry.
//!
//! A load balancer chooses, for every packet a connection sends, its entropy value (EV), which
//! switches hash (with the flow key and their salt) to pick among equal-cost ports, or an
//! explicit route the switches follow. It learns from every ACK (with the EVs of every packet
//! the ACK covers), NACK and retransmission timeout.
use std::fmt;
use std::sync::LazyLock;

use crate::engine::registry::{self, AsAny, Entry, Implements, Kind, Spec, Table};
use crate::engine::{Rng, Time};
use crate::net::packet::NO_ROUTE;
use crate::net::paths::PathId;
use crate::net::RunContext;
use crate::ConfigError;

pub mod bitmap;
pub mod ecmp;
pub mod flowlet;
pub mod incremental;
pub mod laps;
pub mod mixed;
pub mod mprdma;
pub mod mptcp;
pub mod ops;
pub mod plb;
pub mod reps;
pub mod reps_legacy;
pub mod spray;

/// The path of one packet: an EV for the switches' hash, and possibly an explicit route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathChoice {
    /// Entropy value (echoed by the ACK).
    pub ev: u16,
    /// Explicit route, or [`NO_ROUTE`].
    pub route: PathId,
}

impl PathChoice {
    /// A hashed path chosen by `ev`.
    #[inline]
    pub fn ev(ev: u16) -> Self {
        PathChoice {
            ev,
            route: NO_ROUTE,
        }
    }
}

/// An explicit route a source-routed scheme may use, with its own unloaded RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Its id in the simulation's path table.
    pub id: PathId,
    /// Number of links.
    pub hops: u32,
    /// Unloaded round-trip time (a full packet out, a header back).
    pub base_rtt: Time,
    /// One-way latency of a lone full packet, serialisations in whole nanoseconds
    /// ([`crate::net::candidates::unloaded_latency`]).
    pub one_way: Time,
    /// The slowest link's rate on the route, in bits per second.
    pub slowest_rate: u64,
}

/// What a load balancer knows about its connection when it is created.
#[derive(Clone, Copy, Debug)]
pub struct LbContext<'a> {
    /// Creation index of the connection (0, 1, 2, ... in workload order).
    pub flow_index: u32,
    /// Unloaded round-trip time of the connection's shortest path.
    pub base_rtt: Time,
    /// The retransmission timeout.
    pub rto: Time,
    /// Bandwidth-delay product in full packets.
    pub bdp_packets: u32,
    /// Whether switches trim (true) or drop (false) on overflow.
    pub trimming: bool,
    /// Data packets one ACK covers at most (the receiver's coalescing ratio; 1 without it).
    pub packets_per_ack: u32,
    /// Number of entropy values the sender NIC offers (`[transport] evs_size`; EVs are
    /// `0..evs_size`). A scheme's own `evs_size` overrides it.
    pub evs_size: u32,
    /// Bytes of a full data packet on the wire.
    pub mtu: u32,
    /// The congestion control's window at the connection's start, in bytes.
    pub initial_window: u64,
    /// Candidate explicit routes, shortest first ([`LbScheme::routes_wanted`] of them at most;
    /// empty for hashed schemes).
    pub routes: &'a [Route],
}

impl LbContext<'_> {
    /// The number of EVs a scheme uses: its own `evs_size` if it has one, else the NIC's.
    #[inline]
    pub fn evs(&self, own: Option<u32>) -> u32 {
        own.unwrap_or(self.evs_size)
    }

    /// The first connection of the reference's 2-tier 400 Gb/s fabric (base RTT 8.337 us, RTO
    /// 41.5 us, BDP 100 packets, 151-packet window, 65,536 EVs, trimming on, one ACK per
    /// packet, no explicit routes): a starting point for tests and examples.
    pub fn example() -> LbContext<'static> {
        LbContext {
            flow_index: 0,
            base_rtt: 8_337_120,
            rto: 41_537_000,
            bdp_packets: 100,
            trimming: true,
            packets_per_ack: 1,
            evs_size: DEFAULT_EVS_SIZE,
            mtu: 4150,
            initial_window: 151 * 4150,
            routes: &[],
        }
    }
}

impl AckFeedback<'_> {
    /// An un-marked ACK at `now` echoing `ev`, with no RTT sample and nothing else covered,
    /// under a steady 100-packet window: a starting point for tests.
    pub fn example(ev: u16, now: Time) -> AckFeedback<'static> {
        AckFeedback {
            ev,
            ecn: false,
            rtt: None,
            one_way: None,
            now,
            covered: &[],
            cwnd_before: 100 * 4150,
            cwnd: 100 * 4150,
            in_flight: 99 * 4150,
        }
    }
}

/// One ACK as a load balancer sees it.
#[derive(Clone, Copy, Debug)]
pub struct AckFeedback<'a> {
    /// EV the ACK echoes (the packet that triggered it).
    pub ev: u16,
    /// Its echoed ECN mark.
    pub ecn: bool,
    /// Round-trip sample of the acknowledged PSN's latest transmission, if still outstanding.
    pub rtt: Option<Time>,
    /// The one-way delay of the acknowledged packet, on connections whose transport has the
    /// receiver echo it (a scheme's own transport, [`LbScheme::own_transport`]).
    pub one_way: Option<Time>,
    /// Arrival time.
    pub now: Time,
    /// EVs of every packet this ACK newly acknowledges, the triggering packet's last (one entry
    /// with per-packet ACKs; several with coalesced ACKs, cumulative ACKs or SACKs). Filled only
    /// for load balancers that ask for it ([`LoadBalancer::wants_covered`]); empty otherwise.
    pub covered: &'a [u16],
    /// The congestion window before the congestion control saw this ACK, in bytes.
    pub cwnd_before: u64,
    /// The congestion window after it, in bytes.
    pub cwnd: u64,
    /// Bytes in flight once this ACK is accounted for.
    pub in_flight: i64,
}

/// Something a load balancer or switch scheme did that is worth recording, as data: a name of
/// the scheme's choosing (the `event` column of `lb_events.csv`) and the details it fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbEvent {
    /// The event's name (the scheme's own word: `"rerouted"`, `"flowlet"`, ...).
    pub name: &'static str,
    /// A time the event looks ahead to (e.g. the earliest end of a state it entered; the
    /// `until_us` column).
    pub until: Option<Time>,
    /// The move between indexed paths the event made, if it names its paths.
    pub path: Option<PathMove>,
}

/// A move of a connection from one indexed path to another (indices of the ToR pair's paths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathMove {
    /// Path before.
    pub old: u16,
    /// Path after (equal to `old` when the event kept the path).
    pub new: u16,
    /// Why, in the scheme's words (empty when it gives no reason).
    pub reason: &'static str,
}

impl LbEvent {
    /// The connection moved to a new path.
    pub const REROUTED: LbEvent = LbEvent::named("rerouted");

    /// An event called `name`, with no details.
    pub const fn named(name: &'static str) -> Self {
        LbEvent {
            name,
            until: None,
            path: None,
        }
    }

    /// The same event, looking ahead to `until`.
    pub const fn until(self, until: Time) -> Self {
        LbEvent {
            until: Some(until),
            ..self
        }
    }

    /// The same event, moving the connection from path `old` to path `new` for `reason`.
    pub const fn moved(self, old: u16, new: u16, reason: &'static str) -> Self {
        LbEvent {
            path: Some(PathMove { old, new, reason }),
            ..self
        }
    }

    /// Its name in `lb_events.csv`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// True for a sender-side reroute: named `rerouted` and naming no paths (a switch scheme's
    /// path moves name theirs, and the scheme counts them itself).
    pub fn is_sender_reroute(&self) -> bool {
        self.name == LbEvent::REROUTED.name && self.path.is_none()
    }
}

/// A recorded load-balancer action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbRecord {
    /// When.
    pub time: Time,
    /// Which connection (index).
    pub flow: u32,
    /// What happened.
    pub event: LbEvent,
}

/// A sender-side path chooser for one connection.
///
/// It is [`AsAny`] so that a transport its scheme brings ([`LbScheme::own_transport`]) can
/// read the state of its own load balancer.
pub trait LoadBalancer: AsAny + Send {
    /// The path of the next packet (new data, retransmission or RTS).
    fn next(&mut self, now: Time, rng: &mut Rng) -> PathChoice;
    /// Whether it reads [`AckFeedback::covered`] (asked once; listing every covered EV costs
    /// a little per ACK).
    fn wants_covered(&self) -> bool {
        false
    }
    /// Whether [`Self::next`] can do something worth recording, collected with
    /// [`Self::take_send_event`] after each send (asked once, so schemes that only act on
    /// feedback cost nothing per packet).
    fn reports_on_send(&self) -> bool {
        false
    }
    /// What the latest [`Self::next`] did worth recording (e.g. a flowlet re-path), if
    /// anything.
    fn take_send_event(&mut self) -> Option<LbEvent> {
        None
    }
    /// An ACK arrived. Oblivious schemes ignore it (the default).
    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        let _ = ack;
        None
    }
    /// A NACK for a trimmed packet sent with `ev` arrived.
    fn on_nack(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        let _ = (ev, now);
        None
    }
    /// The retransmission timer expired for a packet sent with `ev`.
    fn on_timeout(&mut self, ev: u16, now: Time) -> Option<LbEvent> {
        let _ = (ev, now);
        None
    }
    /// Whether it ever uses timers of its own (asked once, at start; when false,
    /// [`Self::next_timer`] is never called).
    fn has_timers(&self) -> bool {
        false
    }
    /// The earliest time it wants to be woken, if any.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Woken at a time it asked for; what it did worth recording, if anything.
    fn on_timer(&mut self, now: Time, rng: &mut Rng) -> Option<LbEvent> {
        let _ = (now, rng);
        None
    }
    /// A copy of its state for another connection between the same hosts: connection reuse
    /// by record (`[transport] reuse = "record"`) starts every flow of a pair from a copy of
    /// the record the pair's last finished flow left. `None` (the default): that flow starts
    /// with a new load balancer.
    fn copy_state(&self) -> Option<Box<dyn LoadBalancer>> {
        None
    }
    /// Whether it sends path probes (asked once, so others cost nothing per packet). A probe
    /// is a small packet on a path of the load balancer's choice, in the data lane at switches
    /// so that it measures queueing; the receiver answers it at once with its one-way delay,
    /// which comes back through [`Self::on_probe_answer`].
    fn sends_probes(&self) -> bool {
        false
    }
    /// The probe to send along with the packet the latest [`Self::next`] chose, if any.
    fn take_probe(&mut self) -> Option<PathChoice> {
        None
    }
    /// The answer to a probe sent on the path of `ev` arrived at `now`: the probe's one-way
    /// delay.
    fn on_probe_answer(&mut self, ev: u16, one_way: Time, now: Time) {
        let _ = (ev, one_way, now);
    }
}

/// The contract of a load-balancing scheme: its configuration type (deserialized from a
/// scenario's `lb` entry, registered under a name with [`LbSpec::register`]) checks itself
/// against the run and makes one [`LoadBalancer`] per connection.
pub trait LbScheme: AsAny + fmt::Debug + Send + Sync {
    /// Checks the parameters; the message names the field (`"freeze: must be positive"`).
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError>;
    /// A load balancer for one connection.
    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer>;
    /// How many explicit routes per connection the scheme wants (0, the default: it hashes
    /// EVs).
    fn routes_wanted(&self) -> usize {
        0
    }
    /// The transport the scheme brings to a connection over `routes` (its candidate routes),
    /// on a NIC of `line_rate` sending `mtu`-byte packets, in place of the run's congestion
    /// control and retransmission timer; `None` (the default) keeps the run's.
    fn own_transport(&self, routes: &[Route], line_rate: u64, mtu: u32) -> Option<OwnConnection> {
        let _ = (routes, line_rate, mtu);
        None
    }
}

/// A connection that runs a scheme's own transport ([`LbScheme::own_transport`]): the sender
/// uses its window, rate and loss detection; the receiver answers every data packet at once
/// (no CNPs), echoing the one-way delay, and recovery is the UEC transport's.
pub struct OwnConnection {
    /// The connection's transport state.
    pub transport: Box<dyn OwnTransport>,
    /// Bytes of every packet's MTU taken by its source route.
    pub route_header: u32,
    /// The connection's timeout (also what the load balancer is told).
    pub rto: Time,
}

/// A transport a load-balancing scheme brings to its connections: a window and rate of its
/// own, and per-path lists of outstanding packets whose order and timeouts declare losses. The
/// EV a packet was sent with is its path.
pub trait OwnTransport: Send {
    /// Bytes in flight allowed.
    fn window(&self) -> u64;
    /// The rate to space packets at, if any.
    fn pacing_rate(&self) -> Option<u64>;
    /// Packet `psn` left at `now` on `path`.
    fn on_send(&mut self, path: u16, psn: u32, now: Time);
    /// A data ACK for `psn`, sent at `sent_at` on `path`, arrived at `now`: `lost` is called
    /// with every packet (PSN, send time) it shows lost.
    fn on_ack(
        &mut self,
        now: Time,
        path: u16,
        psn: u32,
        sent_at: Time,
        lost: &mut dyn FnMut(u32, Time),
    );
    /// After a data ACK, once the connection's load balancer has seen it: the transport may
    /// read that load balancer's state (its scheme's own type, through
    /// [`AsAny::as_any`]).
    fn after_ack(&mut self, now: Time, lb: &dyn LoadBalancer);
    /// When the connection timer should next fire (the earliest path deadline), if ever.
    fn next_deadline(&self) -> Option<Time>;
    /// The PSN a timeout reports: the oldest listed packet.
    fn oldest_listed(&self) -> Option<u32>;
    /// The timer fired at `now`: for each path whose deadline passed, `lost` is called with
    /// each of its listed packets, then with `None`.
    fn time_out(&mut self, now: Time, lost: &mut dyn FnMut(u16, Option<(u32, Time)>));
    /// Heap bytes held.
    fn heap_bytes(&self) -> usize;
}

impl<T: LbScheme + 'static> Implements<dyn LbScheme> for T {
    fn boxed(self: Box<Self>) -> Box<dyn LbScheme> {
        self
    }
}

/// The kind of load balancers in the scheme registry ([`crate::engine::registry`]).
pub struct LbKind;

impl Kind for LbKind {
    type Dyn = dyn LbScheme;
    const TAG: &'static str = "scheme";
    const WHAT: &'static str = "load balancer";
    fn table() -> &'static Table<dyn LbScheme> {
        static TABLE: LazyLock<Table<dyn LbScheme>> = LazyLock::new(|| {
            registry::table(vec![
                Entry::of::<bitmap::BitmapConfig>("bitmap"),
                Entry::of::<ecmp::EcmpConfig>("ecmp"),
                Entry::of::<flowlet::FlowletConfig>("flowlet"),
                Entry::of::<incremental::IncrementalConfig>("incremental"),
                Entry::of::<laps::LapsConfig>("laps"),
                Entry::of::<mixed::MixedConfig>("mixed"),
                Entry::of::<mprdma::MprdmaLbConfig>("mprdma"),
                Entry::of::<mptcp::MptcpConfig>("mptcp"),
                Entry::of::<ops::OpsConfig>("ops"),
                Entry::of::<plb::PlbConfig>("plb"),
                Entry::of::<reps::RepsConfig>("reps"),
                Entry::of::<reps_legacy::RepsLegacyConfig>("reps-legacy"),
                Entry::of::<spray::SprayConfig>("spray"),
            ])
        });
        &TABLE
    }
}

/// A load balancer and its parameters, as a scenario names it (`"reps"` or `{ scheme =
/// "reps", freeze = "100us" }`).
pub type LbSpec = Spec<LbKind>;

impl Default for Spec<LbKind> {
    /// REPS with its default parameters.
    fn default() -> Self {
        LbSpec::new(reps::RepsConfig::default())
    }
}

/// The number of entropy values of an EV-hashing scheme: `evs_size` in 1..=65536.
pub fn check_evs_size(evs_size: u32) -> Result<(), ConfigError> {
    if evs_size == 0 || evs_size > 65536 {
        return Err(ConfigError::new(
            "evs_size",
            format!("must be in 1..=65536, not {evs_size}"),
        ));
    }
    Ok(())
}

/// A scheme's optional own `evs_size`, checked when given.
pub(crate) fn check_evs_override(evs_size: Option<u32>) -> Result<(), ConfigError> {
    evs_size.map_or(Ok(()), check_evs_size)
}

/// The default number of entropy values (`[transport] evs_size`).
pub const DEFAULT_EVS_SIZE: u32 = 65536;

/// A uniformly random EV below `evs_size`.
#[inline]
pub fn random_ev(rng: &mut Rng, evs_size: u32) -> u16 {
    rng.below(evs_size) as u16
}
