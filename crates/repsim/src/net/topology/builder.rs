//! The topology families a scenario can name: one file per family with its own parameter
//! struct behind [`TopologyBuilder`], and one line per family in the registry below.
//!
//! Adding a family: write `net/topology/<family>.rs` with a serde struct of its parameters
//! (`deny_unknown_fields`, defaults where the family has sensible ones) that implements
//! [`TopologyBuilder`], then add one line to `topology_families!`. Its `[topology]` table then
//! parses (`type = "<family>"`), errors name its fields, and the resolved `scenario.toml`
//! writes its defaults.
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{dragonfly, fat_tree, leaf_spine, rail, topo_file, Topology, TopologyError};
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

macro_rules! topology_families {
    ($($name:literal => $variant:ident($config:ty)),* $(,)?) => {
        /// A topology family and its parameters: the `[topology]` table, tagged by `type`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type")]
        pub enum TopologySpec {
            $(
                #[doc = concat!("`type = \"", $name, "\"`")]
                #[serde(rename = $name)]
                $variant($config),
            )*
        }

        impl TopologySpec {
            /// Names of every family.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// Its family's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(TopologySpec::$variant(_) => $name,)*
                }
            }

            /// Builds the network.
            pub fn build(&self, files: &FileReader) -> Result<Topology, BuildError> {
                match self {
                    $(TopologySpec::$variant(c) => c.build(files),)*
                }
            }

            /// The parameters with every default written out.
            pub fn resolved(&self) -> Self {
                match self {
                    $(TopologySpec::$variant(c) => TopologySpec::$variant(c.resolved()),)*
                }
            }

            /// Reads a table (without its `type`) as family `family`'s parameters, for error
            /// messages that point at the field (a tagged enum reports them at the table).
            /// `None` for an unknown family.
            pub fn check_family<'de, D: serde::Deserializer<'de>>(
                family: &str,
                table: D,
            ) -> Option<Result<(), D::Error>> {
                match family {
                    $($name => Some(<$config>::deserialize(table).map(|_| ())),)*
                    _ => None,
                }
            }
        }
    };
}

topology_families! {
    "fat_tree" => FatTree(fat_tree::FatTreeConfig),
    "leaf_spine" => LeafSpine(leaf_spine::LeafSpineConfig),
    "dragonfly" => Dragonfly(dragonfly::DragonflyConfig),
    "rail" => Rail(rail::RailConfig),
    "topo_file" => TopoFile(topo_file::TopoFileConfig),
}
