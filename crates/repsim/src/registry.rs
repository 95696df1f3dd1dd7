//! Schemes added from outside the crate: a load balancer, congestion control, switch scheme or
//! topology family registered here is named in scenarios exactly like a built-in one (`lb =
//! "mine"`, `[cc] algo = "mine"`, `[routing] switch = "mine"`, `[topology] type = "mine"`), with its parameters from the same table, its
//! checks run by the scenario loader and `Simulation::new`, and its name in error messages
//! listing what is allowed. `docs/adding-a-scheme.md` walks through one;
//! `crates/repsim/examples/custom_scheme.rs` is a complete program.
//!
//! A configuration type is registered once per process under one name (registering the same
//! type under the same name again does nothing, so a program may do it at every start).
use crate::cc::{CcScheme, CcSpec};
use crate::engine::registry::Config;
use crate::lb::{LbScheme, LbSpec};
use crate::net::topology::builder::TopologyFamily;
use crate::net::topology::TopologySpec;
use crate::routing::{RoutingScheme, SwitchSpec};

/// The process's scheme tables (one per kind, built-ins first).
pub struct Registry;

/// Why a scheme could not be registered: another type has its name, or the name cannot name a
/// scheme (empty, or holding `+` or a space).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError {
    /// The name asked for.
    pub name: &'static str,
    /// What is wrong with it, naming the kind of scheme.
    pub message: String,
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RegistryError {}

/// The registry table's refusal of `name` as a [`RegistryError`].
fn refused(name: &'static str) -> impl FnOnce(String) -> RegistryError {
    move |message| RegistryError { name, message }
}

impl Registry {
    /// Registers configuration type `T` as the load balancer `name`.
    ///
    /// Fails if another type has the name, or the name is empty or holds `+` or a space.
    pub fn add_lb<T: LbScheme + Config + Default>(name: &'static str) -> Result<(), RegistryError> {
        LbSpec::register::<T>(name).map_err(refused(name))
    }

    /// Registers configuration type `T` as the congestion control `name` (as
    /// [`Registry::add_lb`]).
    pub fn add_cc<T: CcScheme + Config + Default>(name: &'static str) -> Result<(), RegistryError> {
        CcSpec::register::<T>(name).map_err(refused(name))
    }

    /// Registers configuration type `T` as the switch scheme `name` (as [`Registry::add_lb`]).
    pub fn add_switch<T: RoutingScheme + Config + Default>(
        name: &'static str,
    ) -> Result<(), RegistryError> {
        SwitchSpec::register::<T>(name).map_err(refused(name))
    }

    /// Registers parameter type `T` as the topology family `name` (as [`Registry::add_lb`]);
    /// its `[topology]` table has no default, so every required key must be given.
    pub fn add_topology<T: TopologyFamily + Config>(
        name: &'static str,
    ) -> Result<(), RegistryError> {
        TopologySpec::register_required_keys::<T>(name).map_err(refused(name))
    }

    /// Names of every load balancer, built-ins first.
    pub fn lbs() -> Vec<&'static str> {
        LbSpec::names()
    }

    /// Names of every congestion control, built-ins first.
    pub fn ccs() -> Vec<&'static str> {
        CcSpec::names()
    }

    /// Names of every switch scheme, built-ins first.
    pub fn switches() -> Vec<&'static str> {
        SwitchSpec::names()
    }

    /// Names of every topology family, built-ins first.
    pub fn topologies() -> Vec<&'static str> {
        TopologySpec::names()
    }
}
