//! The REPS paper's artifact htsim (`--artifact reps`): its command line as a repsim scenario.
//!
//! The artifact (`tommasobo/REPS_EuroSys_Artifact`) is a fork of htsim whose flags overlap
//! uet-htsim's but mean other things (`reps` is its older REPS, `-failed N` halves ToR uplinks).
//! Its scenario is written the way the repository's own REPS scenarios are (`scenarios/*.toml`):
//! the topology file and connection matrix by path, queues and ECN in packets, the transport's
//! timeout left to repsim's default, which is the artifact's (largest unloaded RTT plus four
//! queue drain times). So a figure's scenario and the artifact line it came from build the same
//! run, which `tests/artifact.rs` checks line by line.
//!
//! | artifact flag | scenario |
//! |---|---|
//! | `-failed N` (not 42) | `[[degrade]]`: ToRs `t` with `t mod (ToRs / N) = 0`, in order, their uplinks to the first Aggs of their pod (with `-skip_asy` the first only) until N are degraded; 3 tiers also Core -> Agg links `core(a mod P + P l) -> agg a` for `l + a P < N` (P Aggs per pod); speed and buffer x `-down_ratio` |
//! | `-failed 42` | ToR 0's uplink to Agg 1 drops data packets from 100 to 200 us, to Agg 3 from 350 to 600 us (silently); MPRDMA fast increase from 650 us |
//! | `-failures_input F` | `[[fault]] kind = "file"` (the import of failure-generator files) |
//! | `-mixed_lb_traffic` | `ecmp_every = 10`: flows from every 10th host in the ECMP background class (the artifact takes every 10th connection; the same where connection i leaves host i) |
//! | `-load_balancing_algo` | `freezing` -> `reps`, `reps` -> `reps-legacy`, `oblivious` -> `ops`, `ecmp`, `plb`, `bitmap`, `mixed` |
//! | `-paths P` | `transport.evs_size` (65,535, the artifact's "every EV", as 65,536); BitMap and mixed take P when it is a power of two, 65,536 for 65,535 (the artifact masks its EVs with 65,534, so its generator walks 32,768 of them and a penalised EV comes back as rarely as among 65,536), else their own 256 |
//! | `-sack_threshold B` | `ack_every` of B bytes, counted in 16 bits |
//! | `-collect_data`, `-log_link`, `-other_location`, `-enable_qa_gate` | nothing: they change files the artifact writes (or an NSCC gate that is on already) |
//! | `--duplicate-nic-request-on-timeout` (the front end's, not the artifact's) | `transport.duplicate_nic_request_on_timeout = true`: after a timeout its window has room for, the artifact's sender asks its NIC for a turn a second time and keeps both places in the round robin (off by default: a NIC serves a queue pair once per round) |
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use repsim::net::topology::topo_file::parse_topo;

use crate::args::{CcMode, HtsimArgs, LbAlgo};
use crate::build::{self, Built, Derived, Network};
use crate::error::{HtsimError, Result};

/// The artifact's `-paths` value meaning "every 16-bit EV".
const ALL_EVS: u32 = 65535;
/// The `-failed` value of the artifact's hard-coded timed-outage scenario (paper Fig. 7).
const TIMED_OUTAGES: u32 = 42;
/// `-mixed_lb_traffic` puts the flows of every this many hosts on ECMP.
const MIXED_ECMP_EVERY: u32 = 10;

/// The files an artifact command line names, resolved to paths that exist.
#[derive(Clone, Debug)]
pub struct ArtifactFiles {
    /// `-tm`.
    pub tm: PathBuf,
    /// `-topo`.
    pub topo: Option<PathBuf>,
    /// `-failures_input`.
    pub failures: Option<PathBuf>,
}

/// The fat tree's shape as far as `-failed` needs it.
struct Shape {
    tiers: u32,
    hosts: u32,
    hosts_per_tor: u32,
    hosts_per_pod: u32,
    aggs_per_pod: u32,
    agg_uplinks: u32,
    /// Speed of ToR -> Agg links (Mb/s).
    uplink_mbps: u64,
    /// Speed of Core -> Agg links (Mb/s).
    core_mbps: u64,
}

/// The `Nodes` line of a connection matrix.
fn matrix_nodes(path: &Path) -> Result<u32> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HtsimError::new(format!("-tm {}: cannot read: {e}", path.display())))?;
    for line in text.lines() {
        let mut t = line.split_whitespace();
        if t.next().is_some_and(|k| k.eq_ignore_ascii_case("nodes")) {
            return t.next().and_then(|n| n.parse().ok()).ok_or_else(|| {
                HtsimError::new(format!("-tm {}: bad 'Nodes' line", path.display()))
            });
        }
    }
    Err(HtsimError::new(format!(
        "-tm {}: no 'Nodes' line",
        path.display()
    )))
}

fn mbps(bps: u64) -> u64 {
    bps / 1_000_000
}

/// Reads the topology file's shape (or the generated tree's) and checks `-linkspeed` against it.
fn shape(args: &HtsimArgs, topo: Option<&PathBuf>, nodes: u32) -> Result<Shape> {
    let Some(path) = topo else {
        let k = build::fat_tree_radix(nodes, args.tiers)?;
        let half = k / 2;
        return Ok(Shape {
            tiers: args.tiers,
            hosts: nodes,
            hosts_per_tor: half,
            hosts_per_pod: if args.tiers == 3 { half * half } else { nodes },
            aggs_per_pod: half,
            agg_uplinks: half,
            uplink_mbps: args.linkspeed_mbps,
            core_mbps: args.linkspeed_mbps,
        });
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| HtsimError::new(format!("-topo {}: cannot read: {e}", path.display())))?;
    let spec =
        parse_topo(&text).map_err(|e| HtsimError::new(format!("-topo {}: {e}", path.display())))?;
    // The artifact runs smaller matrices on larger trees (its 32-host traces on 128 hosts).
    if spec.hosts < nodes {
        return Err(HtsimError::new(format!(
            "-topo {}: {} nodes, fewer than the matrix's {nodes}",
            path.display(),
            spec.hosts
        )));
    }
    let host_mbps = mbps(spec.tiers[0].downlink_rate_bps);
    if host_mbps != args.linkspeed_mbps {
        return Err(HtsimError::new(format!(
            "-linkspeed {}: the topology's host links run at {host_mbps} Mb/s; NICs slower or faster than their links are not modelled",
            args.linkspeed_mbps
        )));
    }
    let t = &spec.tiers;
    let bundle1 = t[1].bundle.max(1);
    Ok(Shape {
        tiers: t.len() as u32,
        hosts: spec.hosts,
        hosts_per_tor: t[0].radix_down,
        hosts_per_pod: spec.pod_size,
        aggs_per_pod: t[0].radix_up / bundle1,
        agg_uplinks: t.get(2).map_or(0, |c| t[1].radix_up / c.bundle.max(1)),
        uplink_mbps: mbps(t[1].downlink_rate_bps),
        core_mbps: t.get(2).map_or(0, |c| mbps(c.downlink_rate_bps)),
    })
}

/// The artifact's constants for the run, for the scenario's header comment.
fn derived(args: &HtsimArgs, net: &Network) -> Derived {
    let mut d = Derived::new(args, net);
    // The artifact's timeout: the largest unloaded RTT plus four full queues' drain time.
    let drain_ps = d.queue_bytes as f64 * 8.0 * 1e12 / args.linkspeed_bps() as f64;
    d.rto_ps = d.network_rtt_ps + (4.0 * drain_ps).round() as u64;
    if args.ecn_pkts.is_none() {
        let q = d.queue_bytes / u64::from(args.mtu);
        d.ecn_pkts = ((q as f64 * 0.2) as u64, (q as f64 * 0.8) as u64);
    }
    d
}

/// `-failed N`: the degraded links, `(name, speed in Mb/s)`.
fn degraded_links(args: &HtsimArgs, s: &Shape) -> Result<Vec<(String, u64)>> {
    let n = args.failed;
    let tors = s.hosts / s.hosts_per_tor;
    if n > tors * s.aggs_per_pod {
        return Err(HtsimError::new(format!(
            "-failed {n}: the topology has {} ToR uplinks",
            tors * s.aggs_per_pod
        )));
    }
    let step = (tors / n).max(1);
    let tors_per_pod = s.hosts_per_pod / s.hosts_per_tor;
    let scale = |m: u64| (m as f64 * args.down_ratio).round() as u64;
    let mut links = Vec::new();
    'tors: for tor in (0..tors).filter(|t| t % step == 0) {
        let first_agg = tor / tors_per_pod * s.aggs_per_pod;
        let per_tor = if args.skip_asy {
            1
        } else {
            s.aggs_per_pod.min(n)
        };
        for j in 0..per_tor {
            if links.len() as u32 == n {
                break 'tors;
            }
            links.push((
                format!("tor{tor}->agg{}", first_agg + j),
                scale(s.uplink_mbps),
            ));
        }
    }
    if s.tiers == 3 {
        let aggs = tors / tors_per_pod * s.aggs_per_pod;
        for agg in 0..aggs {
            for l in 0..s.agg_uplinks {
                if u64::from(l) + u64::from(agg) * u64::from(s.aggs_per_pod) < u64::from(n) {
                    let core = agg % s.aggs_per_pod + s.aggs_per_pod * l;
                    links.push((format!("core{core}->agg{agg}"), scale(s.core_mbps)));
                }
            }
        }
    }
    Ok(links)
}

/// `-failed 42`: the artifact's two timed outages of ToR 0's uplinks. Its code finds the two
/// queues by names that carry the link speed and buffer size, so it acts only at 400 Gb/s with
/// `-q 100`; elsewhere the artifact drops nothing, which is an error here rather than a silent
/// run without the outages.
fn timed_outages(args: &HtsimArgs, s: &Shape) -> Result<String> {
    if s.uplink_mbps != 400_000 || args.queue_pkts != Some(100) || args.mtu != 4150 {
        return Err(HtsimError::new(
            "-failed 42: the artifact's timed outages match only 400 Gb/s uplinks, -q 100 and 4,150 B packets (with other values it drops nothing)",
        ));
    }
    if s.aggs_per_pod < 4 {
        return Err(HtsimError::new(
            "-failed 42: ToR 0 needs at least 4 uplinks (its outages are on those to Aggs 1 and 3)",
        ));
    }
    let mut out = String::new();
    for (agg, start, duration) in [(1, 100, 100), (3, 350, 250)] {
        let _ = writeln!(
            out,
            "\n[[fault]]\nkind = \"link_down\"\nlink = \"tor0->agg{agg}\"\ndirection = \"forward\"\npackets = \"data\"\nstart = \"{start}us\"\nduration = \"{duration}us\""
        );
    }
    Ok(out)
}

fn lb_entry(args: &HtsimArgs) -> Result<String> {
    let freezing_flags = args.exit_freeze_ps.is_some() || args.freeze_off;
    if freezing_flags && args.lb != LbAlgo::Freezing {
        return Err(HtsimError::new(
            "-exit_freeze / -freezeoff: only with -load_balancing_algo freezing",
        ));
    }
    let mut entry = format!("{{ scheme = \"{}\"", args.lb.scheme());
    if matches!(args.lb, LbAlgo::Bitmap | LbAlgo::Mixed) {
        if args.paths.is_power_of_two() {
            let _ = write!(entry, ", evs_size = {}", args.paths);
        } else if args.paths == ALL_EVS {
            entry.push_str(", evs_size = 65536");
        }
    }
    if let Some(ps) = args.exit_freeze_ps {
        let _ = write!(entry, ", freeze = \"{ps}ps\"");
    }
    if args.freeze_off {
        entry.push_str(", freezing = false");
    }
    entry.push_str(" }");
    Ok(entry)
}

/// Builds the scenario of an artifact command line whose files are `files`.
pub fn scenario(args: &HtsimArgs, files: &ArtifactFiles) -> Result<Built> {
    let nodes = matrix_nodes(&files.tm)?;
    if let Some(n) = args.nodes.filter(|&n| n != nodes) {
        return Err(HtsimError::new(format!(
            "-nodes {n}: the matrix has Nodes {nodes}"
        )));
    }
    let shape = shape(args, files.topo.as_ref(), nodes)?;
    let mut s = build::scenario_head(
        "Built by `repsim htsim --artifact reps` from a command line of the REPS paper's artifact htsim.",
        "htsim-artifact",
        args,
        &lb_entry(args)?,
    );
    let network = match &files.topo {
        Some(path) => {
            let _ = writeln!(
                s,
                "\n[topology]\ntype = \"topo_file\"\nfile = {}",
                build::quoted(&path.display().to_string())
            );
            build::read_topo_file(path)?.1
        }
        None => build::generated_fat_tree(&mut s, args, nodes)?,
    };
    let derived = derived(args, &network);
    if args.failed == TIMED_OUTAGES {
        s.push_str(&timed_outages(args, &shape)?);
    } else if args.failed > 0 {
        for (link, speed) in degraded_links(args, &shape)? {
            let _ = writeln!(
                s,
                "\n[[degrade]]\nlink = \"{link}\"\nspeed = \"{speed}Mbps\""
            );
        }
    }
    if let Some(f) = &files.failures {
        let _ = writeln!(
            s,
            "\n[[fault]]\nkind = \"file\"\nfile = {}",
            build::quoted(&f.display().to_string())
        );
    }
    let queue_pkts = derived.queue_bytes / u64::from(args.mtu);
    let _ = writeln!(
        s,
        "\n[queue]\nsize = \"{queue_pkts}pkt\"\necn_min = \"{}pkt\"\necn_max = \"{}pkt\"\ntrimming = {}",
        derived.ecn_pkts.0, derived.ecn_pkts.1, !args.disable_trim
    );
    let evs = if args.paths == ALL_EVS {
        65536
    } else {
        args.paths
    };
    let _ = writeln!(
        s,
        "\n[transport]\nmtu = \"{}B\"\nheader = \"64B\"\nack_every = \"{}B\"\nack_counter_16bit = true\nevs_size = {evs}\nreuse_connections = {}",
        args.mtu, args.sack_threshold, args.conn_reuse
    );
    if args.duplicate_nic_request_on_timeout {
        s.push_str("duplicate_nic_request_on_timeout = true\n");
    }
    if args.cc == CcMode::Receiver {
        s.push_str("\n[cc]\nalgo = \"eqds\"\n");
    } else {
        s.push_str(&build::cc_section(args)?);
        if args.failed == TIMED_OUTAGES {
            s.push_str("fast_increase_after = \"650us\"\n");
        }
    }
    let _ = writeln!(
        s,
        "\n[workload]\ntype = \"cm\"\nfile = {}",
        build::quoted(&files.tm.display().to_string())
    );
    if args.mixed_lb_traffic {
        let _ = writeln!(s, "ecmp_every = {MIXED_ECMP_EVERY}");
    }
    Ok(Built {
        toml: s,
        derived,
        network,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/htsim")
            .join(path)
    }

    fn build(extra: &[&str], topo: &str) -> Result<Built> {
        let mut argv = vec!["--artifact", "reps", "-tm", "x.cm", "-sender_cc_only"];
        argv.extend_from_slice(extra);
        let args = HtsimArgs::parse(&argv)?;
        let files = ArtifactFiles {
            tm: data("connection_matrices/perm_n128_s8388608.cm"),
            topo: Some(data(&format!("topologies/{topo}"))),
            failures: None,
        };
        scenario(&args, &files)
    }

    fn degraded(toml: &str) -> Vec<(String, String)> {
        let lines: Vec<&str> = toml.lines().collect();
        lines
            .windows(2)
            .filter_map(|w| {
                let link = w[0].strip_prefix("link = ")?;
                let speed = w[1].strip_prefix("speed = ")?;
                Some((
                    link.trim_matches('"').into(),
                    speed.trim_matches('"').into(),
                ))
            })
            .collect()
    }

    const TWO_TIER: &str = "fat_tree_128_1os_2t_400g.topo";
    const THREE_TIER: &str = "fat_tree_128_1os_3t_400g.topo";

    #[test]
    fn failed_n_halves_the_first_tors_first_uplinks() {
        let b = build(&["-linkspeed", "400000", "-failed", "4"], TWO_TIER).unwrap();
        let links = degraded(&b.toml);
        let names: Vec<&str> = links.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            names,
            ["tor0->agg0", "tor0->agg1", "tor0->agg2", "tor0->agg3"]
        );
        assert!(links.iter().all(|(_, s)| s == "200000Mbps"));
        let b = build(
            &[
                "-linkspeed",
                "400000",
                "-failed",
                "2",
                "-down_ratio",
                "0.25",
            ],
            TWO_TIER,
        )
        .unwrap();
        assert_eq!(
            degraded(&b.toml),
            [
                ("tor0->agg0".into(), "100000Mbps".into()),
                ("tor0->agg1".into(), "100000Mbps".into())
            ]
        );
        // Fig. 4's asymmetry: one uplink each of ToRs 0, 4, 8 and 12.
        let b = build(
            &["-linkspeed", "400000", "-failed", "4", "-skip_asy"],
            TWO_TIER,
        )
        .unwrap();
        let names: Vec<String> = degraded(&b.toml).into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            names,
            ["tor0->agg0", "tor4->agg0", "tor8->agg0", "tor12->agg0"]
        );
    }

    #[test]
    fn failed_n_on_three_tiers_also_slows_core_downlinks() {
        let b = build(&["-linkspeed", "400000", "-failed", "1"], THREE_TIER).unwrap();
        let names: Vec<String> = degraded(&b.toml).into_iter().map(|(l, _)| l).collect();
        assert_eq!(names, ["tor0->agg0", "core0->agg0"]);
        // 32 ToRs, 8 failed links: every 4th ToR from 0, up to 4 uplinks each (its pod's Aggs).
        let b = build(&["-linkspeed", "400000", "-failed", "8"], THREE_TIER).unwrap();
        let names: Vec<String> = degraded(&b.toml).into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            &names[..8],
            [
                "tor0->agg0",
                "tor0->agg1",
                "tor0->agg2",
                "tor0->agg3",
                "tor4->agg4",
                "tor4->agg5",
                "tor4->agg6",
                "tor4->agg7"
            ]
        );
        assert!(names[8..].iter().all(|n| n.starts_with("core")));
    }

    #[test]
    fn failed_42_is_the_timed_outage_scenario_and_checks_its_preconditions() {
        let ok = ["-linkspeed", "400000", "-q", "100", "-failed", "42"];
        let b = build(&ok, THREE_TIER).unwrap();
        assert!(b.toml.contains("link = \"tor0->agg1\""), "{}", b.toml);
        assert!(b.toml.contains("start = \"350us\"\nduration = \"250us\""));
        assert!(b.toml.contains("fast_increase_after = \"650us\""));
        assert!(degraded(&b.toml).is_empty());
        let e = build(
            &["-linkspeed", "400000", "-q", "50", "-failed", "42"],
            THREE_TIER,
        )
        .unwrap_err();
        assert!(e.0.starts_with("-failed 42:"), "{e}");
    }

    #[test]
    fn the_artifacts_defaults_and_mappings() {
        let b = build(&["-linkspeed", "400000", "-paths", "65535"], TWO_TIER).unwrap();
        assert!(b
            .toml
            .contains("size = \"35pkt\"\necn_min = \"7pkt\"\necn_max = \"28pkt\""));
        assert!(b.toml.contains("evs_size = 65536"));
        assert!(b.toml.contains("end = \"100000us\""));
        assert!(b
            .toml
            .contains("ack_every = \"16384B\"\nack_counter_16bit = true"));
        // 2-tier, 400 G, 100 packets: 8.33712 us plus four drains of 415,000 B.
        let b = build(&["-linkspeed", "400000", "-q", "100"], TWO_TIER).unwrap();
        assert_eq!(b.derived.network_rtt_ps, 8_337_120);
        assert_eq!(b.derived.rto_ps, 8_337_120 + 33_200_000);
        let e = build(&["-linkspeed", "100000"], TWO_TIER).unwrap_err();
        assert!(e.0.starts_with("-linkspeed 100000:"), "{e}");
        let e = build(
            &[
                "-linkspeed",
                "400000",
                "-exit_freeze",
                "5",
                "-load_balancing_algo",
                "reps",
            ],
            TWO_TIER,
        )
        .unwrap_err();
        assert!(e.0.contains("freezing"), "{e}");
    }

    #[test]
    fn the_duplicate_nic_request_is_asked_for_explicitly() {
        let plain = build(&["-linkspeed", "400000"], TWO_TIER).unwrap();
        assert!(!plain.toml.contains("duplicate_nic_request_on_timeout"));
        let b = build(
            &["-linkspeed", "400000", "--duplicate-nic-request-on-timeout"],
            TWO_TIER,
        )
        .unwrap();
        assert!(b
            .toml
            .contains("reuse_connections = false\nduplicate_nic_request_on_timeout = true\n"));
        let scn = repsim::scenario::LoadedScenario::parse(&b.toml, Path::new("x.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
        let runs = scn.runs().unwrap();
        let spec = scn.build_run(&runs[0], None).unwrap();
        assert!(spec.config.transport.duplicate_nic_request_on_timeout);
        let e =
            HtsimArgs::parse(&["-tm", "x.cm", "--duplicate-nic-request-on-timeout"]).unwrap_err();
        assert!(e.0.contains("--artifact reps"), "{e}");
    }

    #[test]
    fn the_built_scenario_loads() {
        let b = build(
            &[
                "-linkspeed",
                "400000",
                "-failed",
                "4",
                "-mixed_lb_traffic",
                "-load_balancing_algo",
                "plb",
            ],
            TWO_TIER,
        )
        .unwrap();
        let scn = repsim::scenario::LoadedScenario::parse(&b.toml, Path::new("x.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
        let runs = scn.runs().unwrap();
        let spec = scn
            .build_run(&runs[0], None)
            .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
        assert_eq!(spec.flows.len(), 128);
        assert!(spec.flows.iter().any(|f| f.class != 0));
    }
}
