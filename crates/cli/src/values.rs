//! Option values named by the libraries (`csv`, `parquet`, `paper`, ...) as clap arguments: the
//! names come from the library types, so the command line cannot drift from them.
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// A clap parser accepting exactly `names` and converting with the type's `FromStr`.
pub fn named<T>(names: &'static [&'static str]) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    PossibleValuesParser::new(names).try_map(|s| s.parse::<T>().map_err(|e| e.to_string()))
}
