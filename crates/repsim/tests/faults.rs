//! Fault timeline: every fault kind, REPS freezing diagnostics, reproducibility, unreachable
//! destinations and the acceptance claims of the failure scenarios.
mod common;

use std::path::{Path, PathBuf};

use repsim::engine::time::{to_us, US};
use repsim::lb::LbEvent;
use repsim::scenario::LoadedScenario;
use repsim::sim::Phase;
use repsim::Simulation;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_file(name: &str, lb: &str) -> Simulation {
    common::run(&common::load(name), lb, None)
}

/// A small 2-tier tree (16 hosts, 4 ToRs x 4 hosts, 4 spines) plus `extra` TOML.
fn small(lb: &str, trimming: bool, workload: &str, extra: &str) -> Simulation {
    let text = format!(
        r#"
seed = 9
end = "50ms"
lb = "{lb}"
[topology]
type = "fat_tree"
tiers = 2
hosts = 16
hosts_per_tor = 4
link_speed = "400Gbps"
link_latency = "1us"
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = {trimming}
[workload]
{workload}
{extra}
"#
    );
    let scn = LoadedScenario::parse(&text, &root().join("scenarios/test.toml")).unwrap();
    let mut sim = Simulation::new(scn.build(lb, None).unwrap()).unwrap();
    sim.run_until_idle();
    sim
}

const ONE_FLOW: &str = r#"type = "explicit"
flows = [{ src = 0, dst = 8, size = "4MiB" }]"#;

/// The books balance and finished flows delivered every byte (faults may stop others).
fn assert_conserved(sim: &Simulation) {
    common::assert_books_balance(sim);
    common::assert_kind_books_balance(sim);
    for f in sim.flows() {
        if f.phase == Phase::Done {
            assert_eq!(f.delivered, f.spec.bytes, "flow {}", f.spec.id);
        }
    }
}

fn all_done(sim: &Simulation) -> bool {
    sim.flows().iter().all(|f| f.phase == Phase::Done)
}

fn uplinks_down(start: &str, duration: &str) -> String {
    (0..4)
        .map(|a| {
            format!(
                "[[fault]]\nkind = \"link_down\"\nlink = \"tor0->agg{a}\"\nstart = \"{start}\"\nduration = \"{duration}\"\n"
            )
        })
        .collect()
}

#[test]
fn link_down_and_back_up_flow_completes_and_bytes_are_conserved() {
    for lb in ["ecmp", "ops", "reps"] {
        let sim = small(lb, false, ONE_FLOW, &uplinks_down("20us", "60us"));
        assert!(all_done(&sim), "{lb}");
        assert_conserved(&sim);
        let fs = sim.fault_stats().unwrap();
        assert!(fs.data_dropped > 0 && fs.actions == 16, "{lb}: {fs:?}");
        assert!(sim.flows()[0].finish.unwrap() > 80 * US);
    }
    // link_up brings a link back whatever took it down.
    let mut extra =
        String::from("[[fault]]\nkind = \"switch_down\"\nswitch = \"tor0\"\nstart = \"10us\"\n");
    extra += "[[fault]]\nkind = \"switch_up\"\nswitch = \"tor0\"\nstart = \"70us\"\n";
    let sim = small("reps", false, ONE_FLOW, &extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    assert!(sim.fault_stats().unwrap().data_dropped > 0);
}

#[test]
fn switch_down_with_duration_and_acks_lost() {
    // Every spine down for 40 us: data and ACKs are lost in both directions.
    let extra: String = (0..4)
        .map(|a| format!("[[fault]]\nkind = \"switch_down\"\nswitch = \"spine{a}\"\nstart = \"15us\"\nduration = \"40us\"\n"))
        .collect();
    let sim = small("reps", false, ONE_FLOW, &extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    let fs = sim.fault_stats().unwrap();
    assert!(fs.data_dropped > 0 && fs.control_dropped > 0, "{fs:?}");
    assert_eq!(sim.counters().control_dropped, fs.control_dropped);
}

#[test]
fn trim_loss_mode_nacks_instead_of_timeouts() {
    // Forward direction only: the NACKs come back over the healthy reverse links.
    let extra = uplinks_down("20us", "30us").replace(
        "duration",
        "loss = \"trim\"\ndirection = \"forward\"\nduration",
    );
    let sim = small("ops", false, ONE_FLOW, &extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    let fs = sim.fault_stats().unwrap();
    assert!(fs.data_trimmed > 0 && fs.data_dropped == 0, "{fs:?}");
    assert!(sim.flows()[0].stats.nacks > 0);
    assert_eq!(sim.flows()[0].stats.timeouts, 0);
}

#[test]
fn drop_probability_and_flapping() {
    let extra = "[[fault]]\nkind = \"drop\"\nlink = \"tor0->agg1\"\nprobability = 0.05\n";
    let sim = small("ops", true, ONE_FLOW, extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    let sent_on_link = sim.port_stats()
        [sim.topology().links_by_name("tor0->agg1").unwrap()[0] as usize]
        .tx_packets;
    let dropped = sim.fault_stats().unwrap().data_dropped;
    // About 5 % of what crossed the link.
    assert!(
        dropped > 0 && (dropped as f64) < 0.12 * sent_on_link as f64,
        "{dropped} of {sent_on_link}"
    );

    let extra = "[[fault]]\nkind = \"flap\"\nlink = \"tor0->agg2\"\nperiod = \"20us\"\ndown_for = \"5us\"\nduration = \"200us\"\n";
    let sim = small("ops", true, ONE_FLOW, extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    assert!(sim.fault_stats().unwrap().data_dropped > 0);
}

#[test]
fn rate_change_shows_in_link_throughput() {
    let workload = r#"type = "explicit"
flows = [{ src = 0, dst = 8, size = "16MiB" }]"#;
    let extra = "[[fault]]\nkind = \"rate\"\nlink = \"host0->tor0\"\ndirection = \"forward\"\nspeed = \"100Gbps\"\nstart = \"100us\"\nduration = \"100us\"\n";
    let text = format!(
        "seed = 1\nlb = \"reps\"\n[topology]\ntype = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"\n[workload]\n{workload}\n{extra}"
    );
    let scn = LoadedScenario::parse(&text, Path::new("rate.toml")).unwrap();
    let mut sim = Simulation::new(scn.build("reps", None).unwrap()).unwrap();
    let port = sim.topology().links_by_name("host0->tor0").unwrap()[0] as usize;
    let bytes_at = |sim: &mut Simulation, t| {
        sim.run_until(t);
        sim.port_stats()[port].tx_bytes
    };
    let b = [20, 90, 120, 190, 220, 290].map(|t| bytes_at(&mut sim, t * US));
    let gbps = |a: u64, z: u64| (z - a) as f64 * 8.0 / 70e-6 / 1e9;
    let (before, during, after) = (gbps(b[0], b[1]), gbps(b[2], b[3]), gbps(b[4], b[5]));
    assert!((380.0..=401.0).contains(&before), "{before}");
    assert!((95.0..=101.0).contains(&during), "{during}");
    assert!((380.0..=401.0).contains(&after), "{after}");
    assert_eq!(sim.link_rate(port as u32), 400_000_000_000);
    sim.run_until_idle();
    assert!(all_done(&sim));
}

#[test]
fn random_faults_are_reproducible_and_keep_hosts_connected() {
    let workload = "type = \"permutation\"\nsize = \"1MiB\"";
    let extra = "[[fault]]\nkind = \"random_cables\"\npercent = 50\n";
    let a = small("reps", true, workload, extra);
    let b = small("reps", true, workload, extra);
    let rows = |s: &Simulation| s.flow_rows();
    assert_eq!(rows(&a), rows(&b));
    assert!(all_done(&a));
    assert_conserved(&a);
    let scn = |seed: u64| {
        let text = format!(
            "seed = {seed}\n[topology]\ntype = \"fat_tree\"\ntiers = 2\nhosts = 16\nhosts_per_tor = 4\nlink_speed = \"400Gbps\"\n[workload]\n{workload}\n{extra}"
        );
        LoadedScenario::parse(&text, Path::new("r.toml"))
            .unwrap()
            .build("reps", None)
            .unwrap()
            .faults
    };
    assert_eq!(scn(3), scn(3));
    assert_eq!(scn(3).chosen.len(), 8);
    assert_ne!(scn(3).chosen, scn(4).chosen);
    for kind in ["random_switches", "random_tor_uplinks"] {
        let extra = format!(
            "[[fault]]\nkind = \"{kind}\"\npercent = 25\nstart = \"10us\"\nduration = \"50us\"\n"
        );
        let sim = small("reps", true, workload, &extra);
        assert!(all_done(&sim), "{kind}");
        assert_conserved(&sim);
    }
}

#[test]
fn reference_failure_file_import() {
    let workload = "type = \"permutation\"\nsize = \"1MiB\"";
    let extra = "[[fault]]\nkind = \"file\"\nfile = \"../data/htsim/failures/fail_one_cable_after_10us_for_100us.txt\"\n";
    let sim = small("reps", false, workload, extra);
    assert!(all_done(&sim));
    assert_conserved(&sim);
    assert_eq!(sim.fault_stats().unwrap().actions, 2);
}

#[test]
fn a_rate_fault_keeps_a_lossless_port_lossless() {
    // An incast through a switch port that a rate fault slows mid-run: under PFC the port's
    // queue stays unbounded (the MMU pauses senders), so nothing is dropped.
    let workload = "type = \"incast\"\nsenders = 8\nreceiver = 15\nsize = \"1MiB\"";
    let extra = "[pfc]\nenabled = true\n[[fault]]\nkind = \"rate\"\nlink = \"agg0->tor3\"\n\
                 speed = \"100Gbps\"\nstart = \"5us\"\n";
    let sim = small("ecmp", false, workload, extra);
    assert!(all_done(&sim));
    assert_eq!(sim.fault_stats().unwrap().actions, 2); // both directions of the cable
    let s = sim.summary(0.0);
    assert_eq!((s.drops, s.trims), (0, 0), "{s:?}");
    assert_conserved(&sim);
}

#[test]
fn unreachable_destination_ends_with_a_message_naming_the_flow() {
    // Host 8's ToR is dead for good: nothing reaches it.
    let extra = "[[fault]]\nkind = \"switch_down\"\nswitch = \"tor2\"\n[routing]\ngive_up_after = \"1ms\"\n";
    let sim = small("reps", false, ONE_FLOW, extra);
    let msgs = sim.unreachable_flows();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with("flow 1 (host 0 -> host 8): destination unreachable"),
        "{}",
        msgs[0]
    );
    assert_eq!(sim.flows()[0].phase, Phase::GaveUp);
    assert!(
        to_us(sim.now()) < 1_500.0,
        "ended at {} us",
        to_us(sim.now())
    );
    assert_conserved(&sim);
    assert_eq!(sim.summary(0.0).unreachable.len(), 1);

    // With reconvergence the switches learn there is no route left.
    let extra = format!(
        "{}[routing]\nreconvergence = \"10us\"\ngive_up_after = \"500us\"\n",
        uplinks_down("0us", "10ms")
    );
    let sim = small("reps", false, ONE_FLOW, &extra);
    let msgs = sim.unreachable_flows();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(msgs[0].contains("no route at tor0"), "{}", msgs[0]);
    assert!(sim.fault_stats().unwrap().no_route > 0);
}

#[test]
fn reconvergence_removes_dead_links_so_ecmp_recovers() {
    let workload = "type = \"permutation\"\nsize = \"1MiB\"";
    let dead = "[[fault]]\nkind = \"link_down\"\nlink = \"tor0->agg0\"\n[[fault]]\nkind = \"link_down\"\nlink = \"tor1->agg2\"\n";
    let with = small(
        "ecmp",
        false,
        workload,
        &format!("{dead}[routing]\nreconvergence = \"20us\"\n"),
    );
    assert!(all_done(&with));
    assert_eq!(with.fault_stats().unwrap().reconvergences, 1);
    assert!(with.stalled_flows().is_empty());

    // Control: the same dead links without reconvergence. ECMP keeps hashing some flows onto
    // them, so those flows never finish (the test above would otherwise pass vacuously, had no
    // flow hashed onto a dead link).
    let without = small("ecmp", false, workload, dead);
    let unfinished = without
        .flows()
        .iter()
        .filter(|f| f.phase != Phase::Done)
        .count();
    assert!(
        unfinished > 0,
        "without reconvergence every flow finished: no flow was pinned to a dead link"
    );
    assert_eq!(without.fault_stats().unwrap().reconvergences, 0);
    let lost = |s: &Simulation| s.fault_stats().unwrap().data_dropped;
    assert!(
        lost(&without) > 2 * lost(&with).max(1),
        "fault drops without reconvergence {} vs with {}",
        lost(&without),
        lost(&with)
    );
}

#[test]
fn mixed_traffic_reports_classes() {
    let workload = "type = \"permutation\"\nsize = \"1MiB\"\necmp_every = 4";
    let sim = small("reps", true, workload, "");
    assert!(all_done(&sim));
    let s = sim.summary(0.0);
    let classes = s.classes.unwrap();
    assert_eq!(classes[0].class, "main");
    assert_eq!(classes[1].lb, "ecmp");
    assert_eq!(classes[1].flows_total, 4);
    assert_eq!(classes[0].flows_total + classes[1].flows_total, 16);
    for (i, r) in sim.flow_rows().iter().enumerate() {
        assert_eq!(
            r.class == "background",
            sim.flows()[i].spec.src.is_multiple_of(4)
        );
    }
}

#[test]
fn micro_failures_acceptance() {
    let reps = run_file("reps-micro-failures.toml", "reps");
    let ops = run_file("reps-micro-failures.toml", "ops");
    assert!(all_done(&reps) && all_done(&ops));
    let (r, o) = (reps.summary(0.0), ops.summary(0.0));
    assert!(
        o.fct_us.max >= 1.3 * r.fct_us.max,
        "max FCT reps {} ops {}",
        r.fct_us.max,
        o.fct_us.max
    );
    assert!(
        o.fault_drops as f64 >= 1.5 * r.fault_drops as f64,
        "fault drops reps {} ops {}",
        r.fault_drops,
        o.fault_drops
    );
    assert_conserved(&reps);
    // Every connection freezes within 2 RTOs of the first failure (100 us) and unfreezes after
    // the configured 100 us (at its first ACK past the deadline).
    let rto = reps.rto();
    for f in 0..reps.flows().len() as u32 {
        let recs: Vec<_> = reps.lb_records().iter().filter(|x| x.flow == f).collect();
        let froze = recs
            .iter()
            .find(|x| x.event.name == "froze" && x.event.until.is_some())
            .expect("froze");
        assert!(
            froze.time > 100 * US && froze.time <= 100 * US + 2 * rto,
            "flow {f} froze at {}",
            to_us(froze.time)
        );
        let unfroze = recs
            .iter()
            .find(|x| x.event == LbEvent::named("unfroze") && x.time > froze.time)
            .expect("unfroze");
        let held = unfroze.time - froze.time;
        assert!(
            (100 * US..110 * US).contains(&held),
            "flow {f} frozen for {} us",
            to_us(held)
        );
    }
    assert_eq!(
        r.freezes,
        reps.lb_records()
            .iter()
            .filter(|x| x.event.name == "froze" && x.event.until.is_some())
            .count() as u64
    );
}

#[test]
fn one_cable_32_acceptance() {
    let reps = run_file("failures-one-cable-32.toml", "reps");
    let ops = run_file("failures-one-cable-32.toml", "ops");
    assert!(all_done(&reps) && all_done(&ops));
    let (r, o) = (reps.summary(0.0), ops.summary(0.0));
    assert!(
        o.fct_us.max >= 10.0 * r.fct_us.max,
        "max FCT reps {} ops {}",
        r.fct_us.max,
        o.fct_us.max
    );
    assert_conserved(&reps);
    assert_conserved(&ops);
}

#[test]
fn freezing_can_be_disabled() {
    let scn = LoadedScenario::load(&root().join("scenarios/reps-micro-failures.toml")).unwrap();
    let mut b = scn.build("reps", None).unwrap();
    let Some(reps) = b.config.lb.config_mut::<repsim::lb::reps::RepsConfig>() else {
        panic!("a REPS run");
    };
    reps.freezing = false;
    let mut sim = Simulation::new(b).unwrap();
    sim.run_until_idle();
    assert!(all_done(&sim));
    assert!(sim.lb_records().is_empty());
}

#[test]
fn extreme_50_percent_failed_cables_reps_completes_every_flow() {
    // Paper Fig. 8 at full scale: 1024 hosts, half of the ToR->spine cables failed from t = 0,
    // every pair of hosts still connected. REPS must finish every flow (no stall, no livelock).
    let sim = run_file("failures-extreme-50.toml", "reps");
    assert!(all_done(&sim), "unfinished: {:?}", sim.stalled_flows());
    assert!(sim.unreachable_flows().is_empty());
    assert!(
        sim.counters().data_dropped > 0,
        "the failed cables must have cost packets"
    );
    assert_conserved(&sim);
}
