//! The arguments of `repsim report`.
use std::path::PathBuf;

use clap::Args;
use repsim_experiment::report::ReportRequest;

/// Arguments of `repsim report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Run directory (output of `repsim run`).
    pub dir: PathBuf,
    /// HTML file to write (default: DIR/report.html).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Switch whose uplinks the time-series plots show (default: tor0 if collected, else the
    /// first collected switch with uplinks, e.g. leaf0 on a leaf-spine).
    #[arg(long)]
    pub switch: Option<String>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

impl ReportArgs {
    /// The library's request for these arguments.
    pub fn into_request(self) -> ReportRequest {
        ReportRequest {
            dir: self.dir,
            out: self.out,
            switch: self.switch,
            quiet: self.quiet,
        }
    }
}
