//! Running a command line and printing what `htsim_uec` prints that its validation reads
//! (for the REPS artifact's lines, what its figure scripts read: [`print_artifact`]).
//!
//! The reference prints, per flow, `Flow <name> flowId <id> uecSrc <n> finished at <us> total
//! messages <m> ...` when the sender sees the last byte acknowledged, and at the end a line of
//! counters summed over the senders. They map onto repsim's per-flow counters as follows:
//!
//! | reference | repsim |
//! |---|---|
//! | `New` | data packets sent minus retransmissions, summed over flows |
//! | `Rtx` | retransmitted data packets, summed over flows |
//! | `RTS` | RTS packets sent, summed over flows |
//! | `Bounced` | always 0 (no packet is bounced back to its sender in either simulator's UEC runs) |
//! | `ACKs` / `NACKs` | ACKs / NACKs that reached their sender, summed over flows |
//! | `Pulls` | PULL packets that reached their sender |
//! | `sleek_pkts` | always 0 (SLEEK is not modelled) |
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use repsim::cc::WindowTally;
use repsim::engine::time::to_us;
use repsim::scenario::LoadedScenario;
use repsim::Simulation;

use crate::args::{Dialect, HtsimArgs};
use crate::artifact::{self, ArtifactFiles};
use crate::build::{self, Built};
use crate::error::{HtsimError, Result};
use crate::matrix::{self, UecMatrix};

/// One flow's finish, as the reference's `finished` line reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finish {
    /// `Uec_<src>_<dst>`, the reference's flow name.
    pub name: String,
    /// Flow id.
    pub id: u64,
    /// Position in the matrix (the reference's `uecSrc` number).
    pub index: usize,
    /// Absolute finish time in microseconds (the number the validation reads as the FCT).
    pub finish_us: f64,
    /// From its start (its trigger's time for triggered flows) to its finish, microseconds.
    pub fct_us: f64,
    /// Payload bytes.
    pub size: u64,
    /// In the ECMP background class (`-mixed_lb_traffic`).
    pub background: bool,
    /// Connections (messages) it completes.
    pub messages: u32,
    /// Data packets of the flow (its cumulative ACK at the end).
    pub packets: u64,
    /// RTS packets it sent.
    pub rts: u64,
    /// What its window controller's rules added and took, where it tallies them (NSCC), as
    /// the reference's line ends (`fair_inc` ... `nack_dec`).
    pub tally: Option<WindowTally>,
}

/// The reference's summary counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// New data packets.
    pub new: u64,
    /// Retransmissions.
    pub rtx: u64,
    /// RTS packets.
    pub rts: u64,
    /// Bounced packets.
    pub bounced: u64,
    /// ACKs received by senders.
    pub acks: u64,
    /// NACKs received by senders.
    pub nacks: u64,
    /// PULLs received by senders.
    pub pulls: u64,
    /// SLEEK probes.
    pub sleek: u64,
}

impl Counters {
    /// The summary line as the reference prints it.
    pub fn line(&self) -> String {
        format!(
            "New: {} Rtx: {} RTS: {} Bounced: {} ACKs: {} NACKs: {} Pulls: {} sleek_pkts: {}",
            self.new,
            self.rtx,
            self.rts,
            self.bounced,
            self.acks,
            self.nacks,
            self.pulls,
            self.sleek
        )
    }
}

/// A finished run of one command line.
#[derive(Clone, Debug)]
pub struct HtsimRun {
    /// Finished flows, in order of finish (ties in matrix order).
    pub finishes: Vec<Finish>,
    /// Flows that did not finish before `-end`.
    pub unfinished: usize,
    /// The matrix's declared connection count.
    pub connections: u32,
    /// Summary counters.
    pub counters: Counters,
    /// Data packets the faults dropped (the artifact's `Total number of dropped packets`).
    pub fault_drops: u64,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
    /// The scenario it ran.
    pub built: Built,
}

/// Formats a time in microseconds as C++'s default stream output does (6 significant digits).
pub fn format_us(us: f64) -> String {
    if us == 0.0 {
        return "0".into();
    }
    let digits = us.abs().log10().floor() as i32 + 1;
    let decimals = (6 - digits).max(0) as usize;
    let s = format!("{us:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A path from a command line: absolute as given, else the first of `roots` where it exists
/// (the first root when none has it, so the error names a sensible place).
pub fn resolve(path: &Path, roots: &[PathBuf]) -> PathBuf {
    if path.is_absolute() || roots.is_empty() {
        return path.to_path_buf();
    }
    roots
        .iter()
        .map(|r| r.join(path))
        .find(|p| p.exists())
        .unwrap_or_else(|| roots[0].join(path))
}

/// The repository's `data/htsim/` as this binary was built from it.
fn built_in_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/htsim")
}

/// A file an artifact command line names: as given (against `roots`) when it exists, else the
/// file of that name in `data/htsim/<folder>/` (under the current directory, then the
/// repository this binary was built from), where the artifact's inputs are committed.
pub fn resolve_artifact(path: &Path, roots: &[PathBuf], folder: &str) -> PathBuf {
    let given = resolve(path, roots);
    if given.exists() {
        return std::fs::canonicalize(&given).unwrap_or(given);
    }
    let Some(name) = path.file_name() else {
        return given;
    };
    [PathBuf::from("data/htsim"), built_in_data()]
        .iter()
        .map(|d| d.join(folder).join(name))
        .find(|p| p.exists())
        .map_or(given, |p| std::fs::canonicalize(&p).unwrap_or(p))
}

/// The files of an artifact command line, each resolved (an error names a missing one).
pub fn artifact_files(args: &HtsimArgs, roots: &[PathBuf]) -> Result<ArtifactFiles> {
    let find = |flag: &str, path: &Path, folder: &str| {
        let p = resolve_artifact(path, roots, folder);
        if p.exists() {
            Ok(p)
        } else {
            Err(HtsimError::new(format!(
                "{flag} {}: not found (nor as data/htsim/{folder}/{})",
                path.display(),
                path.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            )))
        }
    };
    let tm = args.tm.as_ref().expect("parse requires -tm");
    Ok(ArtifactFiles {
        tm: find("-tm", tm, "connection_matrices")?,
        topo: args
            .topo
            .as_ref()
            .map(|t| find("-topo", t, "topologies"))
            .transpose()?,
        failures: args
            .failures_input
            .as_ref()
            .map(|f| find("-failures_input", f, "failures"))
            .transpose()?,
    })
}

/// Reads the matrix and builds the scenario of a command line; paths resolve against `roots`.
/// The REPS artifact's matrices are read by the scenario itself (triggers included), so its
/// lines give no matrix here.
pub fn prepare(args: &HtsimArgs, roots: &[PathBuf]) -> Result<(Option<UecMatrix>, Built)> {
    if args.dialect == Dialect::RepsArtifact {
        let files = artifact_files(args, roots)?;
        return Ok((None, artifact::scenario(args, &files)?));
    }
    let tm = args.tm.as_ref().expect("parse requires -tm");
    let tm_path = resolve(tm, roots);
    let text = std::fs::read_to_string(&tm_path)
        .map_err(|e| HtsimError::new(format!("-tm {}: cannot read: {e}", tm_path.display())))?;
    let matrix = matrix::parse(&text, args.conn_reuse)
        .map_err(|e| HtsimError::new(format!("-tm {}: {e}", tm_path.display())))?;
    let topo = args.topo.as_ref().map(|t| {
        let p = resolve(t, roots);
        std::fs::canonicalize(&p).unwrap_or(p)
    });
    let built = build::scenario(args, &matrix, topo.as_ref())?;
    Ok((Some(matrix), built))
}

/// Runs a command line to its `-end` and collects what the reference would print.
pub fn run(args: &HtsimArgs, roots: &[PathBuf]) -> Result<HtsimRun> {
    let (matrix, built) = prepare(args, roots)?;
    let scn = LoadedScenario::parse(&built.toml, Path::new("htsim.toml"))
        .map_err(|e| HtsimError::new(format!("the scenario built: {e}")))?;
    let runs = scn.runs().map_err(|e| HtsimError::new(e.to_string()))?;
    let spec = scn
        .build_run(&runs[0], None)
        .map_err(|e| HtsimError::new(e.to_string()))?;
    let started = Instant::now();
    let mut sim = Simulation::new(spec).map_err(|e| HtsimError::new(e.to_string()))?;
    sim.run_until_idle();
    let wall_s = started.elapsed().as_secs_f64();
    let mss = u64::from(args.mtu) - 64;
    let mut counters = Counters {
        pulls: sim.counters().credits_arrived,
        ..Counters::default()
    };
    let mut finishes = Vec::new();
    let mut unfinished = 0;
    for (index, f) in sim.flows().iter().enumerate() {
        let s = &f.stats;
        counters.new += s.data_sent - s.retransmissions;
        counters.rtx += s.retransmissions;
        counters.rts += s.rts;
        counters.acks += s.acks;
        counters.nacks += s.nacks;
        let Some(finish) = f.finish else {
            unfinished += 1;
            continue;
        };
        let messages = matrix
            .as_ref()
            .and_then(|m| m.flows.get(index))
            .map_or(1, |m| m.messages);
        finishes.push(Finish {
            name: format!("Uec_{}_{}", f.spec.src, f.spec.dst),
            id: f.spec.id,
            index,
            finish_us: to_us(finish),
            fct_us: to_us(finish - f.start()),
            size: f.spec.bytes,
            background: f.spec.class != 0,
            messages,
            packets: f.spec.bytes.div_ceil(mss) + s.rts,
            rts: s.rts,
            tally: f.sender().and_then(|s| s.cc().window_tally()),
        });
    }
    finishes.sort_by(|a, b| {
        a.finish_us
            .total_cmp(&b.finish_us)
            .then(a.index.cmp(&b.index))
    });
    let connections = matrix
        .as_ref()
        .map_or(sim.flows().len() as u32, |m| m.connections);
    let fault_drops = sim.fault_stats().map_or(0, |f| f.data_dropped);
    Ok(HtsimRun {
        finishes,
        unfinished,
        connections,
        counters,
        fault_drops,
        wall_s,
        built,
    })
}

/// Prints the run as the REPS artifact's `htsim_uec` prints the lines its scripts read: per
/// flow the FCT after `finished at` (from the flow's start) and the absolute time after
/// `sim time`; then our counters (the artifact's own `New: ..` line is always zeros) and, with
/// `-failures_input` or `-failed 42`, the data packets the failures dropped (the artifact
/// prints that total for the former, and a `Dropping a PKT` per drop for the latter).
pub fn print_artifact(
    run: &HtsimRun,
    args: &HtsimArgs,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for f in &run.finishes {
        writeln!(
            out,
            "Flow {} flowId {} uecSrc {} finished at {} flowSize {} total packets {} RTS {} total bytes {} sim time {} bg traffic {}",
            f.name,
            f.id,
            f.index,
            format_us(f.fct_us),
            f.size,
            f.packets,
            f.rts,
            f.packets * u64::from(args.mtu),
            format_us(f.finish_us),
            u8::from(f.background)
        )?;
    }
    writeln!(out, "Done")?;
    if run.unfinished > 0 {
        writeln!(out, "{} flows did not finish before -end", run.unfinished)?;
    }
    writeln!(out, "{}", run.counters.line())?;
    if args.failures_input.is_some() || args.failed == 42 {
        writeln!(out, "Total number of dropped packets: {}", run.fault_drops)?;
    }
    Ok(())
}

/// Prints the run as `htsim_uec` prints the lines its validation reads.
pub fn print(run: &HtsimRun, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "Starting simulation")?;
    for f in &run.finishes {
        writeln!(
            out,
            "Flow {} flowId {} uecSrc {} finished at {} total messages {} total packets {} RTS {}{}",
            f.name,
            f.id,
            f.index,
            format_us(f.finish_us),
            f.messages,
            f.packets,
            f.rts,
            f.tally.map_or_else(String::new, |t| tally_text(&t))
        )?;
    }
    writeln!(out, "Done")?;
    if run.unfinished > 0 {
        writeln!(out, "{} flows did not finish before -end", run.unfinished)?;
    }
    writeln!(out, "{}", run.counters.line())
}

/// The end of a `finished` line with a window tally, as the UEC reference writes it.
fn tally_text(t: &WindowTally) -> String {
    format!(
        " fair_inc {} prop_inc {} fast_inc {} eta_inc {} multi_dec -{} quick_dec -{} nack_dec -{}",
        t.fair_increase,
        t.proportional_increase,
        t.fast_increase,
        t.periodic_increase,
        t.multiplicative_decrease,
        t.quick_adapt_decrease,
        t.nack_decrease
    )
}

/// `repsim htsim ARGS...`: parse, optionally write the scenario, run, print.
pub fn main(argv: &[String]) -> Result<()> {
    let args = HtsimArgs::parse(argv)?;
    let roots = vec![PathBuf::from(".")];
    if let Some(path) = &args.emit_scenario {
        let (_, built) = prepare(&args, &roots)?;
        std::fs::write(path, &built.toml)
            .map_err(|e| HtsimError::new(format!("--emit-scenario {}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    let run = run(&args, &roots)?;
    let stdout = std::io::stdout();
    let printed = match args.dialect {
        Dialect::Uet => print(&run, &mut stdout.lock()),
        Dialect::RepsArtifact => print_artifact(&run, &args, &mut stdout.lock()),
    };
    printed.map_err(|e| HtsimError::new(format!("stdout: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_with_six_significant_digits() {
        assert_eq!(format_us(176.2), "176.2");
        assert_eq!(format_us(2478.5312), "2478.53");
        assert_eq!(format_us(21029.34), "21029.3");
        assert_eq!(format_us(17.01071), "17.0107");
        assert_eq!(format_us(200.0), "200");
        assert_eq!(format_us(123456.7), "123457");
    }
}
