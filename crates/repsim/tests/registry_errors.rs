//! A scheme the registry refuses says why through an error type (`RegistryError`), so a
//! program registering its schemes can use `?` under `Box<dyn Error>` or anyhow.
use repsim::engine::{Rng, Time};
use repsim::lb::{LbContext, LbScheme, LoadBalancer, PathChoice};
use repsim::net::RunContext;
use repsim::registry::RegistryError;
use repsim::ConfigError;
use repsim::Registry;
use serde::{Deserialize, Serialize};

/// `lb = "fixed-ev"`: every packet on EV 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FixedEvConfig {}

impl LbScheme for FixedEvConfig {
    fn validate(&self, _ctx: &RunContext) -> Result<(), ConfigError> {
        Ok(())
    }

    fn build(&self, _ctx: &LbContext, _rng: &mut Rng) -> Box<dyn LoadBalancer> {
        Box::new(FixedEv)
    }
}

struct FixedEv;

impl LoadBalancer for FixedEv {
    fn next(&mut self, _now: Time, _rng: &mut Rng) -> PathChoice {
        PathChoice::ev(0)
    }
}

fn register(name: &'static str) -> Result<(), Box<dyn std::error::Error>> {
    Registry::add_lb::<FixedEvConfig>(name)?;
    Ok(())
}

#[test]
fn a_refused_name_is_an_error_naming_it() {
    register("fixed-ev").expect("a new name");
    register("fixed-ev").expect("the same type again is a no-op");
    let taken = register("reps").expect_err("a built-in's name is taken");
    assert!(taken.to_string().contains("'reps'"), "{taken}");
    let bad = Registry::add_lb::<FixedEvConfig>("a b").expect_err("a space cannot be in a name");
    assert_eq!(bad.name, "a b");
    assert!(bad.message.contains("without '+' or spaces"), "{bad}");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(bad.clone());
    assert_eq!(boxed.to_string(), bad.to_string());
    let _: &RegistryError = &bad;
    // The scheme is usable once registered.
    assert!(Registry::lbs().contains(&"fixed-ev"));
}
