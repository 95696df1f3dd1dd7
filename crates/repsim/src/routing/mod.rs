//! Switch schemes: what a switch does with the packets it receives, one scheme per file behind
//! the [`SwitchScheme`] trait, one line per scheme in the [`SwitchSpec`] registry.
//!
//! A scheme is called at ingress on every hop of every packet, with the ports the switch may
//! forward it on: the packet's next link if it carries an explicit route, else the forwarding
//! table's ECMP group towards its destination (empty at its destination switch and where no
//! route is left). It answers forward (on one of them, or any other port), hold (the packet
//! stays alive in the scheme until it releases it), consume (the packet was for the scheme) or
//! drop. It may also watch every packet a port starts sending (and rewrite it), keep timers,
//! and make packets of its own (notifications, replies), all through a [`SwitchCtx`]. One
//! scheme instance serves every switch of a run and keeps per-switch or per-port state in
//! arrays indexed by switch or port id (never a std hash map).
//!
//! ECMP, the default, is a scheme too; the simulation inlines it on the hot path.
use std::fmt;
use std::sync::LazyLock;

use crate::engine::registry::{self, AsAny, Entry, Implements, Kind, Spec, Table};
use crate::engine::{Handle, Rng, Time};
use crate::lb::LbEvent;
use crate::net::candidate_hops::NextHops;
use crate::net::port::{Port, PortClass};
use crate::net::world::{Owner, Timer, World};
use crate::net::RunContext;
use crate::net::{Packet, Topology};
use crate::ConfigError;

pub mod adaptive;
pub mod conga;
pub mod conweave;
pub mod drill;
pub mod ecmp;
pub mod flowlet_log;
pub mod letflow;
pub mod reunion;
pub mod tor_paths;
pub mod wcmp;

/// What a scheme decides for a packet at ingress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ingress {
    /// Send it to this egress port (after the switch's forwarding latency).
    Forward(u32),
    /// Keep it; the scheme releases it later with [`SwitchCtx::release`].
    Hold,
    /// It was for the scheme: the simulation frees it.
    Consume,
    /// No way on: the simulation frees it and counts it as lost for lack of a route.
    Drop,
}

/// A scheme's timer as it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeTimer {
    /// The scheme's own timer kind.
    pub kind: u8,
    /// The generation it was set with.
    pub gen: u16,
    /// The scheme's own id (a switch, a port, a table entry, ...).
    pub id: u32,
}

/// Optional hooks a scheme uses (asked once, at start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hooks {
    /// Call [`SwitchScheme::egress`] whenever a switch port starts sending a packet.
    pub egress: bool,
}

/// What a scheme may do while it handles an event.
pub struct SwitchCtx<'a> {
    world: &'a mut World,
    rng: &'a mut Rng,
    header_size: u32,
    actions: &'a mut Vec<SchemeAction>,
}

/// Something a scheme asked for that the simulation carries out when the scheme returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemeAction {
    /// Send a held packet from switch `switch` to egress `port`.
    Release {
        /// The switch holding it.
        switch: u32,
        /// The packet.
        packet: Handle,
        /// Its egress port.
        port: u32,
    },
    /// Send a packet the scheme made at switch `switch`, forwarded like any packet there.
    Originate {
        /// The switch it starts from.
        switch: u32,
        /// The packet.
        packet: Handle,
    },
    /// Record a load-balancer event for a flow (`lb_events.csv`, observers).
    Record {
        /// The flow (connection index).
        flow: u32,
        /// What happened.
        event: LbEvent,
    },
}

impl<'a> SwitchCtx<'a> {
    /// A context over `world` (the simulation makes these).
    pub fn new(
        world: &'a mut World,
        rng: &'a mut Rng,
        header_size: u32,
        actions: &'a mut Vec<SchemeAction>,
    ) -> Self {
        SwitchCtx {
            world,
            rng,
            header_size,
            actions,
        }
    }

    /// Current time.
    #[inline]
    pub fn now(&self) -> Time {
        self.world.now
    }

    /// A packet.
    #[inline]
    pub fn packet(&self, h: Handle) -> &Packet {
        self.world.pkts.get(h)
    }

    /// A packet, to rewrite its header (scheme bytes, ECN, route).
    #[inline]
    pub fn packet_mut(&mut self, h: Handle) -> &mut Packet {
        self.world.pkts.get_mut(h)
    }

    /// The network.
    #[inline]
    pub fn topology(&self) -> &Topology {
        &self.world.topo
    }

    /// An egress port (read only).
    #[inline]
    pub fn port(&self, port: u32) -> &Port {
        &self.world.ports[port as usize]
    }

    /// An egress port's class: its current speed, latency and queue parameters.
    #[inline]
    pub fn port_class(&self, port: u32) -> &PortClass {
        self.world.port_class(port)
    }

    /// Bytes waiting in a port, both lanes, including a data packet still being serialized.
    #[inline]
    pub fn queued_bytes(&self, port: u32) -> u64 {
        let p = &self.world.ports[port as usize];
        p.occupancy(self.world.now) + p.headers.len() as u64 * self.header_size as u64
    }

    /// Size of a header-only packet.
    pub fn header_size(&self) -> u32 {
        self.header_size
    }

    /// The random stream of the switch the scheme runs at.
    #[inline]
    pub fn rng(&mut self) -> &mut Rng {
        self.rng
    }

    /// Wakes the scheme at `at` (not before now) with this timer; the scheme checks `gen`
    /// against its own state to ignore timers it has since re-armed or cancelled.
    pub fn set_timer(&mut self, at: Time, timer: SchemeTimer) {
        self.world.set_timer(
            at,
            Timer {
                owner: Owner::Switch,
                kind: timer.kind,
                gen: timer.gen,
                id: timer.id,
            },
        );
    }

    /// Sends a packet the scheme holds at `switch` to egress `port` (after the switch's
    /// forwarding latency).
    pub fn release(&mut self, switch: u32, packet: Handle, port: u32) {
        self.actions.push(SchemeAction::Release {
            switch,
            packet,
            port,
        });
    }

    /// Records a load-balancer event of connection `flow` now (a switch's reroute).
    pub fn record(&mut self, flow: u32, event: LbEvent) {
        self.actions.push(SchemeAction::Record { flow, event });
    }

    /// Gives notification `h` (a [`crate::net::Kind::Notify`] the scheme originated) the words `words` to
    /// carry beyond its header: what a real notification would hold in its payload (the
    /// packet's size should count them). They travel with the packet, also to another
    /// partition of a run split over threads.
    pub fn attach_payload(&mut self, h: Handle, words: Vec<u32>) {
        self.world.attach_payload(h, words);
    }

    /// Takes the words notification `h` carries (empty if none): for the scheme that
    /// consumes it.
    pub fn take_payload(&mut self, h: Handle) -> Vec<u32> {
        self.world.take_payload(h)
    }

    /// Makes a packet at `switch` (its `src` is set to the switch's node) and sends it on like
    /// any packet arriving there: by its route if it has one, else by the forwarding tables
    /// towards `dst` (a host or a switch). Returns its handle.
    pub fn originate(&mut self, switch: u32, mut packet: Packet) -> Handle {
        packet.src = self.world.topo.switch_node(switch);
        let h = self.world.pkts.alloc(packet);
        self.world.counters.scheme_packets += 1;
        self.actions
            .push(SchemeAction::Originate { switch, packet: h });
        h
    }
}

/// What a scheme knows when it is created.
pub struct SchemeSetup<'a> {
    /// The network.
    pub topology: &'a Topology,
    /// Per-switch salts (also usable as a fixed per-switch tie-break order).
    pub salts: &'a [u32],
    /// The run's next hops: whole-path schemes choose among the LAPS candidate routes when
    /// they are the candidates'.
    pub next_hops: NextHops,
}

/// A switch-side scheme: one instance serves every switch of a run, and each call names the
/// switch it runs at.
///
/// For a run split over threads ([`RoutingScheme::shared_between_switches`] says `None`),
/// each thread holds its own instance and calls it only for its own switches, so:
/// - every piece of state belongs to one switch, which alone reads and writes it (a flow's
///   entry at its source ToR, a port's estimator at the port's switch); what one switch
///   learns from another travels in packets (header bytes, or packets the scheme originates);
/// - a timer fires at the switch that set it, and concerns that switch alone;
/// - draws come from the ctx's random stream, which is the running switch's own;
/// - counts in [`Self::stats`] add up over switches, except names starting `max_`, which
///   are maxima over switches; [`Self::link_samples`] sort by time, then link.
pub trait SwitchScheme: Send {
    /// Packet `h` arrived at switch `switch` (on `ctx.packet(h).ingress`); `candidates` are the
    /// ports it may go on (see the module docs).
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress;
    /// Port `port` of switch `switch` starts sending packet `h` (only with
    /// [`Hooks::egress`]); the scheme may rewrite the packet.
    fn egress(&mut self, ctx: &mut SwitchCtx, switch: u32, port: u32, h: Handle) {
        let _ = (ctx, switch, port, h);
    }
    /// One of the scheme's timers fired.
    fn on_timer(&mut self, ctx: &mut SwitchCtx, timer: SchemeTimer) {
        let _ = (ctx, timer);
    }
    /// The optional hooks it uses.
    fn hooks(&self) -> Hooks {
        Hooks::default()
    }
    /// Counts the scheme keeps for outputs (name, value), in a fixed order.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Elephant flows per link and interval, for schemes that count them (Reunion).
    fn link_samples(&self) -> &[LinkSample] {
        &[]
    }
}

/// Elephants on one link during one interval (the collision plots of Reunion Fig. 3): from a
/// scheme that counts them (Reunion) or from `[metrics] elephants` for any scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSample {
    /// End of the interval.
    pub time: Time,
    /// The link.
    pub link: u32,
    /// Distinct elephant flows sent on it during the interval.
    pub elephants: u32,
}

/// The contract of a switch scheme: its configuration type (deserialized from `[routing]
/// switch` or an `lb` entry's `switch`, registered under a name with
/// [`SwitchSpec::register`]) checks itself against the run and makes the run's
/// [`SwitchScheme`].
pub trait RoutingScheme: AsAny + fmt::Debug + Send + Sync {
    /// Checks the parameters; the message names the field.
    fn validate(&self, ctx: &RunContext) -> Result<(), ConfigError>;
    /// The scheme for a run.
    fn build(&self, setup: &SchemeSetup) -> Box<dyn SwitchScheme>;
    /// True for schemes that record path changes as load-balancer events (events with an
    /// [`LbEvent::path`]: Reunion's reroutes, LetFlow's and CONGA's flowlets with `events =
    /// true`): their scenarios' `lb_events.csv` has the old path, the new path and the reason.
    fn reports_path_changes(&self) -> bool {
        false
    }
    /// True if the scheme forwards every packet by the ECMP hash alone and keeps no state:
    /// the simulation then hashes inline and never calls the built scheme (ECMP).
    fn hashes_only(&self) -> bool {
        false
    }
    /// What keeps the scheme from running on a network split over threads: state that one
    /// switch writes and another reads without a packet carrying it. `None` once the scheme
    /// is known to keep each switch's state its own (see [`SwitchScheme`]); a scheme not
    /// checked for that says so.
    fn shared_between_switches(&self) -> Option<&'static str> {
        Some("its switches' state has not been shown to be their own")
    }
    /// True when the only state the scheme's switches share without packets is shared
    /// among the edge switches (ToRs): a split over threads then keeps every edge switch in
    /// one partition and spreads their hosts and the upper tiers over the others
    /// ([`crate::net::topology::PartitionRule::EdgesTogether`]), so that the shared state
    /// has one writer and every read sees the writes one thread would have made.
    fn edges_share_state(&self) -> bool {
        false
    }
}

impl<T: RoutingScheme + 'static> Implements<dyn RoutingScheme> for T {
    fn boxed(self: Box<Self>) -> Box<dyn RoutingScheme> {
        self
    }
}

/// The kind of switch schemes in the scheme registry ([`crate::engine::registry`]).
pub struct SwitchKind;

impl Kind for SwitchKind {
    type Dyn = dyn RoutingScheme;
    const TAG: &'static str = "scheme";
    const WHAT: &'static str = "switch scheme";
    fn table() -> &'static Table<dyn RoutingScheme> {
        static TABLE: LazyLock<Table<dyn RoutingScheme>> = LazyLock::new(|| {
            registry::table(vec![
                Entry::of::<ecmp::EcmpSwitchConfig>("ecmp"),
                Entry::of::<adaptive::AdaptiveConfig>("adaptive"),
                Entry::of::<drill::DrillConfig>("drill"),
                Entry::of::<wcmp::WcmpConfig>("wcmp"),
                Entry::of::<letflow::LetFlowConfig>("letflow"),
                Entry::of::<conga::CongaConfig>("conga"),
                Entry::of::<conweave::ConWeaveConfig>("conweave"),
                Entry::of::<reunion::ReunionConfig>("reunion"),
            ])
        });
        &TABLE
    }
}

/// A switch scheme and its parameters, as a scenario names it (`[routing] switch =
/// "adaptive"` or `switch = { scheme = "adaptive" }`).
pub type SwitchSpec = Spec<SwitchKind>;

impl Default for Spec<SwitchKind> {
    /// Hashed ECMP.
    fn default() -> Self {
        SwitchSpec::new(ecmp::EcmpSwitchConfig::default())
    }
}

/// A generation-checked timer slot for schemes: arm it, and accept a firing only if it is the
/// latest arming.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerSlot {
    gen: u16,
    armed: bool,
}

impl TimerSlot {
    /// Arms (or re-arms) the slot: any earlier firing becomes stale. Returns the timer to set.
    pub fn arm(&mut self, kind: u8, id: u32) -> SchemeTimer {
        self.gen = self.gen.wrapping_add(1);
        self.armed = true;
        SchemeTimer {
            kind,
            gen: self.gen,
            id,
        }
    }

    /// Cancels the slot: its pending firing becomes stale.
    pub fn cancel(&mut self) {
        self.armed = false;
    }

    /// True (and disarmed) if `timer` is the latest arming of this slot.
    pub fn fires(&mut self, timer: SchemeTimer) -> bool {
        if self.armed && timer.gen == self.gen {
            self.armed = false;
            true
        } else {
            false
        }
    }
}

/// A small world for switch-scheme unit tests: a 2-tier tree for the topology and one
/// egress port per entry of `rates` (port i links to node i), 1 MiB buffers, salt `salt`.
#[cfg(test)]
pub(crate) fn test_world(rates: &[u64], salt: u32) -> World {
    use crate::engine::{Arena, EventOrder, EventQueue};
    use crate::net::paths::PathTable;
    use crate::net::port::{PortCold, QueueParams};
    use crate::net::world::Counters;
    use crate::net::FatTreeSpec;
    let params = QueueParams {
        capacity: 1 << 20,
        ecn_min: 1 << 20,
        ecn_max: 1 << 20,
        ecn_pmax: 1.0,
        trimming: true,
        header_size: 64,
        header_limit: QueueParams::OFF,
        ecn_at_departure: false,
    };
    let topo = FatTreeSpec::uniform(2, 8, 4, 0, 1, 400_000_000_000, 1_000_000, 0)
        .and_then(|spec| spec.build())
        .expect("a valid tree");
    let mut port_classes = crate::net::port::PortClasses::new();
    let (ports, port_cold): (Vec<_>, Vec<_>) = rates
        .iter()
        .enumerate()
        .map(|(i, &rate_bps)| {
            let class = port_classes.intern(PortClass {
                rate_bps,
                latency: 1_000_000,
                params,
            });
            (Port::new(class), PortCold::new(Rng::new(i as u64)))
        })
        .unzip();
    World {
        now: 0,
        events: EventQueue::new(),
        order: EventOrder::new(topo.nodes() + 1),
        departures_first: false,
        pkts: Arena::new(),
        ports,
        port_cold,
        port_classes,
        port_to: (0..rates.len() as u32).collect(),
        port_from: vec![0; rates.len()],
        topo,
        paths: PathTable::new(),
        salts: vec![salt],
        counters: Counters::default(),
        outbox: None,
        payloads: Default::default(),
    }
}

/// [`test_world`] with one port per link of its tree, every one at `rate_bps` (for the
/// simulation's parts that index ports by link).
#[cfg(test)]
pub(crate) fn test_world_every_link(rate_bps: u64) -> World {
    let links = test_world(&[], 0).topo.links.len();
    test_world(&vec![rate_bps; links], 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_slots_ignore_stale_and_cancelled_firings() {
        let mut slot = TimerSlot::default();
        let first = slot.arm(1, 7);
        let second = slot.arm(1, 7);
        assert!(!slot.fires(first), "re-armed: the first firing is stale");
        assert!(slot.fires(second));
        assert!(!slot.fires(second), "fires once");
        let third = slot.arm(1, 7);
        slot.cancel();
        assert!(!slot.fires(third));
    }
}
