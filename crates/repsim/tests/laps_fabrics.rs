//! The LAPS fabrics' run-level features on real runs: random loss at receiving ports (counted,
//! conserved, deterministic, off by default), receiver reorder metrics (zero on one path,
//! positive when packets are sprayed over routes of different lengths), and the LAPS buffer
//! settings with PFC.
mod common;

use repsim::net::Kind;
use repsim::sim::DropCause;
use repsim::Simulation;

/// A rail-cluster scenario running `lb` on `workload`, with `extra` sections.
fn rail(lb: &str, workload: &str, extra: &str) -> String {
    format!(
        r#"
seed = 3
lb = [{lb}]
[topology]
type = "rail"
[queue]
size = "200pkt"
ecn_min = "40pkt"
ecn_max = "160pkt"
trimming = false
[transport]
mtu = "1048B"
header = "48B"
[workload]
{workload}
{extra}
"#
    )
}

fn build(text: &str) -> Simulation {
    let scn = common::parse(text);
    let run = scn.runs().unwrap().remove(0);
    Simulation::new(scn.build_run(&run, None).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"))
}

const INCAST: &str = r#"type = "incast"
senders = 16
receiver = 0
size = "256KiB""#;

#[test]
fn random_loss_drops_at_receiving_ports_and_is_counted_and_conserved() {
    let lossy = |p: &str| {
        let mut sim = build(&rail(
            "\"ecmp\"",
            INCAST,
            &format!("[loss]\nprobability = {p}\n"),
        ));
        sim.run_until_idle();
        sim
    };
    let sim = lossy("0.002");
    common::assert_all_delivered(&sim);
    let stats = sim.random_loss_stats().expect("on");
    assert!(stats.data_dropped > 0, "{stats:?}");
    assert!(stats.control_dropped > 0, "ACKs are lost too: {stats:?}");
    let books = sim.books();
    assert_eq!(
        books.dropped[Kind::Data as usize][DropCause::RandomLoss as usize],
        stats.data_dropped
    );
    // The books (where the random-loss counts are read) agree with the simulation's own
    // control-drop counter, kept apart in `World::lose`.
    let control_in_books: u64 = Kind::ALL
        .iter()
        .filter(|&&kind| kind != Kind::Data)
        .map(|&kind| books.dropped_total(kind))
        .sum();
    assert_eq!(control_in_books, sim.counters().control_dropped);
    let s = sim.summary(0.0);
    assert_eq!(s.random_loss_drops, Some(stats.data_dropped));
    assert!(s.drops >= stats.data_dropped);
    assert!(s.retransmissions >= stats.data_dropped);
    // About 0.2 % of the packet arrivals (data crosses 4 to 8 receiving ports).
    let sent = sim.counters().data_sent;
    assert!(stats.data_dropped * 100 < sent, "{stats:?} of {sent}");
    // The same seed loses the same packets.
    let again = lossy("0.002");
    assert_eq!(again.random_loss_stats(), Some(stats));
    assert_eq!(common::fcts(&again), common::fcts(&sim));
    // Off (the default): nothing lost to it (the incast still overflows queues), and no
    // counts in the summary.
    let mut clean = build(&rail("\"ecmp\"", INCAST, ""));
    clean.run_until_idle();
    common::assert_all_delivered(&clean);
    assert!(clean.random_loss_stats().is_none());
    assert_eq!(clean.summary(0.0).random_loss_drops, None);
    let random = DropCause::RandomLoss as usize;
    assert!(clean.books().dropped.iter().all(|kind| kind[random] == 0));
}

#[test]
fn a_bad_loss_probability_is_refused_with_its_field() {
    let scn = common::parse(&rail("\"ecmp\"", INCAST, "[loss]\nprobability = 1.5\n"));
    let e = scn.build("ecmp", None).err().expect("refused").to_string();
    assert!(e.contains("loss.probability"), "{e}");
}

#[test]
fn reorder_metrics_see_spraying_over_unequal_routes_and_not_one_path() {
    // One flow between GPUs of different clusters and rails: its 8 LAPS routes are 6 and 8
    // links long, so round-robin spraying reorders; ECMP keeps one path and never does.
    let one_flow = r#"type = "explicit"
flows = [{ src = 1, dst = 62, size = "2MiB" }]"#;
    // Queues that hold the whole flow: no loss, whose gaps would count as reordering too.
    let run = |lb: &str| {
        let text = rail(lb, one_flow, "[metrics]\nreorder = true\n")
            .replace("size = \"200pkt\"", "size = \"4000pkt\"");
        let mut sim = build(&text);
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        sim
    };
    let sprayed = run("{ scheme = \"spray\", paths = 8 }");
    let row = sprayed.flow_rows()[0].reorder.expect("measured");
    assert!(row.out_of_order_fraction > 0.0, "{row:?}");
    assert!(row.max_packets > 0 && row.max_bytes > 0, "{row:?}");
    // Bytes held are whole 1000-byte payloads here.
    assert_eq!(row.max_bytes, row.max_packets as u64 * 1000);
    let summary = sprayed.summary(0.0).reorder.expect("measured");
    assert_eq!(summary.out_of_order_fraction, row.out_of_order_fraction);
    assert_eq!(summary.buffer_packets.max, row.max_packets as f64);
    assert!(summary.buffer_bytes.p99 >= summary.buffer_bytes.p50);

    let single = run("\"ecmp\"");
    let row = single.flow_rows()[0].reorder.expect("measured");
    assert_eq!(row.out_of_order_fraction, 0.0);
    assert_eq!((row.max_packets, row.max_bytes), (0, 0));
    // Without `[metrics] reorder` the outputs stay as they were.
    let mut plain = build(&rail("\"ecmp\"", one_flow, ""));
    plain.run_until_idle();
    assert!(plain.flow_rows()[0].reorder.is_none());
    assert!(plain.summary(0.0).reorder.is_none());
}

#[test]
fn laps_buffers_with_pfc_keep_an_incast_lossless() {
    let pfc = r#"
[pfc]
enabled = true
buffer = "1MiB"
buffer_extra_ports = 2
threshold = "static"
headroom = "52192B"
reserve = "4KiB"
quantum = "5us"
"#;
    let text = rail("\"ecmp\"", INCAST, pfc).replace(
        "trimming = false",
        "trimming = false\nper_rate = \"100Gbps\"",
    );
    let mut sim = build(&text);
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    assert_eq!(sim.counters().data_dropped, 0, "lossless");
    assert!(
        sim.summary(0.0).pfc_pauses.unwrap_or(0) > 0,
        "the incast pauses"
    );
}

#[test]
fn baselines_can_choose_among_the_laps_candidate_next_hops() {
    // One Dragonfly flow across groups under LetFlow at every switch with a flowlet gap so
    // short that every packet draws again: on the candidate routes' next hops it spreads over
    // the routes through every other group, many more global links than its shortest paths.
    spreads_over_candidate_routes(r#"{ scheme = "letflow", timeout = "1ns" }"#);
}

#[test]
fn conga_and_conweave_choose_among_the_laps_candidate_routes() {
    // The same flow under CONGA (a new flowlet every packet, idle paths tie) and ConWeave (an
    // epoch per packet, each on a random path): their path ids become the candidate routes,
    // through the other groups too.
    spreads_over_candidate_routes(r#"{ scheme = "conga", flowlet = "1ns", replies = true }"#);
    spreads_over_candidate_routes(r#"{ scheme = "conweave", preset = "laps", tx_expiry = "1ns" }"#);
}

/// One Dragonfly flow from group 0 to group 8 under switch scheme `switch` crosses at least 4
/// more global links with `next_hops = "laps-candidates"` than on the shortest paths, and
/// delivers everything either way.
fn spreads_over_candidate_routes(switch: &str) {
    let text = |next_hops: &str| {
        format!(
            r#"
seed = 5
lb = [{{ scheme = "ecmp", next_hops = "{next_hops}", switch = {switch} }}]
[topology]
type = "dragonfly"
[queue]
size = "400pkt"
ecn_min = "100pkt"
ecn_max = "300pkt"
trimming = false
[transport]
mtu = "1048B"
header = "48B"
[workload]
type = "explicit"
flows = [{{ src = 0, dst = 143, size = "1MiB" }}]
"#
        )
    };
    let global_links_used = |next_hops: &str| {
        let mut sim = build(&text(next_hops));
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        let t = sim.topology();
        let stats = sim.port_stats();
        let group = |n: u32| (n - t.hosts) / 4;
        (0..t.links.len())
            .filter(|&l| {
                let link = &t.links[l];
                link.from >= t.hosts
                    && link.to >= t.hosts
                    && group(link.from) != group(link.to)
                    && stats[l].tx_bytes > 100_000
            })
            .count()
    };
    let shortest = global_links_used("shortest");
    let spread = global_links_used("laps-candidates");
    assert!(
        spread >= shortest + 4,
        "{switch}: global links carrying data: {spread} (shortest paths: {shortest})"
    );
}

#[test]
fn the_laps_codes_ecmp_hash_splits_table_1s_incast_as_the_code_does() {
    // Table 1's 63 senders (flow k from GPU k + 1, source port 1001 + k) to GPU 0 under the
    // code's Murmur3 hash over the candidate next hops: 53 flows reach GPU 0's NIC from the
    // NVLink switch and 10 from the rail switch, as replaying the code's hash gives. Each flow
    // keeps one path, so the bytes on each link count its flows.
    let flows: Vec<String> = (1..64)
        .map(|src| format!("{{ src = {src}, dst = 0, size = \"100000B\" }}"))
        .collect();
    let text = format!(
        r#"
seed = 3
lb = [{{ scheme = "ecmp", next_hops = "laps-candidates", hash = "murmur3-switch-seed" }}]
[topology]
type = "rail"
[queue]
size = "10MiB"
ecn_min = "9MiB"
ecn_max = "10MiB"
trimming = false
[transport]
mtu = "1048B"
header = "48B"
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    );
    let mut sim = build(&text);
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    assert_eq!(sim.counters().data_dropped, 0);
    let t = sim.topology();
    let stats = sim.port_stats();
    let nic0 = t.links[t.host_uplink[0] as usize].to;
    let flows_from = |prefix: &str| -> u64 {
        (0..t.links.len())
            .filter(|&l| t.links[l].to == nic0 && t.node_name(t.links[l].from).starts_with(prefix))
            .map(|l| stats[l].tx_bytes)
            .sum::<u64>()
            / (100 * 1048)
    };
    assert_eq!((flows_from("nvl"), flows_from("rail")), (53, 10));
}

#[test]
fn a_switch_hash_is_refused_where_no_ecmp_switch_uses_it() {
    let scn = |lb: &str| common::parse(&rail(lb, INCAST, "")).runs().map(|_| ());
    let err = scn(r#"{ scheme = "ops", hash = "murmur3-switch-seed" }"#).unwrap_err();
    assert!(err.to_string().contains("lb[0].hash"), "{err}");
    let err = scn(r#"{ scheme = "ecmp", hash = "murmur3-switch-seed", switch = "letflow" }"#)
        .unwrap_err();
    assert!(err.to_string().contains("ECMP runs only"), "{err}");
    let err = scn(r#"{ scheme = "ecmp", hash = "crc32" }"#).unwrap_err();
    assert!(err.to_string().contains("murmur3-switch-seed"), "{err}");
    assert!(scn(r#"{ scheme = "ecmp", hash = "lookup2" }"#).is_ok());
}
