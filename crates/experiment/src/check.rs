//! `repsim check`: what a scenario would run, without running it; its memory once set up, and
//! how its network would split over threads.
use std::path::Path;

use anyhow::Result;
use repsim::engine::time::to_us;
use repsim::scenario::{LoadedScenario, Override};

use crate::run::check_runs;

/// `repsim check`; with `partitions`, also how the network would split into that many
/// partitions.
pub fn check(path: &Path, set: &[Override], memory: bool, partitions: Option<u32>) -> Result<()> {
    let mut first_run = true;
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
        // Every run of a scenario has the same network: its split is printed once.
        if let Some(parts) = partitions {
            if first_run {
                print_partitions(sim.topology(), parts);
                first_run = false;
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

/// The partitions `topo` splits into when `parts` are asked for: each one's hosts, switches
/// and ports, the links that cross, and the lookahead (see
/// [`repsim::net::topology::partition`]).
fn print_partitions(topo: &repsim::net::topology::Topology, parts: u32) {
    let p = topo.partition(parts);
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
