//! Schemes added from outside the crate: a load balancer, congestion control, switch scheme or
//! topology family registered here is named in scenarios exactly like a built-in one (`lb =
//! "mine"`, `[cc] algo = "mine"`, `[routing] switch = "mine"`, `[topology] type = "mine"`), with its parameters from the same table, its
//! checks run by the scenario loader and `Simulation::new`, and its name in error messages
//! listing what is allowed. `docs/adding-a-scheme.md` walks through one;
//! `examples/custom_scheme.rs` is a complete program.
//!
//! A configuration type is registered once per process under one name (registering the same
//! type under the same name again does nothing, so a program may do it at every start).
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cc::{CcScheme, CcSpec};
use crate::lb::{LbScheme, LbSpec};
use crate::net::topology::builder::RegistrableFamily;
use crate::net::topology::TopologySpec;
use crate::routing::{RoutingScheme, SwitchSpec};

/// The process's scheme tables (one per kind, built-ins first).
pub struct Registry;

impl Registry {
    /// Registers configuration type `T` as the load balancer `name`.
    ///
    /// Fails if another type has the name, or the name is empty or holds `+` or a space.
    pub fn add_lb<T>(name: &'static str) -> Result<(), String>
    where
        T: LbScheme + Default + Clone + PartialEq + Serialize + DeserializeOwned,
    {
        LbSpec::register::<T>(name)
    }

    /// Registers configuration type `T` as the congestion control `name` (as
    /// [`Registry::add_lb`]).
    pub fn add_cc<T>(name: &'static str) -> Result<(), String>
    where
        T: CcScheme + Default + Clone + PartialEq + Serialize + DeserializeOwned,
    {
        CcSpec::register::<T>(name)
    }

    /// Registers configuration type `T` as the switch scheme `name` (as [`Registry::add_lb`]).
    pub fn add_switch<T>(name: &'static str) -> Result<(), String>
    where
        T: RoutingScheme + Default + Clone + PartialEq + Serialize + DeserializeOwned,
    {
        SwitchSpec::register::<T>(name)
    }

    /// Registers parameter type `T` as the topology family `name` (as [`Registry::add_lb`]);
    /// its `[topology]` table has no default, so every required key must be given.
    pub fn add_topology<T: RegistrableFamily>(name: &'static str) -> Result<(), String> {
        TopologySpec::register::<T>(name)
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
