//! The topology families a scenario can name: one file per family with its own parameter
//! struct behind [`TopologyBuilder`], and one entry per family in the registry below (the
//! mechanism every scheme kind uses, [`crate::engine::registry`]).
//!
//! Adding a family: write `net/topology/<family>.rs` with a serde struct of its parameters
//! (`deny_unknown_fields`, defaults where the family has sensible ones) that implements
//! [`TopologyBuilder`], then add one entry to [`TopologyKind`]'s table (or register it at run
//! time with [`TopologySpec::register`]). Its `[topology]` table then parses (`type =
//! "<family>"`), errors name its fields, and the resolved `scenario.toml` writes its defaults.
use std::fmt;
use std::path::PathBuf;
use std::sync::LazyLock;

use super::{dragonfly, fat_tree, leaf_spine, rail, topo_file, Topology, TopologyError};
use crate::engine::registry::{self, AsAny, Entry, Implements, Kind, Spec, Table};
use crate::engine::time::US;
use crate::units::{RateQ, TimeQ};

/// Reads a file that a family's parameters name (resolved against the scenario's folder):
/// its full path and its text, or why it cannot be read.
pub type FileReader<'a> = dyn Fn(&str) -> Result<(PathBuf, String), String> + 'a;

/// Why a family's parameters do not build: the parameter at fault, if one is, and why.
#[derive(Debug, thiserror::Error)]
#[error("{}{message}", field.map(|f| format!("{f}: ")).unwrap_or_default())]
pub struct BuildError {
    /// The parameter (a key of the family's table), if one is at fault.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub message: String,
}

impl BuildError {
    /// An error in parameter `field`.
    pub fn at(field: &'static str, message: impl Into<String>) -> Self {
        BuildError {
            field: Some(field),
            message: message.into(),
        }
    }
}

impl From<TopologyError> for BuildError {
    fn from(e: TopologyError) -> Self {
        BuildError {
            field: None,
            message: e.0,
        }
    }
}

/// A topology family's parameters, as its `[topology]` table gives them.
pub trait TopologyBuilder: Clone {
    /// Builds the network, reading any file it names through `files`.
    fn build(&self, files: &FileReader) -> Result<Topology, BuildError>;
    /// The parameters with every default written out (for the resolved scenario).
    fn resolved(&self) -> Self {
        self.clone()
    }
}

/// `value`, or [`BuildError`] naming `field` if it is zero.
pub(crate) fn positive(
    value: TimeQ,
    field: &'static str,
) -> Result<crate::engine::Time, BuildError> {
    if value.0 == 0 {
        Err(BuildError::at(field, "must be positive"))
    } else {
        Ok(value.0)
    }
}

/// `value` in bits per second, or [`BuildError`] naming `field` if it is zero (the message
/// a scenario file gets for a zero rate, so a family configured in code fails alike).
pub(crate) fn positive_rate(value: RateQ, field: &'static str) -> Result<u64, BuildError> {
    if value.0 == 0 {
        Err(BuildError::at(field, crate::units::RATE_NOT_POSITIVE))
    } else {
        Ok(value.0)
    }
}

/// Serde default: 1.
pub(crate) fn one() -> u32 {
    1
}

/// Serde default: no time.
pub(crate) fn zero_time() -> TimeQ {
    TimeQ(0)
}

/// Serde default: 1 us.
pub(crate) fn microsecond() -> TimeQ {
    TimeQ(US)
}

/// The contract of a topology family as the registry holds it (every [`TopologyBuilder`] is
/// one).
pub trait TopologyFamily: AsAny + fmt::Debug + Send + Sync {
    /// Builds the network, reading any file it names through `files`.
    fn build(&self, files: &FileReader) -> Result<Topology, BuildError>;
    /// Writes every default out (for the resolved scenario).
    fn resolve(&mut self);
}

impl<T: TopologyBuilder + fmt::Debug + Send + Sync + 'static> TopologyFamily for T {
    fn build(&self, files: &FileReader) -> Result<Topology, BuildError> {
        TopologyBuilder::build(self, files)
    }
    fn resolve(&mut self) {
        *self = self.resolved();
    }
}

impl<T: TopologyFamily + 'static> Implements<dyn TopologyFamily> for T {
    fn boxed(self: Box<Self>) -> Box<dyn TopologyFamily> {
        self
    }
}

/// The kind of topology families in the registry ([`crate::engine::registry`]).
pub struct TopologyKind;

impl Kind for TopologyKind {
    type Dyn = dyn TopologyFamily;
    const TAG: &'static str = "type";
    const WHAT: &'static str = "topology family";
    fn table() -> &'static Table<dyn TopologyFamily> {
        static TABLE: LazyLock<Table<dyn TopologyFamily>> = LazyLock::new(|| {
            registry::table(vec![
                Entry::required_keys::<fat_tree::FatTreeConfig>("fat_tree"),
                Entry::required_keys::<leaf_spine::LeafSpineConfig>("leaf_spine"),
                Entry::of::<dragonfly::DragonflyConfig>("dragonfly"),
                Entry::of::<rail::RailConfig>("rail"),
                Entry::required_keys::<topo_file::TopoFileConfig>("topo_file"),
            ])
        });
        &TABLE
    }
}

/// A topology family and its parameters: the `[topology]` table, tagged by `type`.
pub type TopologySpec = Spec<TopologyKind>;

impl Spec<TopologyKind> {
    /// The parameters with every default written out.
    pub fn resolved(&self) -> Self {
        let mut resolved = self.clone();
        resolved.scheme_mut().resolve();
        resolved
    }
}
