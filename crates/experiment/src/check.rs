//! `repsim check`: what a scenario would run, without running it; its memory once set up, and
//! how its network would split over threads.
use std::path::Path;

use anyhow::Result;
use repsim::engine::time::to_us;
use repsim::net::topology::{PartitionRule, Partitioning};
use repsim::scenario::{LoadedScenario, Override};

use crate::run::check_runs;

/// `repsim check`; with `partitions`, also how the network would split into that many
/// partitions.
pub fn check(path: &Path, set: &[Override], memory: bool, partitions: Option<u32>) -> Result<()> {
    let mut printed: Vec<Partitioning> = Vec::new();
    let scn = LoadedScenario::load_with(path, set)?;
    if let Some(description) = &scn.scenario.description {
        println!("{}: {description}", scn.name());
    }
    check_runs(&scn, |lb, sim| {
        println!(
            "{}: {lb}: {} flows on a {}; RTO {:.3} us, max base RTT {:.3} us",
            scn.name(),
            sim.flows().len(),
            sim.topology(),
            to_us(sim.rto()),
            to_us(sim.max_base_rtt())
        );
        if memory {
            crate::scale::print_memory(sim);
        }
        // Every run of a scenario has the same network: each different split is printed once.
        if let Some(parts) = partitions {
            let split = sim.partitioning(parts);
            if !printed.contains(&split) {
                print_partitions(sim, &split, parts);
                printed.push(split);
            }
            if memory {
                print_partition_memory(sim, parts);
            }
            let blockers = sim.partition_blockers();
            if blockers.is_empty() {
                println!("{lb}: runs on threads");
            } else {
                println!("{lb}: cannot run on threads yet: {}", blockers.join(", "));
            }
        }
        Ok(())
    })
}

/// The partitions `p` of `sim`'s network (asked for: `parts`): each one's hosts, switches and
/// ports, the links that cross, and the lookahead (see [`repsim::net::topology::partition`]).
fn print_partitions(sim: &repsim::Simulation, p: &Partitioning, parts: u32) {
    let topo = sim.topology();
    if sim.partition_rule() == PartitionRule::EdgesTogether {
        println!("the switch scheme shares state among the edge switches: they stay together");
    }
    let together = sim.hosts_kept_together();
    if !together.is_empty() {
        let largest = together.iter().map(Vec::len).max().unwrap_or(0);
        let groups = match together.len() {
            1 => "1 group".to_string(),
            n => format!("{n} groups"),
        };
        println!(
            "instant triggers act on several hosts at once: {groups} of hosts (the largest \
             {largest} hosts) stay in one partition each, with their units"
        );
    }
    let (hosts, switches) = (p.hosts(topo), p.switches(topo));
    println!(
        "{} partitions (of {parts} asked for): {} of {} directed links cross, lookahead {}, \
         busiest partition {:.3} x the mean ports",
        p.parts,
        p.crossing_links,
        topo.links.len(),
        p.lookahead.map_or_else(
            || "none (nothing crosses)".to_string(),
            |t| format!("{:.3} us", to_us(t))
        ),
        p.imbalance()
    );
    println!("partition hosts switches ports");
    for i in 0..p.parts as usize {
        println!(
            "{i:>9} {:>5} {:>8} {:>5}",
            hosts[i], switches[i], p.ports[i]
        );
    }
}

/// `--memory` with `--partitions`: what each partition of this run holds once set up. Every
/// partition builds the run's whole set-up on its own thread (its copy of the tables, the flow
/// list and every port), so each holds the one-thread table's total; while running, a
/// partition adds the windows of the flows it sends and receives and the packets on its ports.
fn print_partition_memory(sim: &repsim::Simulation, parts: u32) {
    let p = sim.partitioning(parts);
    let setup = sim.memory_breakdown().last().map_or(0, |total| total.bytes);
    let mut sends = vec![0u64; p.parts as usize];
    let mut receives = vec![0u64; p.parts as usize];
    for f in sim.flows() {
        sends[p.of_node[f.spec.src as usize] as usize] += 1;
        receives[p.of_node[f.spec.dst as usize] as usize] += 1;
    }
    println!(
        "memory on {} partitions: each builds the whole set-up ({:.2} MB), {:.2} MB in all; \
         running, each adds the windows of the flows it sends and receives and the packets \
         on its ports",
        p.parts,
        setup as f64 / 1e6,
        setup as f64 * p.parts as f64 / 1e6
    );
    println!("partition ports flows_sent flows_received setup_MB");
    for i in 0..p.parts as usize {
        println!(
            "{i:>9} {:>5} {:>10} {:>14} {:>8.2}",
            p.ports[i],
            sends[i],
            receives[i],
            setup as f64 / 1e6
        );
    }
}
