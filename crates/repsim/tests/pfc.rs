//! Priority flow control: with `[pfc] enabled` an incast and a permutation lose no packet, no
//! switch ingress ever needs more than its headroom, pause frames are accounted for like any
//! packet, and without PFC the same incast drops.
mod common;

use repsim::engine::time::US;
use repsim::Simulation;

/// 16 hosts on a 2-tier tree of 100 Gb/s, 1 us links (4 ToRs of 4 hosts, 4 spines), drop-tail
/// queues of 100 packets (trimming off), constant windows of `window` per flow (no reaction
/// to ECN or losses, so only PFC can keep the fabric lossless), `flows` of 4 MB.
fn scenario(flows: &[(u32, u32)], window: &str, pfc: &str) -> String {
    format!(
        r#"
seed = 3
lb = "ecmp"
cc = {{ algo = "constant", window = "{window}" }}
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "100Gbps"
link_latency = "1us"
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = false
[transport]
rto = "3ms"
[workload]
type = "explicit"
flows = [{}]
{pfc}
"#,
        flow_list(flows, "4MB")
    )
}

/// The `flows` array of an explicit workload: one flow of `size` per (source, destination).
fn flow_list(pairs: &[(u32, u32)], size: &str) -> String {
    let flows: Vec<String> = pairs
        .iter()
        .map(|(s, d)| format!("{{ src = {s}, dst = {d}, size = \"{size}\" }}"))
        .collect();
    flows.join(", ")
}

/// Hosts 4-11 (two other ToRs) each send 4 MB to host 0.
fn incast() -> Vec<(u32, u32)> {
    (4..12).map(|s| (s, 0)).collect()
}

/// Host i sends to host (i + 5) mod 16: every host sends and receives once, across ToRs.
fn permutation() -> Vec<(u32, u32)> {
    (0..16).map(|s| (s, (s + 5) % 16)).collect()
}

const PFC_ON: &str = "[pfc]\nenabled = true";

fn build(text: &str) -> Simulation {
    let scn = common::parse(text);
    Simulation::new(scn.build("ecmp", None).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// Pause frames sent = arrived + lost + still in the network (queued or on a wire).
fn assert_frames_balance(sim: &Simulation) {
    let c = sim.counters();
    let in_network = sim.pfc_frames_in_network();
    assert_eq!(
        c.pfc_frames_sent,
        c.pfc_frames_arrived + in_network,
        "pause frames unaccounted for: {c:?}, in network {in_network}"
    );
}

/// Runs to the end checking the books every 50 us; returns the simulation.
fn run_checked(text: &str) -> Simulation {
    let mut sim = build(text);
    let mut t = 0;
    while sim.run_until(t) {
        common::assert_books_balance(&sim);
        assert_frames_balance(&sim);
        t += 50 * US;
    }
    sim.run_until_idle();
    common::assert_books_balance(&sim);
    assert_frames_balance(&sim);
    sim
}

/// No packet dropped anywhere, every byte delivered once.
fn assert_lossless(sim: &Simulation, what: &str) {
    let c = sim.counters();
    assert_eq!(c.data_dropped, 0, "{what}: data dropped");
    assert_eq!(c.control_dropped, 0, "{what}: control dropped");
    assert_eq!(sim.pfc_buffer_drops(), Some(0), "{what}: MMU drops");
    assert!(
        sim.port_stats()
            .iter()
            .all(|p| p.drops == 0 && p.trims == 0),
        "{what}: a queue dropped"
    );
    common::assert_all_delivered(sim);
}

/// Every switch ingress stayed within its headroom; returns the largest headroom use.
fn assert_within_headroom(sim: &Simulation, what: &str) -> u64 {
    let peaks = sim.pfc_headroom_peaks().expect("PFC on");
    let mut max = 0;
    for (link, (used, limit)) in peaks.iter().enumerate() {
        assert!(
            used <= limit,
            "{what}: link {link} used {used} B of {limit} B headroom"
        );
        max = max.max(*used);
    }
    max
}

#[test]
fn incast_with_pfc_is_lossless_and_without_it_drops() {
    // Windows of 2 MB: 16 MB in flight, more than the switches on the way hold, so the
    // backpressure reaches the senders.
    let on = run_checked(&scenario(&incast(), "2MB", PFC_ON));
    assert_lossless(&on, "incast");
    let summary = on.summary(0.0);
    let pauses = summary.pfc_pauses.expect("PFC on");
    assert!(pauses > 0, "the incast must make switches pause");
    assert!(summary.pfc_paused_us.expect("PFC on") > 0.0);
    let max_headroom = assert_within_headroom(&on, "incast");
    assert!(max_headroom > 0, "pauses land while packets are in flight");
    let links = on.pfc_links().expect("PFC on");
    assert_eq!(
        links.iter().map(|l| l.pauses_sent).sum::<u64>(),
        links.iter().map(|l| l.pauses_received).sum::<u64>(),
        "every pause frame arrived"
    );
    // Backpressure reaches the senders' NICs.
    let topo = on.topology();
    assert!(
        links
            .iter()
            .any(|l| l.from < topo.hosts && l.pauses_received > 0),
        "a host NIC was paused"
    );

    let mut off = build(&scenario(&incast(), "2MB", ""));
    off.run_until(300 * US);
    common::assert_books_balance(&off);
    assert!(
        off.counters().data_dropped > 0,
        "without PFC the incast drops"
    );
    assert_eq!(off.pfc_buffer_drops(), None);
    assert_eq!(off.summary(0.0).pfc_pauses, None);
    assert_eq!(off.counters().pfc_frames_sent, 0);
}

#[test]
fn permutation_with_pfc_stays_within_headroom() {
    for threshold in ["dynamic", "static"] {
        let pfc = format!("{PFC_ON}\nthreshold = \"{threshold}\"");
        let sim = run_checked(&scenario(&permutation(), "200pkt", &pfc));
        assert_lossless(&sim, threshold);
        assert_within_headroom(&sim, threshold);
        let sim = run_checked(&scenario(&incast(), "100pkt", &pfc));
        assert_lossless(&sim, threshold);
        assert_within_headroom(&sim, threshold);
    }
}

#[test]
fn without_resume_frames_pauses_run_out_and_stay_lossless() {
    let sim = run_checked(&scenario(
        &incast(),
        "100pkt",
        &format!("{PFC_ON}\nresume = false"),
    ));
    assert_lossless(&sim, "no resume");
    assert_within_headroom(&sim, "no resume");
    let links = sim.pfc_links().expect("PFC on");
    assert!(links.iter().all(|l| l.resumes_sent == 0));
    assert!(links.iter().any(|l| l.pauses_sent > 1), "pauses refreshed");
}

#[test]
fn without_refresh_a_pause_runs_out_and_overload_drops_past_headroom() {
    // The windows of the lossless incast above, but pauses are never refreshed: every pause
    // episode is one frame, the senders' ports resume after one quantum into a buffer that is
    // still full, so the MMU must drop once headroom is spent; the flows still finish.
    let sim = run_checked(&scenario(
        &incast(),
        "2MB",
        &format!("{PFC_ON}\nrefresh = false"),
    ));
    common::assert_all_delivered(&sim);
    assert_within_headroom(&sim, "no refresh");
    assert!(
        sim.pfc_buffer_drops().expect("PFC on") > 0,
        "pauses that run out must let the overload reach the MMU and drop"
    );
    let links = sim.pfc_links().expect("PFC on");
    for l in &links {
        assert!(
            l.pauses_sent <= l.resumes_sent + 1,
            "link {}: {} pauses for {} resumes: a pause was re-sent before its resume",
            l.link,
            l.pauses_sent,
            l.resumes_sent
        );
    }
    assert!(links.iter().any(|l| l.pauses_sent > 0));

    // The same run with refreshes: lossless, and some pause is re-sent while congested.
    let refreshed = run_checked(&scenario(&incast(), "2MB", PFC_ON));
    assert_lossless(&refreshed, "refreshed");
    let links = refreshed.pfc_links().expect("PFC on");
    assert!(
        links.iter().any(|l| l.pauses_sent > l.resumes_sent + 1),
        "refreshes re-send pauses"
    );
}

/// A Dragonfly of `groups` groups of `routers` routers of `hosts` hosts (100 Gb/s, 1 us, two
/// global links per router) running until `end`, `pairs` sending `size` each over the next hops
/// of the LAPS candidate routes under a 128 KB window and go-back-N, with small LAPS-style PFC
/// buffers of `buffer` per port and `pfc`'s further `[pfc]` lines.
fn lossless_dragonfly(
    (groups, routers, hosts): (u32, u32, u32),
    end: &str,
    pairs: &[(u32, u32)],
    size: &str,
    buffer: &str,
    pfc: &str,
) -> String {
    format!(
        r#"
seed = 3
end = "{end}"
lb = [{{ scheme = "ecmp", next_hops = "laps-candidates" }}]
cc = {{ algo = "constant", window = "128KB" }}
[topology]
type = "dragonfly"
groups = {groups}
routers_per_group = {routers}
hosts_per_router = {hosts}
global_links_per_router = 2
[queue]
size = "1MiB"
ecn_min = "900KiB"
ecn_max = "1000KiB"
trimming = false
[transport]
mode = "gbn"
rto = "1ms"
[pfc]
enabled = true
buffer = "{buffer}"
buffer_extra_ports = 2
threshold = "static"
egress_admission = false
{pfc}
[workload]
type = "explicit"
flows = [{}]
"#,
        flow_list(pairs, size)
    )
}

/// A 5-group Dragonfly (2 routers of 2 hosts per group), every host sending 100 KB to every
/// host of the other groups over the LAPS candidate routes (minimal and through a third
/// group): the pauses close cycles between routers.
fn dragonfly_all_to_all(refresh: bool) -> String {
    let pairs: Vec<(u32, u32)> = (0..20u32)
        .flat_map(|s| (0..20u32).map(move |d| (s, d)))
        .filter(|(s, d)| s / 4 != d / 4)
        .collect();
    let pfc = format!("refresh = {refresh}");
    lossless_dragonfly((5, 2, 2), "50ms", &pairs, "100KB", "256KiB", &pfc)
}

#[test]
fn a_cycle_of_refreshed_pauses_deadlocks_and_pauses_that_run_out_dissolve_it() {
    let delivered = |sim: &Simulation| sim.flows().iter().map(|f| f.delivered).sum::<u64>();
    // Refreshed pauses: the cycle holds; from 1 ms to 2 ms not one byte more arrives, no flow
    // finishes, nothing is dropped, and only pause frames keep moving.
    let mut held = build(&dragonfly_all_to_all(true));
    held.run_until(1000 * US);
    let at_1ms = delivered(&held);
    let frames_at_1ms = held.counters().pfc_frames_sent;
    held.run_until(2000 * US);
    common::assert_books_balance(&held);
    assert_eq!(delivered(&held), at_1ms, "data moved in a deadlock");
    assert!(held.flows().iter().all(|f| f.finish.is_none()));
    assert!(
        held.counters().pfc_frames_sent > frames_at_1ms,
        "refreshes go on"
    );
    assert_eq!(held.pfc_buffer_drops(), Some(0));

    // Pauses that run out: the same traffic finishes, paying with drops past headroom that
    // go-back-N repairs.
    let sim = run_checked(&dragonfly_all_to_all(false));
    common::assert_all_delivered(&sim);
    assert!(sim.pfc_buffer_drops().expect("PFC on") > 0);
}

/// Three routers in a triangle (a Dragonfly of 3 groups of one router, 4 hosts each), every
/// host of router r sending 1 MB to every host of router r + 2 (mod 3) over the next hops of
/// the LAPS candidate routes (direct, or on through router r + 1): a packet waiting at router
/// r + 1 for the link to r + 2 holds buffer that router r + 1 paused router r for, round the
/// triangle one way.
fn triangle(refresh: bool) -> String {
    let pairs: Vec<(u32, u32)> = (0..12u32)
        .flat_map(|s| (0..12u32).map(move |d| (s, d)))
        .filter(|(s, d)| d / 4 == (s / 4 + 2) % 3)
        .collect();
    let pfc = format!("refresh = {refresh}\ndeadlock_after = \"2ms\"");
    lossless_dragonfly((3, 1, 4), "200ms", &pairs, "1MB", "128KiB", &pfc)
}

#[test]
fn a_three_switch_pause_cycle_is_detected_and_stops_the_run() {
    let mut sim = build(&triangle(true));
    sim.run_until_idle();
    let msg = sim
        .halted()
        .expect("the deadlock stops the run")
        .to_string();
    assert!(msg.starts_with("PFC deadlock"), "{msg}");
    // The message names the cycle's links, router to router, each ending where the next
    // starts and the last where the first starts.
    let t = sim.topology();
    let named: Vec<(String, String)> = msg
        .split(": ")
        .last()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .split(", ")
        .map(|hop| {
            let (from, to) = hop.split_once(" -> ").unwrap_or_else(|| panic!("{msg}"));
            (from.to_string(), to.split(' ').next().unwrap().to_string())
        })
        .collect();
    assert_eq!(named.len(), 3, "{msg}");
    for (i, (_, to)) in named.iter().enumerate() {
        assert_eq!(to, &named[(i + 1) % 3].0, "{msg}");
    }
    let routers: Vec<String> = (0..3).map(|s| t.node_name(t.switch_node(s))).collect();
    assert!(
        named.iter().all(|(from, _)| routers.contains(from)),
        "{msg}"
    );
    // It stopped where it was found: long before the end, flows unfinished, books balanced,
    // and running on does nothing.
    let stopped_at = sim.now();
    assert!(stopped_at < 50 * repsim::engine::time::MS, "{stopped_at}");
    assert!(sim.flows().iter().any(|f| f.finish.is_none()));
    common::assert_books_balance(&sim);
    assert!(!sim.run_until(100 * repsim::engine::time::MS));
    assert_eq!(sim.counters().events, {
        let e = sim.counters().events;
        sim.run_until_idle();
        e
    });
    assert!(sim.summary(0.0).stalled.iter().any(|s| s == &msg));

    // Pauses that run out: the same traffic finishes, no deadlock.
    let sim = run_checked(&triangle(false));
    common::assert_all_delivered(&sim);
    assert_eq!(sim.halted(), None);
}

/// Split over threads, the deadlock is found at the same instant with the same cycle, and the
/// runs end alike: the partitions pool their deliveries and paused links at each instant of
/// the watch. The same for the run whose pauses run out (every flow finishes).
#[test]
fn threads_find_the_same_deadlock_at_the_same_instant() {
    use repsim::sim::parallel::run_on_threads;
    for refresh in [true, false] {
        let text = triangle(refresh);
        let mut one = build(&text);
        one.run_until_idle();
        for threads in [2, 3] {
            let many = run_on_threads(threads, || Ok(build(&text))).expect("splits");
            assert_eq!(many.halted(), one.halted(), "{threads} threads");
            assert_eq!(many.last_event_time(), one.last_event_time());
            assert_eq!(many.counters(), one.counters(), "{threads} threads");
            assert_eq!(many.pfc_links(), one.pfc_links(), "{threads} threads");
            let finishes = |s: &Simulation| s.flows().iter().map(|f| f.finish).collect::<Vec<_>>();
            assert_eq!(finishes(&many), finishes(&one));
        }
        assert_eq!(one.halted().is_some(), refresh);
    }
}
