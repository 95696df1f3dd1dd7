//! Running a command line and printing what `htsim_uec` prints that its validation reads.
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

use repsim::engine::time::to_us;
use repsim::scenario::LoadedScenario;
use repsim::Simulation;

use crate::args::HtsimArgs;
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
    /// Connections (messages) it completes.
    pub messages: u32,
    /// Data packets of the flow (its cumulative ACK at the end).
    pub packets: u64,
    /// RTS packets it sent.
    pub rts: u64,
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

/// Reads the matrix and builds the scenario of a command line; paths resolve against `roots`.
pub fn prepare(args: &HtsimArgs, roots: &[PathBuf]) -> Result<(UecMatrix, Built)> {
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
    Ok((matrix, built))
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
        finishes.push(Finish {
            name: format!("Uec_{}_{}", f.spec.src, f.spec.dst),
            id: f.spec.id,
            index,
            finish_us: to_us(finish),
            messages: matrix.flows.get(index).map_or(1, |m| m.messages),
            packets: f.spec.bytes.div_ceil(mss) + s.rts,
            rts: s.rts,
        });
    }
    finishes.sort_by(|a, b| {
        a.finish_us
            .total_cmp(&b.finish_us)
            .then(a.index.cmp(&b.index))
    });
    Ok(HtsimRun {
        finishes,
        unfinished,
        connections: matrix.connections,
        counters,
        wall_s,
        built,
    })
}

/// Prints the run as `htsim_uec` prints the lines its validation reads.
pub fn print(run: &HtsimRun, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "Starting simulation")?;
    for f in &run.finishes {
        writeln!(
            out,
            "Flow {} flowId {} uecSrc {} finished at {} total messages {} total packets {} RTS {}",
            f.name,
            f.id,
            f.index,
            format_us(f.finish_us),
            f.messages,
            f.packets,
            f.rts
        )?;
    }
    writeln!(out, "Done")?;
    if run.unfinished > 0 {
        writeln!(out, "{} flows did not finish before -end", run.unfinished)?;
    }
    writeln!(out, "{}", run.counters.line())
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
    print(&run, &mut stdout.lock()).map_err(|e| HtsimError::new(format!("stdout: {e}")))?;
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
