//! The model's new shapes, each proven on a real run: any topology family, explicit routes of
//! different lengths, rate-paced senders, switch schemes that hold, release and originate
//! packets, and window-bounded sender memory.
mod common;

use repsim::engine::time::{serialization, MS, US};
use repsim::engine::Handle;
use repsim::net::RunContext;
use repsim::net::{candidates, paths};
use repsim::net::{Kind, Packet};
use repsim::routing::{Ingress, RoutingScheme, SchemeSetup, SchemeTimer, SwitchCtx};
use repsim::routing::{SwitchScheme, TimerSlot};
use repsim::sim::Phase;
use repsim::{ConfigError, Registry, Simulation};

/// A scenario on `topology` (a `[topology]` body) running `workload` (a `[workload]` body).
fn scenario(lb: &str, topology: &str, workload: &str, extra: &str) -> String {
    format!(
        r#"
seed = 7
lb = [{lb}]
[topology]
{topology}
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = false
{extra}
[workload]
{workload}
"#
    )
}

fn build(text: &str) -> Simulation {
    let scn = common::parse(text);
    let run = scn.runs().unwrap().remove(0);
    Simulation::new(scn.build_run(&run, None).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_family_runs_a_permutation_under_ecmp() {
    let families = [
        (
            "leaf-spine",
            "type = \"leaf_spine\"\nleaves = 8\nspines = 4\nhosts_per_leaf = 8\nlink_speed = \"100Gbps\"",
            64,
        ),
        ("Dragonfly 9 x 4 x 4", "type = \"dragonfly\"", 144),
        ("rail 8 x 8", "type = \"rail\"", 64),
    ];
    for (name, topology, hosts) in families {
        let text = scenario(
            "\"ecmp\"",
            topology,
            "type = \"permutation\"\nsize = \"256KiB\"",
            "",
        );
        let mut sim = build(&text);
        assert_eq!(sim.topology().hosts, hosts, "{name}");
        // Mid-run the books balance too.
        sim.run_until(20 * US);
        common::assert_books_balance(&sim);
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        assert_eq!(sim.flows().len(), hosts as usize);
    }
}

#[test]
fn dragonfly_spraying_over_explicit_routes_of_different_lengths() {
    // One flow across the Dragonfly, sprayed round robin over its 8 shortest routes.
    let text = scenario(
        "{ scheme = \"spray\", paths = 8 }",
        "type = \"dragonfly\"",
        "type = \"explicit\"\nflows = [{ src = 0, dst = 143, size = \"2MiB\" }]",
        "",
    );
    let mut sim = build(&text);
    let routes = sim.routes_between(0, 143, 8);
    assert_eq!(routes.len(), 8);
    let lengths: std::collections::BTreeSet<u32> = routes.iter().map(|r| r.hops).collect();
    assert!(
        lengths.len() >= 2,
        "minimal and non-minimal routes: {lengths:?}"
    );
    // Each route has its own unloaded RTT, longer routes a larger one.
    for r in &routes {
        let links = sim.paths().links(r.id).to_vec();
        assert_eq!(
            r.base_rtt,
            paths::round_trip(sim.topology(), &links, 4150, 64)
        );
        assert_eq!(
            r.one_way,
            candidates::unloaded_latency(sim.topology(), &links, 4150)
        );
        assert_eq!(
            r.slowest_rate,
            candidates::slowest_rate(sim.topology(), &links)
        );
        assert!(r.one_way < repsim::lb::laps::idle_latency(r, 4150));
    }
    // They are LAPS's candidates (minimal, then one through each other group: 7 links at
    // most, and some route that long), not Yen's 8 shortest.
    assert_eq!(
        routes.iter().map(|r| r.hops).max(),
        Some(7),
        "{:?}",
        routes.iter().map(|r| r.hops).collect::<Vec<_>>()
    );
    let shortest = routes.iter().min_by_key(|r| r.hops).unwrap();
    let longest = routes.iter().max_by_key(|r| r.hops).unwrap();
    assert!(longest.base_rtt > shortest.base_rtt);
    sim.run_until_idle();
    // Its timeout covers its longest route, with the run's allowance for queueing on top.
    let allowance = sim.rto() - sim.max_base_rtt();
    assert_eq!(
        sim.flows()[0].rto,
        sim.rto().max(longest.base_rtt + allowance)
    );
    common::assert_all_delivered(&sim);
    // Round robin over 8 routes: each carried an eighth of the packets, so a link on k of the
    // routes carried k eighths (data bytes; the few ACKs that share a link are within slack).
    // A route left unused would leave every one of its links an eighth short.
    let stats = sim.port_stats();
    let packets = (2u64 << 20).div_ceil(4086);
    let mut on_routes = std::collections::BTreeMap::<u32, u64>::new();
    for r in &routes {
        for &l in sim.paths().links(r.id) {
            *on_routes.entry(l).or_default() += 1;
        }
    }
    for (&link, &k) in &on_routes {
        let carried = stats[link as usize].tx_bytes / 4150;
        let expected = k * packets / 8;
        assert!(
            carried.abs_diff(expected) <= k + 8,
            "link {link} on {k} routes carried {carried} packets, expected {expected}"
        );
    }
}

#[test]
fn a_rate_paced_sender_takes_four_times_the_serialisation_time() {
    let fct = |rate: &str| {
        let text = scenario(
            "\"ecmp\"",
            "type = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"",
            "type = \"explicit\"\nflows = [{ src = 0, dst = 12, size = \"4MiB\" }]",
            &format!("[cc]\nalgo = \"constant\"\nrate = \"{rate}\"\n"),
        );
        let mut sim = build(&text);
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        let f = &sim.flows()[0];
        (f.fct().unwrap(), f.base_rtt)
    };
    let bytes = 4u64 << 20;
    let packets = bytes.div_ceil(4086);
    let at_400g = serialization((bytes + packets * 64) as u32, 400_000_000_000);
    let (slow, base_rtt) = fct("100Gbps");
    let (fast, _) = fct("400Gbps");
    // Paced at a quarter of the link: four serialisation times, plus the round trip.
    assert!(slow >= 4 * at_400g, "{slow} < 4 x {at_400g}");
    assert!(
        slow <= 4 * at_400g + 2 * base_rtt,
        "{slow} > 4 x {at_400g} + 2 RTT"
    );
    // At line rate the pacing does nothing.
    assert!(fast <= at_400g + 2 * base_rtt);
    let ratio = (slow - base_rtt) as f64 / (fast - base_rtt) as f64;
    assert!((3.9..4.1).contains(&ratio), "ratio {ratio}");
}

/// A switch scheme for the test: ToR 0 holds every data packet it forwards for 2 us (one timer
/// for the batch it holds), then releases them and tells ToR 3 about it with a notification
/// that ToR 3 consumes.
struct HoldAndNotify {
    held: Vec<(Handle, u32)>,
    slot: TimerSlot,
    notified: u32,
    received: u32,
}

const TOR0: u32 = 0;
const TOR3: u32 = 3;

impl SwitchScheme for HoldAndNotify {
    fn ingress(
        &mut self,
        ctx: &mut SwitchCtx,
        switch: u32,
        h: Handle,
        candidates: &[u32],
    ) -> Ingress {
        let pkt = *ctx.packet(h);
        if pkt.kind == Kind::Notify {
            if pkt.dst != ctx.topology().switch_node(switch) {
                // On its way: the aggregation switch between forwards it like any packet.
                assert!(
                    !candidates.is_empty(),
                    "a path from switch {switch} to ToR 3"
                );
                return Ingress::Forward(repsim::routing::ecmp::pick(&pkt, 0, candidates));
            }
            assert_eq!(switch, TOR3, "notifications go to ToR 3");
            assert!(
                candidates.is_empty(),
                "a packet addressed to this switch has no next hop"
            );
            self.received += 1;
            return Ingress::Consume;
        }
        let Some(&port) = candidates.first() else {
            return Ingress::Drop;
        };
        if switch == TOR0
            && pkt.kind == Kind::Data
            && ctx.topology().level(ctx.topology().links[port as usize].to) > 1
        {
            if self.held.is_empty() {
                let at = ctx.now() + 2 * US;
                ctx.set_timer(at, self.slot.arm(0, TOR0));
            }
            self.held.push((h, port));
            return Ingress::Hold;
        }
        Ingress::Forward(repsim::routing::ecmp::pick(&pkt, 0, candidates))
    }

    fn on_timer(&mut self, ctx: &mut SwitchCtx, timer: SchemeTimer) {
        if !self.slot.fires(timer) {
            return;
        }
        for (h, port) in self.held.drain(..) {
            ctx.release(TOR0, h, port);
        }
        let mut note = Packet::blank(Kind::Notify, 64);
        note.dst = ctx.topology().switch_node(TOR3);
        ctx.originate(TOR0, note);
        self.notified += 1;
    }
}

/// What the last [`HoldAndNotify`] built counted: (notified, received).
static HOLD_COUNTS: std::sync::Mutex<Option<(u32, u32)>> = std::sync::Mutex::new(None);

/// `[routing] switch = "test-hold-notify"`: [`HoldAndNotify`], publishing its counts to
/// [`HOLD_COUNTS`] as it runs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HoldConfig {}

impl RoutingScheme for HoldConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build(&self, _setup: &SchemeSetup) -> Box<dyn SwitchScheme> {
        Box::new(Published(HoldAndNotify {
            held: Vec::new(),
            slot: TimerSlot::default(),
            notified: 0,
            received: 0,
        }))
    }
}

/// A [`HoldAndNotify`] whose counts the test reads after the run.
struct Published(HoldAndNotify);

impl Published {
    fn publish(&self) {
        *HOLD_COUNTS.lock().unwrap() = Some((self.0.notified, self.0.received));
    }
}

impl SwitchScheme for Published {
    fn ingress(&mut self, ctx: &mut SwitchCtx, s: u32, h: Handle, c: &[u32]) -> Ingress {
        let d = self.0.ingress(ctx, s, h, c);
        self.publish();
        d
    }
    fn on_timer(&mut self, ctx: &mut SwitchCtx, t: SchemeTimer) {
        self.0.on_timer(ctx, t);
        self.publish();
    }
}

#[test]
fn a_switch_scheme_holds_releases_and_notifies() {
    // Registered like any scheme, so the run's configuration names it.
    Registry::add_switch::<HoldConfig>("test-hold-notify").expect("a new switch name");
    let topology =
        "type = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"";
    let workload =
        "type = \"explicit\"\nflows = [{ src = \"0-3\", dst = \"12-15\", size = \"512KiB\" }]";
    let text = scenario("\"ecmp+test-hold-notify\"", topology, workload, "");
    let mut sim = build(&text);
    assert_eq!(sim.config().switch.name(), "test-hold-notify");
    // While packets are held, the books still balance.
    let mut saw_held = false;
    for step in 1..200 {
        sim.run_until(step * US / 2);
        common::assert_books_balance(&sim);
        saw_held |= sim.data_in_network() > 0;
    }
    assert!(saw_held);
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    let (notified, received) = HOLD_COUNTS.lock().unwrap().expect("the scheme ran");
    assert!(
        notified > 0,
        "the timer released packets and sent notifications"
    );
    assert_eq!(notified, received, "every notification reached ToR 3");
    let c = sim.counters();
    assert_eq!(c.scheme_packets, notified as u64);
    assert_eq!(c.scheme_consumed, received as u64);
    // Holding cost time: the flows take at least the holds longer than without the scheme.
    let plain = {
        let mut s = build(&scenario("\"ecmp\"", topology, workload, ""));
        s.run_until_idle();
        s.flows().iter().map(|f| f.fct().unwrap()).max().unwrap()
    };
    let held = sim.flows().iter().map(|f| f.fct().unwrap()).max().unwrap();
    assert!(held > plain + 2 * US, "{held} vs {plain}");
}

/// The largest heap footprint of flow 0's sender over a run of one `bytes`-byte flow.
fn peak_sender_heap(bytes: u64) -> usize {
    let text = scenario(
        "\"reps\"",
        "type = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"",
        &format!("type = \"explicit\"\nflows = [{{ src = 0, dst = 12, size = \"{bytes}B\" }}]"),
        "",
    );
    let mut sim = build(&text);
    let mut peak = 0;
    let mut t = 0;
    while sim.flows()[0].phase != Phase::Done {
        t += 20 * US;
        sim.run_until(t);
        if let Some(s) = sim.flows()[0].sender() {
            peak = peak.max(s.heap_bytes());
        }
        assert!(t < 100 * MS, "the flow should have finished");
    }
    peak
}

#[test]
fn a_1gib_flow_costs_what_an_8mib_flow_costs() {
    let small = peak_sender_heap(8 << 20);
    let large = peak_sender_heap(1 << 30);
    assert!(small > 0);
    assert!(
        large <= small,
        "sender state: 1 GiB flow {large} B, 8 MiB flow {small} B"
    );
}
