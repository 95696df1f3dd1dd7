//! An `htsim_uec` command line, read flag by flag with the UEC reference's defaults.
//!
//! htsim's flags are single-dash words (`-tm FILE`, `-sender_cc_only`). Every flag the front
//! end models is listed in [`FLAGS`]; any other is an error that names it, so a command line is
//! never run with a setting silently dropped.
//!
//! Two forks of htsim share the program name `htsim_uec` and most flags, but not their meanings:
//! uet-htsim (the default here) and the REPS paper's artifact, chosen with `--artifact reps`
//! anywhere on the line. The artifact's own flags ([`ARTIFACT_FLAGS`]) are errors without it, and
//! the flags only uet-htsim has ([`UET_ONLY_FLAGS`]) are errors with it.
use std::path::PathBuf;

use crate::error::{HtsimError, Result};

/// Which congestion control runs, as `-sender_cc_only` / `-receiver_cc_only` choose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcMode {
    /// The sender's window (NSCC by default), the reference's default.
    Sender,
    /// Receiver credit (RCCC) alone.
    Receiver,
}

/// Which fork of htsim the command line is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// uet-htsim, the Ultra Ethernet Consortium's simulator (the default).
    Uet,
    /// The REPS paper's artifact (`tommasobo/REPS_EuroSys_Artifact`), `--artifact reps`.
    RepsArtifact,
}

/// `-load_balancing_algo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbAlgo {
    /// Per-flow hashing: one EV per connection.
    Ecmp,
    /// A random EV per packet.
    Oblivious,
    /// EVs penalised by congestion feedback.
    Bitmap,
    /// Recycled EVs (REPS).
    Reps,
    /// The older REPS of the reference (`reps_legacy`).
    RepsLegacy,
    /// REPS with freezing mode, as the REPS paper's artifact names it.
    Freezing,
    /// Recycled EVs first, bitmap otherwise: the reference's default.
    Mixed,
    /// Protective Load Balancing (the REPS artifact only).
    Plb,
}

impl LbAlgo {
    fn parse(value: &str, dialect: Dialect) -> Result<Self> {
        Ok(match (value, dialect) {
            ("ecmp", _) => LbAlgo::Ecmp,
            ("oblivious", _) => LbAlgo::Oblivious,
            ("bitmap", _) => LbAlgo::Bitmap,
            ("freezing", _) => LbAlgo::Freezing,
            ("mixed", _) => LbAlgo::Mixed,
            ("reps", Dialect::Uet) => LbAlgo::Reps,
            ("reps_legacy", Dialect::Uet) => LbAlgo::RepsLegacy,
            // The artifact's `reps` is its older variant (no freezing, unbounded EV list).
            ("reps", Dialect::RepsArtifact) => LbAlgo::RepsLegacy,
            ("plb", Dialect::RepsArtifact) => LbAlgo::Plb,
            (other, Dialect::Uet) => {
                return Err(HtsimError::new(format!(
                    "-load_balancing_algo {other}: not modelled (allowed: ecmp, oblivious, bitmap, reps, reps_legacy, freezing, mixed; plb with --artifact reps)"
                )))
            }
            (other, Dialect::RepsArtifact) => {
                return Err(HtsimError::new(format!(
                    "-load_balancing_algo {other}: not modelled with --artifact reps (allowed: ecmp, oblivious, bitmap, reps, freezing, plb, mixed)"
                )))
            }
        })
    }

    /// The repsim load balancer this algorithm runs as.
    pub fn scheme(self) -> &'static str {
        match self {
            LbAlgo::Ecmp => "ecmp",
            LbAlgo::Oblivious => "ops",
            LbAlgo::Bitmap => "bitmap",
            LbAlgo::Reps | LbAlgo::Freezing => "reps",
            LbAlgo::RepsLegacy => "reps-legacy",
            LbAlgo::Mixed => "mixed",
            LbAlgo::Plb => "plb",
        }
    }
}

/// `-sender_cc_algo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderCc {
    /// UEC's network-signal congestion control (the default).
    Nscc,
    /// The reference's simplified DCTCP.
    Dctcp,
    /// A window that ACKs and NACKs never change.
    Constant,
    /// MPRDMA, which the REPS paper's artifact runs.
    Mprdma,
}

impl SenderCc {
    fn parse(value: &str) -> Result<Self> {
        Ok(match value {
            "nscc" => SenderCc::Nscc,
            "dctcp" => SenderCc::Dctcp,
            "constant" => SenderCc::Constant,
            "mprdma" => SenderCc::Mprdma,
            other => {
                return Err(HtsimError::new(format!(
                    "-sender_cc_algo {other}: not modelled (allowed: nscc, dctcp, constant, mprdma)"
                )))
            }
        })
    }
}

/// Everything an `htsim_uec` command line sets; fields not given hold the reference's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct HtsimArgs {
    /// Which fork's flags and defaults the line is read with (`--artifact reps`).
    pub dialect: Dialect,
    /// `-tm`: the connection matrix.
    pub tm: Option<PathBuf>,
    /// `-topo`: a topology file (absent: the fat tree the node count implies).
    pub topo: Option<PathBuf>,
    /// `-nodes`: must equal the matrix's node count when given.
    pub nodes: Option<u32>,
    /// `-tiers` of the generated fat tree (default 3).
    pub tiers: u32,
    /// `-linkspeed` in Mb/s (default 100,000).
    pub linkspeed_mbps: u64,
    /// `-hop_latency` in microseconds (default 1).
    pub hop_latency_us: f64,
    /// `-switch_latency` in microseconds (default 0).
    pub switch_latency_us: f64,
    /// `-mtu` in bytes, header included (default 4,150).
    pub mtu: u32,
    /// `-q`: switch queue size in packets (absent: a multiple of the BDP).
    pub queue_pkts: Option<u32>,
    /// `-queue_size_bdp_factor` (absent: 1 with trimming, 5 without).
    pub queue_bdp_factor: Option<f64>,
    /// `-ecn LOW HIGH` in packets (absent: 20 % and 80 % of the BDP).
    pub ecn_pkts: Option<(u32, u32)>,
    /// `-disable_trim`.
    pub disable_trim: bool,
    /// `-failed N`: uet-htsim degrades links to a quarter of their speed; the REPS artifact
    /// degrades N ToR uplinks by `-down_ratio`, or with 42 runs its timed-outage scenario.
    pub failed: u32,
    /// `-down_ratio` (REPS artifact): speed and buffer share a `-failed` link keeps (default 0.5).
    pub down_ratio: f64,
    /// `-failures_input FILE` (REPS artifact): a failure-generator file.
    pub failures_input: Option<PathBuf>,
    /// `-mixed_lb_traffic` (REPS artifact): ECMP background traffic from every 10th sender.
    pub mixed_lb_traffic: bool,
    /// `-skip_asy` (REPS artifact): `-failed N` degrades one uplink per chosen ToR.
    pub skip_asy: bool,
    /// `-paths`: the entropy-value space (default 64).
    pub paths: u32,
    /// `-load_balancing_algo` (default mixed).
    pub lb: LbAlgo,
    /// Sender window or receiver credit.
    pub cc: CcMode,
    /// `-sender_cc_algo` (default nscc).
    pub sender_cc: SenderCc,
    /// `-cwnd` in packets (absent: 1.5 BDP).
    pub cwnd_pkts: Option<u32>,
    /// `-target_q_delay` in microseconds (absent: 0.75 RTT with trimming, 1 RTT without).
    pub target_q_delay_us: Option<f64>,
    /// `-qa_gate` (default 3).
    pub qa_gate: Option<u32>,
    /// `-sack_threshold` in bytes (default 16,384).
    pub sack_threshold: u32,
    /// `-enable_accurate_base_rtt`.
    pub accurate_base_rtt: bool,
    /// `-disable_base_rtt_update_on_nack`: NSCC takes base RTT samples from ACKs only
    /// (uet-htsim lowers it on a NACK's round trip too; the REPS artifact never does).
    pub no_base_rtt_on_nack: bool,
    /// `-oversubscribed_cc` (on) or `-force_disable_oversubscribed_cc` (off): the receiver's
    /// oversubscription control (absent: on with receiver credit alone on an oversubscribed
    /// topology, as the reference decides).
    pub oversubscribed_cc: Option<bool>,
    /// `-conn_reuse` (UEC) or `-connections_mapping` (the REPS artifact).
    pub conn_reuse: bool,
    /// `-end` in microseconds (default 1,000).
    pub end_us: u64,
    /// `-seed` (default 13).
    pub seed: u64,
    /// `-exit_freeze` in picoseconds (REPS freezing mode's exit; the artifact's flag).
    pub exit_freeze_ps: Option<u64>,
    /// `-freezeoff`: REPS without freezing mode.
    pub freeze_off: bool,
    /// `--emit-scenario FILE`: write the scenario built from the command line.
    pub emit_scenario: Option<PathBuf>,
    /// `--duplicate-nic-request-on-timeout` (with `--artifact reps`): reproduce the artifact
    /// sender's second NIC request after a timeout the window has room for
    /// (`transport.duplicate_nic_request_on_timeout`).
    pub duplicate_nic_request_on_timeout: bool,
}

impl Default for HtsimArgs {
    /// The reference's defaults (`htsim_uec` with no flag but `-tm`).
    fn default() -> Self {
        HtsimArgs {
            dialect: Dialect::Uet,
            tm: None,
            topo: None,
            nodes: None,
            tiers: 3,
            linkspeed_mbps: 100_000,
            hop_latency_us: 1.0,
            switch_latency_us: 0.0,
            mtu: 4150,
            queue_pkts: None,
            queue_bdp_factor: None,
            ecn_pkts: None,
            disable_trim: false,
            failed: 0,
            down_ratio: 0.5,
            failures_input: None,
            mixed_lb_traffic: false,
            skip_asy: false,
            paths: 64,
            lb: LbAlgo::Mixed,
            cc: CcMode::Sender,
            sender_cc: SenderCc::Nscc,
            cwnd_pkts: None,
            target_q_delay_us: None,
            qa_gate: None,
            sack_threshold: 16384,
            accurate_base_rtt: false,
            no_base_rtt_on_nack: false,
            oversubscribed_cc: None,
            conn_reuse: false,
            end_us: 1000,
            seed: 13,
            exit_freeze_ps: None,
            freeze_off: false,
            emit_scenario: None,
            duplicate_nic_request_on_timeout: false,
        }
    }
}

/// The flags the front end models, each with the number of values it takes.
pub const FLAGS: &[(&str, usize)] = &[
    ("-tm", 1),
    ("-topo", 1),
    ("-nodes", 1),
    ("-tiers", 1),
    ("-linkspeed", 1),
    ("-hop_latency", 1),
    ("-switch_latency", 1),
    ("-mtu", 1),
    ("-q", 1),
    ("-queue_size_bdp_factor", 1),
    ("-ecn", 2),
    ("-disable_trim", 0),
    ("-trimsize", 1),
    ("-failed", 1),
    ("-paths", 1),
    ("-load_balancing_algo", 1),
    ("-sender_cc_only", 0),
    ("-sender_cc", 0),
    ("-receiver_cc_only", 0),
    ("-receiver_cc", 0),
    ("-sender_cc_algo", 1),
    ("-cwnd", 1),
    ("-target_q_delay", 1),
    ("-qa_gate", 1),
    ("-sack_threshold", 1),
    ("-enable_accurate_base_rtt", 0),
    ("-disable_base_rtt_update_on_nack", 0),
    ("-oversubscribed_cc", 0),
    ("-force_disable_oversubscribed_cc", 0),
    ("-conn_reuse", 0),
    ("-connections_mapping", 0),
    ("-end", 1),
    ("-seed", 1),
    ("-planes", 1),
    ("-exit_freeze", 1),
    ("-freezeoff", 0),
    ("--emit-scenario", 1),
    ("--artifact", 1),
    ("--duplicate-nic-request-on-timeout", 0),
];

/// Flags only the REPS artifact's htsim has, each with the number of values it takes. The
/// last four change only what the artifact writes to files (or, for `-enable_qa_gate`, an NSCC
/// gate that is on by default), never a number `repsim htsim` prints: they are accepted and
/// have no effect.
pub const ARTIFACT_FLAGS: &[(&str, usize)] = &[
    ("-failures_input", 1),
    ("-mixed_lb_traffic", 0),
    ("-down_ratio", 1),
    ("-skip_asy", 0),
    ("-collect_data", 0),
    ("-log_link", 0),
    ("-other_location", 0),
    ("-enable_qa_gate", 0),
];

/// Flags of uet-htsim that the REPS artifact's htsim does not have (or names otherwise).
pub const UET_ONLY_FLAGS: &[&str] = &[
    "-conn_reuse",
    "-qa_gate",
    "-enable_accurate_base_rtt",
    "-disable_base_rtt_update_on_nack",
    "-oversubscribed_cc",
    "-force_disable_oversubscribed_cc",
    "-receiver_cc",
    "-target_q_delay",
];

/// The dialect a command line asks for with `--artifact NAME` (uet-htsim without it).
fn dialect_of<S: AsRef<str>>(argv: &[S]) -> Result<Dialect> {
    let mut dialect = Dialect::Uet;
    for (i, a) in argv.iter().enumerate() {
        if a.as_ref() == "--artifact" {
            dialect = match argv.get(i + 1).map(|v| v.as_ref()) {
                Some("reps") => Dialect::RepsArtifact,
                Some(other) => {
                    return Err(HtsimError::new(format!(
                        "--artifact {other}: unknown (the one modelled is `reps`, the REPS paper's artifact)"
                    )))
                }
                None => return Err(HtsimError::new("--artifact: needs 1 value")),
            };
        }
    }
    Ok(dialect)
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T> {
    value
        .parse()
        .map_err(|_| HtsimError::new(format!("{flag} {value}: not a valid number")))
}

impl HtsimArgs {
    /// Reads a command line (without the program name). A flag the front end does not model,
    /// a missing value or a malformed number is an error naming the flag.
    pub fn parse<S: AsRef<str>>(argv: &[S]) -> Result<Self> {
        let dialect = dialect_of(argv)?;
        let mut a = match dialect {
            Dialect::Uet => HtsimArgs::default(),
            Dialect::RepsArtifact => HtsimArgs::reps_artifact(),
        };
        let mut sender_only = false;
        let mut receiver_only = false;
        let mut receiver_too = false;
        let mut sender_too = false;
        let mut i = 0;
        while i < argv.len() {
            let flag = argv[i].as_ref();
            let artifact_flag = ARTIFACT_FLAGS.iter().find(|(f, _)| *f == flag);
            if artifact_flag.is_some() && dialect == Dialect::Uet {
                return Err(HtsimError::new(format!(
                    "{flag}: a flag of the REPS paper's artifact htsim, not of uet-htsim; give --artifact reps to run an artifact command line"
                )));
            }
            if dialect == Dialect::RepsArtifact && UET_ONLY_FLAGS.contains(&flag) {
                return Err(HtsimError::new(format!(
                    "{flag}: a uet-htsim flag the REPS artifact's htsim does not have (drop --artifact reps to run a uet-htsim line)"
                )));
            }
            let Some(&(_, arity)) = FLAGS.iter().chain(artifact_flag).find(|(f, _)| *f == flag)
            else {
                return Err(HtsimError::new(format!(
                    "{flag}: not an htsim_uec flag this front end models; the modelled flags are {}",
                    FLAGS
                        .iter()
                        .map(|(f, _)| *f)
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            };
            let values: Vec<&str> = argv
                .get(i + 1..i + 1 + arity)
                .ok_or_else(|| {
                    HtsimError::new(format!(
                        "{flag}: needs {arity} value{}",
                        if arity == 1 { "" } else { "s" }
                    ))
                })?
                .iter()
                .map(|s| s.as_ref())
                .collect();
            let v = values.first().copied().unwrap_or("");
            match flag {
                "-tm" => a.tm = Some(PathBuf::from(v)),
                "-topo" => a.topo = Some(PathBuf::from(v)),
                "-nodes" => a.nodes = Some(number(flag, v)?),
                "-tiers" => {
                    a.tiers = number(flag, v)?;
                    if !(2..=3).contains(&a.tiers) {
                        return Err(HtsimError::new(format!("-tiers {v}: must be 2 or 3")));
                    }
                }
                "-linkspeed" => a.linkspeed_mbps = number(flag, v)?,
                "-hop_latency" => a.hop_latency_us = number(flag, v)?,
                "-switch_latency" => a.switch_latency_us = number(flag, v)?,
                "-mtu" => a.mtu = number(flag, v)?,
                "-q" => a.queue_pkts = Some(number(flag, v)?),
                "-queue_size_bdp_factor" => a.queue_bdp_factor = Some(number(flag, v)?),
                "-ecn" => a.ecn_pkts = Some((number(flag, v)?, number(flag, values[1])?)),
                "-disable_trim" => a.disable_trim = true,
                "-oversubscribed_cc" => a.oversubscribed_cc = Some(true),
                "-force_disable_oversubscribed_cc" => a.oversubscribed_cc = Some(false),
                "-trimsize" => {
                    let size: u32 = number(flag, v)?;
                    if size != 64 {
                        return Err(HtsimError::new(format!(
                            "-trimsize {v}: only 64 (the header size) is modelled"
                        )));
                    }
                }
                "-failed" => a.failed = number(flag, v)?,
                "-paths" => {
                    a.paths = number(flag, v)?;
                    if a.paths == 0 || a.paths > 65536 {
                        return Err(HtsimError::new(format!("-paths {v}: must be 1..=65536")));
                    }
                }
                "-load_balancing_algo" => a.lb = LbAlgo::parse(v, dialect)?,
                "-sender_cc_only" => sender_only = true,
                "-sender_cc" => sender_too = true,
                "-receiver_cc_only" => receiver_only = true,
                "-receiver_cc" => receiver_too = true,
                "-sender_cc_algo" => a.sender_cc = SenderCc::parse(v)?,
                "-cwnd" => a.cwnd_pkts = Some(number(flag, v)?),
                "-target_q_delay" => a.target_q_delay_us = Some(number(flag, v)?),
                "-qa_gate" => a.qa_gate = Some(number(flag, v)?),
                "-sack_threshold" => a.sack_threshold = number(flag, v)?,
                "-enable_accurate_base_rtt" => a.accurate_base_rtt = true,
                "-disable_base_rtt_update_on_nack" => a.no_base_rtt_on_nack = true,
                "-conn_reuse" | "-connections_mapping" => a.conn_reuse = true,
                "-end" => a.end_us = number(flag, v)?,
                "-seed" => a.seed = number(flag, v)?,
                "-planes" => {
                    if v != "1" {
                        return Err(HtsimError::new(format!(
                            "-planes {v}: only 1 plane is modelled (the reference aborts otherwise)"
                        )));
                    }
                }
                "-exit_freeze" => a.exit_freeze_ps = Some(number(flag, v)?),
                "-freezeoff" => a.freeze_off = true,
                "--emit-scenario" => a.emit_scenario = Some(PathBuf::from(v)),
                "--artifact" => {}
                "--duplicate-nic-request-on-timeout" => {
                    if dialect != Dialect::RepsArtifact {
                        return Err(HtsimError::new(
                            "--duplicate-nic-request-on-timeout: reproduces the REPS artifact's sender; give --artifact reps",
                        ));
                    }
                    a.duplicate_nic_request_on_timeout = true;
                }
                "-failures_input" => a.failures_input = Some(PathBuf::from(v)),
                "-mixed_lb_traffic" => a.mixed_lb_traffic = true,
                "-skip_asy" => a.skip_asy = true,
                "-down_ratio" => {
                    a.down_ratio = number(flag, v)?;
                    if !(a.down_ratio > 0.0 && a.down_ratio <= 1.0) {
                        return Err(HtsimError::new(format!(
                            "-down_ratio {v}: must be in (0, 1]"
                        )));
                    }
                }
                "-collect_data" | "-log_link" | "-other_location" | "-enable_qa_gate" => {}
                _ => unreachable!("every flag of FLAGS is handled"),
            }
            i += 1 + arity;
        }
        if sender_only && receiver_only {
            return Err(HtsimError::new(
                "-sender_cc_only and -receiver_cc_only: give one of them",
            ));
        }
        if receiver_too && !receiver_only {
            return Err(HtsimError::new(
                "-receiver_cc: NSCC and receiver credit together are not modelled (use -receiver_cc_only or -sender_cc_only)",
            ));
        }
        if receiver_only {
            a.cc = CcMode::Receiver;
        }
        if dialect == Dialect::RepsArtifact {
            // The artifact runs receiver credit unless told otherwise; `-sender_cc` adds the
            // sender's window to it.
            if sender_too && !sender_only {
                return Err(HtsimError::new(
                    "-sender_cc: the sender's window and receiver credit together are not modelled (use -sender_cc_only, or neither for receiver credit alone)",
                ));
            }
            if !sender_only {
                a.cc = CcMode::Receiver;
            }
        }
        if a.tm.is_none() {
            return Err(HtsimError::new(
                "-tm FILE is required (reading the matrix from standard input is not supported)",
            ));
        }
        Ok(a)
    }

    /// The REPS artifact's defaults (its `main_uec.cpp`), where they differ from uet-htsim's:
    /// queues of 35 packets, a 100 ms end.
    pub fn reps_artifact() -> Self {
        HtsimArgs {
            dialect: Dialect::RepsArtifact,
            queue_pkts: Some(35),
            end_us: 100_000,
            ..HtsimArgs::default()
        }
    }

    /// The host link rate in bits per second.
    pub fn linkspeed_bps(&self) -> u64 {
        self.linkspeed_mbps * 1_000_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_references() {
        let a = HtsimArgs::parse(&["-tm", "m.cm"]).unwrap();
        assert_eq!(a.lb, LbAlgo::Mixed);
        assert_eq!(a.cc, CcMode::Sender);
        assert_eq!(a.sender_cc, SenderCc::Nscc);
        assert_eq!((a.paths, a.end_us, a.seed, a.mtu), (64, 1000, 13, 4150));
        assert_eq!(a.sack_threshold, 16384);
        assert_eq!(a.linkspeed_bps(), 100_000_000_000);
    }

    #[test]
    fn reads_a_plan_line() {
        let a = HtsimArgs::parse(&[
            "-tm",
            "x.cm",
            "-receiver_cc_only",
            "-end",
            "3000",
            "-q",
            "500",
            "-load_balancing_algo",
            "reps",
            "-ecn",
            "20",
            "80",
            "-failed",
            "8",
        ])
        .unwrap();
        assert_eq!(a.cc, CcMode::Receiver);
        assert_eq!(a.end_us, 3000);
        assert_eq!(a.queue_pkts, Some(500));
        assert_eq!(a.lb, LbAlgo::Reps);
        assert_eq!(a.ecn_pkts, Some((20, 80)));
        assert_eq!(a.failed, 8);
    }

    #[test]
    fn an_unmodelled_flag_is_an_error_naming_it() {
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-pcie", "0.5"]).unwrap_err();
        assert!(e.0.starts_with("-pcie:"), "{e}");
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-end"]).unwrap_err();
        assert!(e.0.contains("-end: needs 1 value"), "{e}");
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-end", "soon"]).unwrap_err();
        assert!(e.0.contains("-end soon"), "{e}");
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-receiver_cc"]).unwrap_err();
        assert!(e.0.starts_with("-receiver_cc:"), "{e}");
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-load_balancing_algo", "spray"]).unwrap_err();
        assert!(e.0.contains("spray"), "{e}");
        assert!(HtsimArgs::parse(&["-end", "5"]).is_err());
    }

    #[test]
    fn the_artifact_mode_is_chosen_on_the_line() {
        let e = HtsimArgs::parse(&["-tm", "x.cm", "-mixed_lb_traffic"]).unwrap_err();
        assert!(
            e.0.starts_with("-mixed_lb_traffic:") && e.0.contains("--artifact reps"),
            "{e}"
        );
        let e =
            HtsimArgs::parse(&["--artifact", "reps", "-tm", "x.cm", "-conn_reuse"]).unwrap_err();
        assert!(e.0.starts_with("-conn_reuse:"), "{e}");
        let e = HtsimArgs::parse(&["--artifact", "ns3", "-tm", "x.cm"]).unwrap_err();
        assert!(e.0.starts_with("--artifact ns3:"), "{e}");
        let e = HtsimArgs::parse(&["--artifact", "reps", "-tm", "x.cm", "-num_disabled", "1"])
            .unwrap_err();
        assert!(e.0.starts_with("-num_disabled:"), "{e}");
        let a = HtsimArgs::parse(&[
            "-tm",
            "x.cm",
            "-failures_input",
            "f.txt",
            "-collect_data",
            "--artifact",
            "reps",
        ])
        .unwrap();
        assert_eq!(a.dialect, Dialect::RepsArtifact);
        assert_eq!(a.failures_input, Some(PathBuf::from("f.txt")));
        // Without -sender_cc_only the artifact runs receiver credit.
        assert_eq!(a.cc, CcMode::Receiver);
        assert_eq!((a.queue_pkts, a.end_us), (Some(35), 100_000));
    }

    #[test]
    fn the_two_forks_name_their_load_balancers_differently() {
        let lb = |dialect: &[&str], name: &str| {
            let mut argv = dialect.to_vec();
            argv.extend(["-tm", "x.cm", "-load_balancing_algo", name]);
            HtsimArgs::parse(&argv).map(|a| a.lb)
        };
        let artifact = &["--artifact", "reps"][..];
        assert_eq!(lb(&[], "reps").unwrap(), LbAlgo::Reps);
        assert_eq!(lb(artifact, "reps").unwrap(), LbAlgo::RepsLegacy);
        assert_eq!(lb(artifact, "freezing").unwrap().scheme(), "reps");
        assert_eq!(lb(artifact, "plb").unwrap(), LbAlgo::Plb);
        assert!(lb(&[], "plb").is_err());
        assert!(lb(artifact, "reps_legacy").is_err());
        let e = HtsimArgs::parse(&["--artifact", "reps", "-tm", "x.cm", "-sender_cc"]).unwrap_err();
        assert!(e.0.starts_with("-sender_cc:"), "{e}");
        let e = HtsimArgs::parse(&["--artifact", "reps", "-tm", "x.cm", "-down_ratio", "2"])
            .unwrap_err();
        assert!(e.0.starts_with("-down_ratio 2:"), "{e}");
    }
}
