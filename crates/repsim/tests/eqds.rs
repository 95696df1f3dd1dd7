//! Receiver-driven credit (EQDS): the receiver's pull pacer keeps an incast's last hop short,
//! no connection ever holds more unused credit than its cap, every byte arrives once, and every
//! PULL sent is accounted for.
mod common;

use repsim::engine::time::US;
use repsim::net::world::Counters;
use repsim::Simulation;

/// An 8-to-1 incast of 2 MiB flows on a 32-host 2-tier tree (senders on other ToRs than the
/// receiver, host 0), with the reference's 100-packet buffers and ECN 20/80.
fn incast(cc: &str, trimming: bool) -> String {
    let flows: Vec<String> = (0..8)
        .map(|i| format!("{{ src = {}, dst = 0, size = \"2MiB\" }}", 4 + 3 * i))
        .collect();
    let tree = common::TREE_32;
    format!(
        r#"
seed = 3
lb = "reps"
{tree}
[queue]
size = "100pkt"
ecn_min = "20pkt"
ecn_max = "80pkt"
trimming = {trimming}
[cc]
{cc}
[workload]
type = "explicit"
flows = [{}]
"#,
        flows.join(", ")
    )
}

fn build(text: &str, lb: &str) -> Simulation {
    let scn = common::parse(text);
    Simulation::new(scn.build(lb, None).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// Every PULL sent reached its sender or was lost.
fn assert_credits_balance(c: &Counters) {
    assert_eq!(
        c.credits_sent,
        c.credits_arrived + c.control_dropped,
        "PULLs unaccounted for: {c:?}"
    );
}

/// Trims and drops at the receiver's ToR port towards host 0.
fn last_hop_losses(sim: &Simulation) -> u64 {
    let downlink = sim.topology().host_downlink[0] as usize;
    let p = sim.port_stats()[downlink];
    p.trims + p.drops
}

/// Runs a scenario to the end, noting the last hop's losses at 40 us (about five base RTTs:
/// the speculative first windows are over).
fn run_incast(text: &str) -> (Simulation, u64) {
    let mut sim = build(text, "reps");
    sim.run_until(40 * US);
    let early = last_hop_losses(&sim);
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    assert_credits_balance(&sim.counters());
    (sim, early)
}

#[test]
fn the_pull_pacer_keeps_an_incast_last_hop_short() {
    for trimming in [true, false] {
        let (mprdma, _) = run_incast(&incast(r#"algo = "mprdma""#, trimming));
        assert_eq!(mprdma.counters().credits_sent, 0, "no PULLs without EQDS");
        let mprdma_losses = last_hop_losses(&mprdma);
        let downlink = mprdma.topology().host_downlink[0] as usize;
        let full = 100 * 4150;
        assert!(mprdma_losses > 0);
        assert_eq!(mprdma.port_stats()[downlink].max_occupancy, full);

        // The reference's setting: every sender speculates with 1.5 BDP, so the first window
        // overflows the last hop much as MPRDMA's does; after it the pacer admits 99 % of the
        // link rate and losses (almost) stop. Marking there is off by default.
        let (eqds, early) = run_incast(&incast(r#"algo = "eqds""#, trimming));
        let losses = last_hop_losses(&eqds);
        assert!(eqds.counters().credits_sent > 0);
        assert_eq!(eqds.port_stats()[downlink].ecn_marks, 0);
        assert!(
            losses < mprdma_losses && losses - early <= 4,
            "trimming={trimming}: last-hop losses eqds {losses} ({early} in the first 40 us), \
             mprdma {mprdma_losses}"
        );

        // With one packet of speculation the pacer alone admits traffic: the last hop never
        // holds more than a few packets and loses none.
        let (eqds, _) = run_incast(&incast(
            "algo = \"eqds\"\ninitial_credit = \"1pkt\"",
            trimming,
        ));
        assert_eq!(last_hop_losses(&eqds), 0, "trimming={trimming}");
        let max = eqds.port_stats()[downlink].max_occupancy;
        assert!(
            max <= 8 * 4150,
            "trimming={trimming}: last-hop queue reached {max} B"
        );
        assert_eq!(eqds.counters().trims + eqds.counters().data_dropped, 0);
    }
}

#[test]
fn no_connection_holds_more_unused_credit_than_its_cap() {
    // A 4-to-1 incast beside a 1-to-4 fan-out: host 5's NIC cannot use what four pacers
    // grant it, so its connections pile up credit against their caps.
    let mut flows: Vec<String> = (0..4)
        .map(|i| format!("{{ src = {}, dst = 0, size = \"2MiB\" }}", 4 + 3 * i))
        .collect();
    flows.extend((0..4).map(|i| format!("{{ src = 5, dst = {}, size = \"2MiB\" }}", 8 + 4 * i)));
    for trimming in [true, false] {
        let text = incast(r#"algo = "eqds""#, trimming);
        let text = format!(
            "{}flows = [{}]\n",
            text.split("flows = [").next().unwrap(),
            flows.join(", ")
        );
        let mut sim = build(&text, "ops");
        let n = sim.flows().len() as u32;
        let (mut t, mut peak, mut cap) = (0, 0u64, 0u64);
        while sim.run_until(t) {
            for f in 0..n {
                let Some(s) = sim.flows()[f as usize].sender() else {
                    continue;
                };
                let granted = sim.credit_granted(f).expect("every flow is credit paced");
                cap = s.cc().credit_gate().expect("credit gated").credit_cap();
                // Credit in PULLs on the way plus credit the sender holds.
                let unused = granted - s.pull_request().used;
                assert!(unused <= cap, "flow {f} at {t} ps: {unused} > cap {cap}");
                assert!(sim.credit_outstanding(f) <= cap);
                peak = peak.max(unused);
            }
            t += 20_000;
        }
        common::assert_all_delivered(&sim);
        assert_credits_balance(&sim.counters());
        // The cap binds: the fan-out's connections get close to it.
        assert!(
            peak * 4 >= cap * 3,
            "trimming={trimming}: peak {peak}, cap {cap}"
        );
    }
}

#[test]
fn a_permutation_completes_under_credit_with_trimming_and_with_drops() {
    for trimming in [true, false] {
        // Every host sends 1 MiB to the host 9 further on.
        let flows: Vec<String> = (0..32)
            .map(|s| format!("{{ src = {s}, dst = {}, size = \"1MiB\" }}", (s + 9) % 32))
            .collect();
        let text = incast(r#"algo = "eqds""#, trimming)
            .replace("size = \"100pkt\"", "size = \"8pkt\"")
            .replace("ecn_min = \"20pkt\"", "ecn_min = \"2pkt\"")
            .replace("ecn_max = \"80pkt\"", "ecn_max = \"6pkt\"");
        let text = format!(
            "{}flows = [{}]\n",
            text.split("flows = [").next().unwrap(),
            flows.join(", ")
        );
        for lb in ["ops", "ecmp"] {
            let mut sim = build(
                &text.replace("lb = \"reps\"", &format!("lb = \"{lb}\"")),
                lb,
            );
            sim.run_until(20 * US);
            common::assert_books_balance(&sim);
            sim.run_until_idle();
            common::assert_all_delivered(&sim);
            assert_credits_balance(&sim.counters());
            let c = sim.counters();
            assert!(
                c.trims + c.data_dropped > 0,
                "{lb} trimming={trimming}: small buffers should overflow somewhere"
            );
        }
    }
}

#[test]
fn a_connection_waiting_for_its_pull_sends_no_rts_unless_asked_to() {
    // A pacer at 5 % of the link serves each of eight connections once every 13 us, longer
    // than the 10 us RTO: connections whose packets were all trimmed wait with nothing in
    // flight. Their headers told the receiver, so by default an RTS only follows a timeout.
    let run = |extra: &str| {
        let cc = format!("algo = \"eqds\"\npull_rate = 0.05\n{extra}\n[transport]\nrto = \"10us\"");
        let mut sim = build(&incast(&cc, true).replace("2MiB", "512KiB"), "reps");
        sim.run_until_idle();
        common::assert_all_delivered(&sim);
        assert_credits_balance(&sim.counters());
        sim
    };
    let waiting = run("");
    assert!(
        waiting.counters().trims > 0,
        "the first windows are trimmed"
    );
    for f in waiting.flows() {
        let s = &f.stats;
        assert!(s.rts <= s.timeouts, "flow {}: {s:?}", f.spec.id);
    }
    // Asked to, a starved connection sends an RTS every RTO while it waits.
    let retrying = run("rts_while_starved = true");
    let extra: u64 = retrying
        .flows()
        .iter()
        .map(|f| f.stats.rts.saturating_sub(f.stats.timeouts))
        .sum();
    assert!(
        extra > 0 && retrying.counters().rts_sent > waiting.counters().rts_sent,
        "RTS without a timeout {extra}; in all {} against {}",
        retrying.counters().rts_sent,
        waiting.counters().rts_sent
    );
}

#[test]
fn the_scenario_names_eqds_and_its_parameters() {
    let scn = common::parse(&incast(
        r#"algo = "eqds"
pull_size = "16KiB"
pull_rate = 0.9
pull_ends_speculation = true
ecn_at_last_hop = true"#,
        true,
    ));
    let b = scn.build("reps", None).unwrap();
    assert_eq!(b.config.cc.name(), "eqds");
    let mut sim = Simulation::new(b).unwrap();
    sim.run_until_idle();
    common::assert_all_delivered(&sim);
    // UEC-sized PULLs: about a quarter as many as 4 KiB ones would need.
    let c = sim.counters();
    assert!(c.credits_sent < 8 * (2 << 20) / 16384 + 64, "{c:?}");
    let e = match common::parse(&incast(
        r#"algo = "eqds"
pull_rate = 2.0"#,
        true,
    ))
    .build("reps", None)
    {
        Err(e) => e.to_string(),
        Ok(_) => panic!("pull_rate 2.0 accepted"),
    };
    assert!(e.contains("pull_rate"), "{e}");
}
