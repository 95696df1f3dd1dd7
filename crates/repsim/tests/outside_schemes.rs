//! Schemes defined outside the crate do what built-ins do: a load balancer, a congestion
//! control and a switch scheme, each registered by name and each with a timer of its own (the
//! load balancer also probes its paths), run a scenario that names them, and every flow
//! completes; a load balancer brings a transport of its own. The switch scheme goes through
//! the registry (`Registry::add_switch`), so the scenario's `[routing] switch` names it.
mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use repsim::cc::{AckSample, CcParams, CcScheme, CongestionControl};
use repsim::engine::time::US;
use repsim::engine::{Handle, Rng, Time};
use repsim::lb::{AckFeedback, LbContext, LbEvent, LbScheme, LoadBalancer, PathChoice};
use repsim::lb::{OwnConnection, OwnTransport, Route};
use repsim::net::packet::{Kind, Packet};
use repsim::net::RunContext;
use repsim::routing::{Ingress, RoutingScheme, SchemeSetup, SchemeTimer, SwitchCtx, SwitchScheme};
use repsim::sim::parallel::run_on_threads;
use repsim::{ConfigError, Registry, Simulation};
use serde::{Deserialize, Serialize};

/// Load-balancer timers that fired (every connection of every run of this test).
static LB_TIMERS: AtomicU64 = AtomicU64::new(0);
/// Probe answers the load balancers heard.
static PROBE_ANSWERS: AtomicU64 = AtomicU64::new(0);
/// Congestion-control timers that fired.
static CC_TIMERS: AtomicU64 = AtomicU64::new(0);
/// Switch-scheme timers that fired.
static SWITCH_TIMERS: AtomicU64 = AtomicU64::new(0);
/// Notifications of the switch scheme's own that reached the switch they were sent to.
static NOTES_DELIVERED: AtomicU64 = AtomicU64::new(0);
/// What the switch scheme writes in its notifications' scheme field.
const NOTE_MARK: u16 = 0x5a5a;

/// `lb = { scheme = "test-rotate", every_us = 5 }`: one EV at a time, a new one each period
/// (its own timer), and a probe on the new EV with the first packet after each move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RotateConfig {
    /// The period, in microseconds.
    every_us: u64,
}

impl Default for RotateConfig {
    fn default() -> Self {
        RotateConfig { every_us: 5 }
    }
}

impl LbScheme for RotateConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        if self.every_us == 0 {
            return Err(ConfigError::new("every_us", "must be positive"));
        }
        Ok(())
    }

    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        let evs = ctx.evs(None);
        Box::new(Rotate {
            ev: rng.below(evs) as u16,
            evs,
            every: self.every_us * US,
            next_move: None,
            probe: false,
        })
    }
}

struct Rotate {
    ev: u16,
    evs: u32,
    every: Time,
    /// When the EV changes next (set at the first packet).
    next_move: Option<Time>,
    /// Probe the current EV with the next packet.
    probe: bool,
}

impl LoadBalancer for Rotate {
    fn next(&mut self, now: Time, _rng: &mut Rng) -> PathChoice {
        if self.next_move.is_none() {
            self.next_move = Some(now + self.every);
        }
        PathChoice::ev(self.ev)
    }

    fn has_timers(&self) -> bool {
        true
    }

    fn next_timer(&self) -> Option<Time> {
        self.next_move
    }

    fn on_timer(&mut self, now: Time, rng: &mut Rng) -> Option<LbEvent> {
        LB_TIMERS.fetch_add(1, Ordering::Relaxed);
        self.ev = rng.below(self.evs) as u16;
        self.next_move = Some(now + self.every);
        self.probe = true;
        Some(LbEvent::named("rotated"))
    }

    fn sends_probes(&self) -> bool {
        true
    }

    fn take_probe(&mut self) -> Option<PathChoice> {
        std::mem::take(&mut self.probe).then_some(PathChoice::ev(self.ev))
    }

    fn on_probe_answer(&mut self, _ev: u16, one_way: Time, _now: Time) {
        assert!(one_way > 0, "a probe takes time");
        PROBE_ANSWERS.fetch_add(1, Ordering::Relaxed);
    }
}

/// `cc = "test-ticking"`: a fixed 16-packet window that ticks every 10 us (its own timer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TickingConfig {}

impl CcScheme for TickingConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build(&self, p: &CcParams) -> Box<dyn CongestionControl> {
        Box::new(Ticking {
            cwnd: 16 * p.mtu as u64,
            next_tick: 10 * US,
        })
    }
}

struct Ticking {
    cwnd: u64,
    next_tick: Time,
}

impl CongestionControl for Ticking {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn on_ack(&mut self, _ack: &AckSample) {}
    fn on_nack(&mut self, _size: u64, _now: Time) {}
    fn on_timeout(&mut self, _size: u64, _now: Time) {}
    fn has_timers(&self) -> bool {
        true
    }
    fn next_timer(&self) -> Option<Time> {
        Some(self.next_tick)
    }
    fn on_timer(&mut self, now: Time) {
        CC_TIMERS.fetch_add(1, Ordering::Relaxed);
        self.next_tick = now + 10 * US;
    }
}

/// `[routing] switch = "test-first-port"`: always the first candidate, and a timer every
/// 20 us while packets pass (armed by the first one), on which the switch sends a notification
/// of its own to the next switch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FirstPortConfig {}

impl RoutingScheme for FirstPortConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build(&self, _setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(FirstPort { armed: false })
    }
}

struct FirstPort {
    armed: bool,
}

/// The scheme's one timer kind.
const TICK: u8 = 0;

impl SwitchScheme for FirstPort {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        if pkt.kind == Kind::Notify && pkt.dst == ctx.topology().switch_node(switch) {
            assert_eq!(pkt.scheme, NOTE_MARK, "its own notification, as sent");
            NOTES_DELIVERED.fetch_add(1, Ordering::Relaxed);
            return Ingress::Consume;
        }
        if !self.armed {
            self.armed = true;
            let at = ctx.now() + 20 * US;
            let timer = SchemeTimer {
                kind: TICK,
                gen: 0,
                id: switch,
            };
            ctx.set_timer(at, timer);
        }
        Ingress::Forward(candidates[0])
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx, timer: SchemeTimer) {
        assert_eq!(timer.kind, TICK, "its own timer comes back as set");
        SWITCH_TIMERS.fetch_add(1, Ordering::Relaxed);
        let topo = ctx.topology();
        let next = (timer.id + 1) % topo.switches.len() as u32;
        let mut note = Packet::blank(Kind::Notify, 64);
        note.dst = topo.switch_node(next);
        note.scheme = NOTE_MARK;
        ctx.originate(timer.id, note);
        // Armed again by the next packet, so that an idle network runs out of events.
        self.armed = false;
    }
}

#[test]
fn schemes_registered_from_outside_run_with_their_own_timers() {
    Registry::add_lb::<RotateConfig>("test-rotate").expect("a new load balancer name");
    Registry::add_cc::<TickingConfig>("test-ticking").expect("a new congestion control name");
    Registry::add_switch::<FirstPortConfig>("test-first-port").expect("a new switch name");
    assert!(Registry::switches().contains(&"test-first-port"));
    let flows: Vec<String> = (0..8)
        .map(|s| format!("{{ src = {s}, dst = {}, size = \"400KiB\" }}", 31 - s))
        .collect();
    let text = format!(
        r#"
seed = 3
lb = {{ scheme = "test-rotate", every_us = 4 }}
cc = "test-ticking"
{}
[routing]
switch = "test-first-port"
[workload]
type = "explicit"
flows = [{}]
"#,
        common::TREE_32,
        flows.join(", ")
    );
    let scenario = common::parse(&text);
    let run = scenario.runs().expect("one run").remove(0);
    let spec = scenario.build_run(&run, None).expect("builds");
    let mut sim = Simulation::new(spec).expect("a simulation");
    sim.run_until_idle();
    let flows = sim.flows();
    assert_eq!(flows.len(), 8);
    assert!(
        flows.iter().all(|f| f.fct().is_some()),
        "every flow completed"
    );
    let lb = LB_TIMERS.load(Ordering::Relaxed);
    assert!(lb >= 8, "each connection rotated at least once ({lb})");
    let rotated = sim
        .lb_records()
        .iter()
        .filter(|r| r.event.name == "rotated")
        .count() as u64;
    assert_eq!(
        rotated, lb,
        "every rotation was recorded under its own name"
    );
    let answers = PROBE_ANSWERS.load(Ordering::Relaxed);
    assert!(answers > 0, "probes were answered ({answers})");
    assert!(
        CC_TIMERS.load(Ordering::Relaxed) > 0,
        "the controllers ticked"
    );
    let ticks = SWITCH_TIMERS.load(Ordering::Relaxed);
    assert!(ticks > 0, "the switch scheme ticked");
    let notes = NOTES_DELIVERED.load(Ordering::Relaxed);
    assert!(
        notes > 0 && notes <= ticks,
        "its notifications reached their switches ({notes} of {ticks})"
    );
    // A switch scheme that has not declared each switch's state its own cannot be split over
    // threads: the split refuses it, naming it, rather than run it on one thread unannounced.
    let blockers = sim.partition_blockers();
    assert_eq!(blockers.len(), 1, "{blockers:?}");
    assert!(blockers[0].contains("test-first-port"), "{blockers:?}");
    let err = run_on_threads(2, || {
        Simulation::new(scenario.build_run(&run, None).expect("builds"))
    })
    .err()
    .expect("refused")
    .to_string();
    assert!(
        err.contains("cannot be split over threads yet") && err.contains("test-first-port"),
        "{err}"
    );
}

/// Data ACKs whose one-way delay the receiver echoed to an outside load balancer.
static ECHOED: AtomicU64 = AtomicU64::new(0);
/// Times an outside transport read its own load balancer after a data ACK.
static TRANSPORT_READS: AtomicU64 = AtomicU64::new(0);

/// `lb = "test-own-window"`: one EV per connection, and a transport of its own (a fixed
/// 32-packet window, losses declared when the oldest listed packet is `rto` old) in place of
/// the run's congestion control.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct OwnWindowConfig {}

impl LbScheme for OwnWindowConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build(&self, ctx: &LbContext, rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(OneEv {
            ev: rng.below(ctx.evs(None)) as u16,
            largest_delay: 0,
        })
    }

    fn own_transport(&self, _routes: &[Route], _line_rate: u64, mtu: u32) -> Option<OwnConnection> {
        Some(OwnConnection {
            transport: Box::new(FixedWindow {
                window: 32 * mtu as u64,
                listed: Vec::new(),
                rto: 200 * US,
                largest_seen: 0,
            }),
            route_header: 0,
            rto: 200 * US,
        })
    }
}

/// The load balancer: one EV, and the largest one-way delay the ACKs echoed.
struct OneEv {
    ev: u16,
    largest_delay: Time,
}

impl LoadBalancer for OneEv {
    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        PathChoice::ev(self.ev)
    }

    fn on_ack(&mut self, ack: &AckFeedback) -> Option<LbEvent> {
        if let Some(delay) = ack.one_way {
            ECHOED.fetch_add(1, Ordering::Relaxed);
            self.largest_delay = self.largest_delay.max(delay);
        }
        None
    }
}

/// The transport: a fixed window and one list of (PSN, send time) in sending order.
struct FixedWindow {
    window: u64,
    listed: Vec<(u32, Time)>,
    rto: Time,
    /// The largest one-way delay its load balancer had heard of, read after each ACK.
    largest_seen: Time,
}

impl OwnTransport for FixedWindow {
    fn window(&self) -> u64 {
        self.window
    }

    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    fn on_send(&mut self, _path: u16, psn: u32, now: Time) {
        self.listed.push((psn, now));
    }

    fn on_ack(
        &mut self,
        _now: Time,
        _path: u16,
        psn: u32,
        sent_at: Time,
        _lost: &mut dyn FnMut(u32, Time),
    ) {
        self.listed.retain(|&entry| entry != (psn, sent_at));
    }

    fn after_ack(&mut self, _now: Time, lb: &dyn LoadBalancer) {
        let own = lb
            .as_any()
            .downcast_ref::<OneEv>()
            .expect("its own load balancer");
        assert!(own.largest_delay >= self.largest_seen, "delays only grow");
        self.largest_seen = own.largest_delay;
        TRANSPORT_READS.fetch_add(1, Ordering::Relaxed);
    }

    fn next_deadline(&self) -> Option<Time> {
        self.listed.first().map(|&(_, sent)| sent + self.rto)
    }

    fn oldest_listed(&self) -> Option<u32> {
        self.listed.first().map(|&(psn, _)| psn)
    }

    fn time_out(&mut self, now: Time, lost: &mut dyn FnMut(u16, Option<(u32, Time)>)) {
        let (late, kept): (Vec<_>, Vec<_>) = self
            .listed
            .iter()
            .partition(|&&(_, sent)| sent + self.rto <= now);
        self.listed = kept;
        for entry in late {
            lost(0, Some(entry));
        }
        lost(0, None);
    }

    fn heap_bytes(&self) -> usize {
        self.listed.capacity() * std::mem::size_of::<(u32, Time)>()
    }
}

#[test]
fn a_load_balancer_from_outside_brings_its_own_transport() {
    Registry::add_lb::<OwnWindowConfig>("test-own-window").expect("a new load balancer name");
    let flows: Vec<String> = (0..4)
        .map(|s| format!("{{ src = {s}, dst = {}, size = \"256KiB\" }}", 16 + s))
        .collect();
    let text = format!(
        "seed = 5\nlb = \"test-own-window\"\n{}\n[workload]\ntype = \"explicit\"\nflows = [{}]\n",
        common::TREE_32,
        flows.join(", ")
    );
    let scenario = common::parse(&text);
    let run = scenario.runs().expect("one run").remove(0);
    let mut sim =
        Simulation::new(scenario.build_run(&run, None).expect("builds")).expect("a simulation");
    sim.run_until_idle();
    assert!(
        sim.flows().iter().all(|f| f.fct().is_some()),
        "every flow completed"
    );
    let echoed = ECHOED.load(Ordering::Relaxed);
    // 256 KiB in full packets, each answered at once with its one-way delay.
    assert!(echoed >= 4 * 60, "the receiver echoed delays ({echoed})");
    assert_eq!(
        TRANSPORT_READS.load(Ordering::Relaxed),
        echoed,
        "the transport read its load balancer after every data ACK"
    );
}
