//! From an `htsim_uec` command line to a repsim scenario (TOML the scenario loader accepts).
//!
//! The reference derives its queue sizes, ECN thresholds, timeout and congestion-control
//! constants from one number, the network's largest unloaded RTT (uet-htsim spec section 3.3):
//! `2 x diameter latency + diameter x (MTU + 64 B) serialization`, the diameter being `2 x tiers`
//! hops. The scenario built here writes those values out explicitly, so a user reading the TOML
//! sees what the reference would have used.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::args::{CcMode, Dialect, HtsimArgs, LbAlgo, SenderCc};
use crate::error::{HtsimError, Result};
use crate::matrix::UecMatrix;

/// Size of every header-only packet (ACK, NACK, PULL, trimmed data) in the reference.
const HEADER_BYTES: u64 = 64;
/// Share of its speed a `-failed` link keeps (the reference's `failed_link_ratio`).
const FAILED_LINK_RATIO: f64 = 0.25;
/// The reference's fixed part of the retransmission timeout.
const RTO_BASE_PS: u64 = 15_000_000;

/// The network the command line describes, as far as the reference's derived constants need it.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    /// Switch tiers (2 or 3).
    pub tiers: u32,
    /// One-way latency of the longest host-to-host path, in picoseconds.
    pub diameter_latency_ps: u64,
    /// The generated fat tree's radix K (absent with a topology file).
    pub radix: Option<u32>,
    /// Oversubscription ratio: the product of a topology file's `Oversubscribed` lines (1 for
    /// the generated fat tree).
    pub oversubscription: u32,
}

/// The reference's derived constants for a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    /// Largest unloaded RTT, picoseconds.
    pub network_rtt_ps: u64,
    /// Bandwidth-delay product in whole packets (rounded up).
    pub bdp_pkts: u64,
    /// Switch queue per port, bytes.
    pub queue_bytes: u64,
    /// ECN thresholds in packets.
    pub ecn_pkts: (u64, u64),
    /// Retransmission timeout, picoseconds.
    pub rto_ps: u64,
}

fn serialization_ps(bytes: u64, bps: u64) -> f64 {
    bytes as f64 * 8.0 * 1e12 / bps as f64
}

impl Derived {
    /// The constants `htsim_uec` computes in its `main` for this network and these flags.
    pub fn new(args: &HtsimArgs, net: &Network) -> Self {
        let bps = args.linkspeed_bps();
        let diameter = u64::from(2 * net.tiers);
        let per_hop =
            serialization_ps(u64::from(args.mtu), bps) + serialization_ps(HEADER_BYTES, bps);
        let rtt = 2.0 * net.diameter_latency_ps as f64 + diameter as f64 * per_hop;
        let network_rtt_ps = rtt.round() as u64;
        let bdp_bytes = rtt * bps as f64 / 8.0 / 1e12;
        let bdp_pkts = (bdp_bytes / f64::from(args.mtu)).ceil() as u64;
        let queue_bytes = match args.queue_pkts {
            Some(q) => u64::from(q) * u64::from(args.mtu),
            None => {
                let factor =
                    args.queue_bdp_factor
                        .unwrap_or(if args.disable_trim { 5.0 } else { 1.0 });
                (bdp_pkts as f64 * factor) as u64 * u64::from(args.mtu)
            }
        };
        let ecn_pkts = match args.ecn_pkts {
            Some((lo, hi)) => (u64::from(lo), u64::from(hi)),
            None => (
                (0.2 * bdp_pkts as f64).ceil() as u64,
                (0.8 * bdp_pkts as f64).ceil() as u64,
            ),
        };
        let rto_ps = RTO_BASE_PS + serialization_ps(queue_bytes * 6, bps).round() as u64;
        Derived {
            network_rtt_ps,
            bdp_pkts,
            queue_bytes,
            ecn_pkts,
            rto_ps,
        }
    }
}

fn us_to_ps(us: f64) -> u64 {
    (us * 1e6).round() as u64
}

/// The generated fat tree for `nodes` hosts: the radix K with K^3/4 (3 tiers) or K^2/2 (2 tiers)
/// hosts, which must be exact as the reference requires.
pub fn fat_tree_radix(nodes: u32, tiers: u32) -> Result<u32> {
    let hosts = |k: u64| {
        if tiers == 3 {
            k * k * k / 4
        } else {
            k * k / 2
        }
    };
    let mut k = 2u64;
    while hosts(k) < u64::from(nodes) {
        k += 2;
    }
    if hosts(k) != u64::from(nodes) {
        return Err(HtsimError::new(format!(
            "{nodes} nodes: the reference's {tiers}-tier fat tree needs K^{} / {} hosts for an even K (the nearest is {} with K = {k}); give -topo",
            if tiers == 3 { 3 } else { 2 },
            if tiers == 3 { 4 } else { 2 },
            hosts(k)
        )));
    }
    Ok(k as u32)
}

/// What a topology file says about tiers and latencies (the rest is left to repsim's importer).
pub(crate) fn read_topo_file(path: &Path) -> Result<(u32, Network)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HtsimError::new(format!("-topo {}: cannot read: {e}", path.display())))?;
    let (mut nodes, mut tiers) = (None, None);
    let mut tier = 0usize;
    let mut link_ns = [0u64; 3];
    let mut switch_ns = [0u64; 3];
    let mut oversubscription = 1u32;
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.is_empty() || t[0].starts_with('#') || t.len() < 2 {
            continue;
        }
        let int = || {
            t[1].parse::<u64>().map_err(|_| {
                HtsimError::new(format!("-topo {}: bad value in '{line}'", path.display()))
            })
        };
        match t[0].to_ascii_lowercase().as_str() {
            "nodes" => nodes = Some(int()? as u32),
            "tiers" => tiers = Some(int()? as u32),
            "tier" => tier = (int()? as usize).min(2),
            "downlink_latency_ns" => link_ns[tier] = int()?,
            "switch_latency_ns" => switch_ns[tier] = int()?,
            "oversubscribed" => {
                let ratio = int()?;
                if ratio == 0 {
                    return Err(HtsimError::new(format!(
                        "-topo {}: 'Oversubscribed 0' is not a ratio",
                        path.display()
                    )));
                }
                oversubscription = oversubscription.saturating_mul(ratio.min(1 << 16) as u32);
            }
            _ => {}
        }
    }
    let nodes = nodes
        .ok_or_else(|| HtsimError::new(format!("-topo {}: no 'Nodes' line", path.display())))?;
    let tiers = tiers.unwrap_or(3).clamp(2, 3);
    let t = tiers as usize;
    // Up and down through every tier below the top, and once through the top switch.
    let links: u64 = 2 * link_ns[..t].iter().sum::<u64>();
    let switches: u64 = 2 * switch_ns[..t - 1].iter().sum::<u64>() + switch_ns[t - 1];
    Ok((
        nodes,
        Network {
            tiers,
            diameter_latency_ps: (links + switches) * 1000,
            radix: None,
            oversubscription,
        },
    ))
}

/// A TOML string literal.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The scenario for a command line, with the derived constants it used.
#[derive(Clone, Debug)]
pub struct Built {
    /// Scenario TOML, self-contained (paths absolute).
    pub toml: String,
    /// The reference's derived constants.
    pub derived: Derived,
    /// The network.
    pub network: Network,
}

/// Builds the scenario for `args` and its matrix; `topo` is the resolved `-topo` path.
pub fn scenario(args: &HtsimArgs, matrix: &UecMatrix, topo: Option<&PathBuf>) -> Result<Built> {
    if let Some(n) = args.nodes {
        if n != matrix.nodes {
            return Err(HtsimError::new(format!(
                "-nodes {n}: the matrix has Nodes {}",
                matrix.nodes
            )));
        }
    }
    let mut s = scenario_head(
        "Built by `repsim htsim` from an htsim_uec command line; every value the reference\n# derives (queues, ECN, RTO) is written out.",
        "htsim",
        args,
        &lb_entry(args)?,
    );
    let network = match topo {
        Some(path) => {
            let (nodes, net) = read_topo_file(path)?;
            if nodes != matrix.nodes {
                return Err(HtsimError::new(format!(
                    "-topo {}: {nodes} nodes, the matrix has {}",
                    path.display(),
                    matrix.nodes
                )));
            }
            let _ = writeln!(
                s,
                "\n[topology]\ntype = \"topo_file\"\nfile = {}",
                quoted(&path.display().to_string())
            );
            net
        }
        None => generated_fat_tree(&mut s, args, matrix.nodes)?,
    };
    let derived = Derived::new(args, &network);
    write_degraded(&mut s, args, &network)?;
    let _ = writeln!(
        s,
        "\n[queue]\nsize = \"{}B\"\necn_min = \"{}pkt\"\necn_max = \"{}pkt\"\ntrimming = {}\nheader_limit = \"{}B\"\necn_at_departure = true\ndepartures_first = true",
        derived.queue_bytes,
        derived.ecn_pkts.0,
        derived.ecn_pkts.1,
        !args.disable_trim,
        2 * derived.queue_bytes
    );
    let _ = writeln!(
        s,
        "\n[transport]\nmtu = \"{}B\"\nheader = \"{HEADER_BYTES}B\"\nack_every = \"{}B\"\nack_counter_16bit = true\nwindow_fit = true\nrto = \"{}ps\"\nnetwork_rtt = \"{}ps\"\nevs_size = {}\nreuse_connections = {}",
        args.mtu,
        args.sack_threshold,
        derived.rto_ps,
        derived.network_rtt_ps,
        args.paths,
        args.conn_reuse
    );
    // uet-htsim's least time between two RTS is its network RTT, which only NSCC's set-up
    // sets: under receiver credit alone it stays zero and every timeout that calls for an RTS
    // sends one.
    let rts_gap_ps = if args.cc == CcMode::Receiver {
        0
    } else {
        derived.network_rtt_ps
    };
    let _ = writeln!(s, "rts_gap = \"{rts_gap_ps}ps\"");
    s.push_str(&cc_section(args)?);
    s.push_str(&oversubscription_control(args, &network, &derived));
    let _ = writeln!(s, "\n[workload]\ntype = \"explicit\"\nflows = [");
    let mut ids: Vec<u64> = matrix.flows.iter().map(|f| f.id).collect();
    ids.sort_unstable();
    let unique_ids = ids.windows(2).all(|w| w[0] != w[1]);
    for (i, f) in matrix.flows.iter().enumerate() {
        let id = if unique_ids { f.id } else { i as u64 + 1 };
        let _ = writeln!(
            s,
            "  {{ id = {id}, src = {}, dst = {}, size = \"{}B\", start = \"{}us\" }},",
            f.src, f.dst, f.size, f.start_us
        );
    }
    s.push_str("]\n");
    Ok(Built {
        toml: s,
        derived,
        network,
    })
}

/// Writes the `[topology]` of the fat tree the reference generates for `nodes` hosts (no
/// `-topo`), and returns its network.
pub(crate) fn generated_fat_tree(s: &mut String, args: &HtsimArgs, nodes: u32) -> Result<Network> {
    let link_ps = us_to_ps(args.hop_latency_us);
    let switch_ps = us_to_ps(args.switch_latency_us);
    let k = fat_tree_radix(nodes, args.tiers)?;
    let _ = writeln!(
        s,
        "\n[topology]\ntype = \"fat_tree\"\ntiers = {}\nhosts = {nodes}\nhosts_per_tor = {}",
        args.tiers,
        k / 2
    );
    if args.tiers == 3 {
        let _ = writeln!(s, "pod_size = {}", k * k / 4);
    }
    let _ = writeln!(
        s,
        "link_speed = \"{}Mbps\"\nlink_latency = \"{link_ps}ps\"\nswitch_latency = \"{switch_ps}ps\"",
        args.linkspeed_mbps
    );
    let hops = u64::from(2 * args.tiers);
    Ok(Network {
        tiers: args.tiers,
        diameter_latency_ps: link_ps * hops + switch_ps * (hops - 1),
        radix: Some(k),
        oversubscription: 1,
    })
}

fn lb_entry(args: &HtsimArgs) -> Result<String> {
    let scheme = args.lb.scheme();
    let freezing_flags = args.exit_freeze_ps.is_some() || args.freeze_off;
    if freezing_flags && !matches!(args.lb, LbAlgo::Reps | LbAlgo::Freezing) {
        return Err(HtsimError::new(
            "-exit_freeze / -freezeoff: only with -load_balancing_algo freezing or reps",
        ));
    }
    let mut entry = format!("{{ scheme = \"{scheme}\"");
    if matches!(args.lb, LbAlgo::Bitmap | LbAlgo::Mixed | LbAlgo::Oblivious)
        && !args.paths.is_power_of_two()
    {
        return Err(HtsimError::new(format!(
            "-paths {}: oblivious, bitmap and mixed need a power of two",
            args.paths
        )));
    }
    if matches!(args.lb, LbAlgo::Bitmap | LbAlgo::Mixed) {
        // These keep their own EV-set size (default 256); the reference's is `-paths`.
        let _ = write!(entry, ", evs_size = {}", args.paths);
    }
    if args.lb == LbAlgo::Oblivious {
        // uet-htsim's oblivious walks each EV once per round in a scrambled order (the REPS
        // artifact's draws them at random).
        entry.push_str(", order = \"rounds\"");
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

pub(crate) fn cc_section(args: &HtsimArgs) -> Result<String> {
    let mut s = String::from("\n[cc]\n");
    if args.cc == CcMode::Receiver {
        // The UEC reference's RCCC: 16 KiB per PULL, a PULL ends speculation too, pull
        // targets count 256-byte quanta, and its pacer's rules.
        s.push_str("algo = \"eqds\"\npull_size = \"16384B\"\npull_ends_speculation = true\n");
        s.push_str("pull_quantum = \"256B\"\npacer = \"uet-htsim\"\n");
        return Ok(s);
    }
    let cwnd = args
        .cwnd_pkts
        .map(|c| format!("initial_cwnd = \"{c}pkt\"\n"));
    match args.sender_cc {
        SenderCc::Nscc => {
            s.push_str("algo = \"nscc\"\n");
            if let Some(us) = args.target_q_delay_us {
                let _ = writeln!(s, "target_delay = \"{}ps\"", us_to_ps(us));
            }
            if let Some(g) = args.qa_gate {
                let _ = writeln!(s, "qa_gate = {g}");
            }
            if args.accurate_base_rtt {
                s.push_str("accurate_base_rtt = true\n");
            }
            // uet-htsim lowers the base RTT on NACKs unless told not to; the REPS artifact's
            // NSCC samples it from full-size ACKed packets only.
            if args.dialect == Dialect::RepsArtifact || args.no_base_rtt_on_nack {
                s.push_str("base_rtt_on_nack = false\n");
            }
        }
        SenderCc::Dctcp => s.push_str("algo = \"dctcp\"\nvariant = \"reference\"\n"),
        SenderCc::Constant => s.push_str("algo = \"constant\"\n"),
        SenderCc::Mprdma => s.push_str("algo = \"mprdma\"\n"),
    }
    if let Some(c) = cwnd {
        if args.sender_cc == SenderCc::Constant {
            return Err(HtsimError::new(
                "-cwnd with -sender_cc_algo constant: not modelled",
            ));
        }
        s.push_str(&c);
    }
    if args.sender_cc != SenderCc::Nscc
        && (args.target_q_delay_us.is_some()
            || args.qa_gate.is_some()
            || args.accurate_base_rtt
            || args.no_base_rtt_on_nack)
    {
        return Err(HtsimError::new(
            "-target_q_delay, -qa_gate, -enable_accurate_base_rtt and \
             -disable_base_rtt_update_on_nack apply to NSCC only",
        ));
    }
    Ok(s)
}

/// The `[cc]` line of the reference's receiver-side oversubscription control
/// (`OversubscribedCC`), or nothing where it is off. It is on with receiver credit alone
/// (`-receiver_cc_only`) on an oversubscribed topology, unless
/// `-force_disable_oversubscribed_cc`, and wherever `-oversubscribed_cc` asks; it updates every
/// 1.5 x the network's largest unloaded RTT on average and floors the rate at 0.9 / ratio of
/// the pull rate where the topology is oversubscribed (at 0.01 elsewhere).
fn oversubscription_control(args: &HtsimArgs, net: &Network, derived: &Derived) -> String {
    let oversubscribed = net.oversubscription > 1;
    let on = args.oversubscribed_cc.unwrap_or(oversubscribed) && args.cc == CcMode::Receiver;
    if !on {
        return String::new();
    }
    let min_rate = if oversubscribed {
        (0.9 / f64::from(net.oversubscription)).max(0.01)
    } else {
        0.01
    };
    format!(
        "oversubscribed = {{ min_rate = {min_rate}, interval = \"{}ps\" }}\n",
        derived.network_rtt_ps * 3 / 2
    )
}

/// `-failed N`: the links the reference builds at a quarter of their speed (queue and ECN
/// thresholds scaled alike). Three tiers: the core-to-agg downlinks of agg `a`'s uplink `l` for
/// `l + a x aggs_per_pod < N`; two tiers: every ToR's links to and from spines `0..N`.
fn write_degraded(s: &mut String, args: &HtsimArgs, net: &Network) -> Result<()> {
    if args.failed == 0 {
        return Ok(());
    }
    let Some(k) = net.radix else {
        return Err(HtsimError::new(
            "-failed with -topo: not modelled (the generated fat tree only)",
        ));
    };
    let speed = format!(
        "{}Mbps",
        (args.linkspeed_mbps as f64 * FAILED_LINK_RATIO).round() as u64
    );
    let half = k / 2;
    let mut links = Vec::new();
    if net.tiers == 3 {
        let aggs = k * k / 2;
        for agg in 0..aggs {
            for l in 0..half {
                if u64::from(l) + u64::from(agg) * u64::from(half) < u64::from(args.failed) {
                    links.push(format!("core{}->agg{agg}", agg % half + half * l));
                }
            }
        }
    } else {
        if args.failed > half {
            return Err(HtsimError::new(format!(
                "-failed {}: the leaf-spine has {half} spines",
                args.failed
            )));
        }
        for tor in 0..k {
            for spine in 0..args.failed {
                links.push(format!("tor{tor}->agg{spine}"));
                links.push(format!("agg{spine}->tor{tor}"));
            }
        }
    }
    for link in links {
        let _ = writeln!(s, "\n[[degrade]]\nlink = \"{link}\"\nspeed = \"{speed}\"");
    }
    Ok(())
}

/// The top of a built scenario: a comment saying where it came from, its name, the line's
/// seed and end, and its one load-balancer entry.
pub(crate) fn scenario_head(comment: &str, name: &str, args: &HtsimArgs, lb: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {comment}");
    let _ = writeln!(s, "name = \"{name}\"");
    let _ = writeln!(s, "seed = {}", args.seed);
    let _ = writeln!(s, "end = \"{}us\"", args.end_us);
    let _ = writeln!(s, "lb = [{lb}]");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix;

    fn args(extra: &[&str]) -> HtsimArgs {
        let mut v = vec!["-tm", "m.cm"];
        v.extend_from_slice(extra);
        HtsimArgs::parse(&v).unwrap()
    }

    #[test]
    fn default_constants_are_the_references() {
        // uet-htsim spec 3.3 and 3.4: 3 tiers, 1 us hops, 100 Gb/s.
        let net = Network {
            tiers: 3,
            diameter_latency_ps: 6_000_000,
            radix: Some(4),
            oversubscription: 1,
        };
        let d = Derived::new(&args(&[]), &net);
        assert_eq!(d.network_rtt_ps, 14_022_720);
        assert_eq!(d.bdp_pkts, 43);
        assert_eq!(d.queue_bytes, 178_450);
        assert_eq!(d.ecn_pkts, (9, 35));
        assert_eq!(d.rto_ps, 100_656_000);
        let no_trim = Derived::new(&args(&["-disable_trim"]), &net);
        assert_eq!(no_trim.queue_bytes, 5 * 178_450);
        let q = Derived::new(&args(&["-q", "500", "-ecn", "20", "80"]), &net);
        assert_eq!((q.queue_bytes, q.ecn_pkts), (500 * 4150, (20, 80)));
    }

    #[test]
    fn fat_tree_sizes_follow_the_node_count() {
        assert_eq!(fat_tree_radix(16, 3).unwrap(), 4);
        assert_eq!(fat_tree_radix(1024, 3).unwrap(), 16);
        assert_eq!(fat_tree_radix(2, 3).unwrap(), 2);
        assert_eq!(fat_tree_radix(128, 2).unwrap(), 16);
        assert!(fat_tree_radix(100, 3).unwrap_err().0.contains("-topo"));
    }

    #[test]
    fn failed_links_are_the_first_aggs_core_downlinks() {
        let m = matrix::parse("Nodes 1024\nConnections 1\n0->1 start 0 size 10\n", false).unwrap();
        let b = scenario(&args(&["-failed", "8"]), &m, None).unwrap();
        let degraded: Vec<&str> = b
            .toml
            .lines()
            .filter_map(|l| l.strip_prefix("link = "))
            .collect();
        assert_eq!(degraded.len(), 8);
        assert_eq!(degraded[0], "\"core0->agg0\"");
        assert_eq!(degraded[7], "\"core56->agg0\"");
        assert!(b.toml.contains("speed = \"25000Mbps\""));
    }

    #[test]
    fn oblivious_bitmap_and_mixed_take_the_paths_flag_as_their_ev_set() {
        let m = matrix::parse("Nodes 16\nConnections 1\n0->1 start 0 size 10\n", false).unwrap();
        let b = scenario(&args(&["-paths", "1"]), &m, None).unwrap();
        assert!(
            b.toml
                .contains("lb = [{ scheme = \"mixed\", evs_size = 1 }]"),
            "{}",
            b.toml
        );
        let b = scenario(
            &args(&["-load_balancing_algo", "bitmap", "-paths", "128"]),
            &m,
            None,
        );
        assert!(b
            .unwrap()
            .toml
            .contains("scheme = \"bitmap\", evs_size = 128"));
        let e = scenario(&args(&["-paths", "100"]), &m, None).unwrap_err();
        assert!(e.0.starts_with("-paths 100"), "{e}");
        // uet-htsim's oblivious walks the EVs in scrambled rounds, which need a power of two.
        let b = scenario(
            &args(&["-load_balancing_algo", "oblivious", "-paths", "128"]),
            &m,
            None,
        )
        .unwrap();
        assert!(b.toml.contains("evs_size = 128\n"));
        assert!(
            b.toml
                .contains("lb = [{ scheme = \"ops\", order = \"rounds\" }]"),
            "{}",
            b.toml
        );
        let e = scenario(
            &args(&["-load_balancing_algo", "oblivious", "-paths", "100"]),
            &m,
            None,
        )
        .unwrap_err();
        assert!(e.0.starts_with("-paths 100"), "{e}");
    }

    /// uet-htsim drops headers beyond twice the queue, and runs its receiver-side
    /// oversubscription control with receiver credit alone on an oversubscribed topology
    /// file: floor 0.9 / ratio, updates every 1.5 RTTs on average; the RTS gap.
    #[test]
    fn header_budget_and_oversubscription_control_follow_the_reference() {
        let m = matrix::parse(
            "Nodes 1024\nConnections 1\n0->1000 start 0 size 100000\n",
            false,
        )
        .unwrap();
        let topo = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/uet-htsim/topologies/leaf_spine_1024_oversub.topo");
        let built = |extra: &[&str]| scenario(&args(extra), &m, Some(&topo)).unwrap();
        let b = built(&["-receiver_cc_only"]);
        assert_eq!(b.network.oversubscription, 4);
        assert!(b.toml.contains(&format!(
            "header_limit = \"{}B\"",
            2 * b.derived.queue_bytes
        )));
        assert!(b.toml.contains("ecn_at_departure = true"));
        assert!(b.toml.contains("departures_first = true"));
        assert!(b
            .toml
            .contains(&format!("network_rtt = \"{}ps\"", b.derived.network_rtt_ps)));
        // uet-htsim's RTS gap is its network RTT, which only NSCC's set-up sets.
        assert!(b.toml.contains("rts_gap = \"0ps\""), "{}", b.toml);
        let nscc = built(&["-sender_cc_only"]);
        let gap = format!("rts_gap = \"{}ps\"", nscc.derived.network_rtt_ps);
        assert!(nscc.toml.contains(&gap), "{}", nscc.toml);
        let interval = b.derived.network_rtt_ps * 3 / 2;
        let line = format!("oversubscribed = {{ min_rate = 0.225, interval = \"{interval}ps\" }}");
        assert!(b.toml.contains(&line), "{}", b.toml);
        let scn = repsim::scenario::LoadedScenario::parse(&b.toml, Path::new("x.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
        scn.build_run(&scn.runs().unwrap()[0], None).unwrap();
        for off in [
            &["-receiver_cc_only", "-force_disable_oversubscribed_cc"][..],
            &["-sender_cc_only"],
        ] {
            assert!(!built(off).toml.contains("oversubscribed ="), "{off:?}");
        }
        // Asked for on a fabric that is not oversubscribed: the floor is 0.01.
        let small =
            matrix::parse("Nodes 16\nConnections 1\n0->13 start 0 size 100\n", false).unwrap();
        let b = scenario(
            &args(&["-receiver_cc_only", "-oversubscribed_cc"]),
            &small,
            None,
        )
        .unwrap();
        assert!(
            b.toml.contains("oversubscribed = { min_rate = 0.01,"),
            "{}",
            b.toml
        );
    }

    #[test]
    fn the_scenario_loads() {
        let m = matrix::parse(
            "Nodes 16\nConnections 2\n0->13 start 0 size 2000000\n13->0 start 5 size 20\n",
            false,
        )
        .unwrap();
        for extra in [
            &[][..],
            &["-receiver_cc_only"],
            &["-load_balancing_algo", "reps", "-failed", "1"],
            &["-sender_cc_algo", "dctcp", "-cwnd", "50"],
        ] {
            let b = scenario(&args(extra), &m, None).unwrap();
            let scn = repsim::scenario::LoadedScenario::parse(&b.toml, Path::new("x.toml"))
                .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
            let runs = scn.runs().unwrap();
            scn.build_run(&runs[0], None)
                .unwrap_or_else(|e| panic!("{e}\n{}", b.toml));
        }
    }
}
