//! Names of option values (`csv`, `parquet`, `scenario`, ...), read and written the same way by
//! the command line, the Python package and the files, without a command-line parser.
use std::fmt;

/// A name that is none of an option's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What the option is (`format`, `collect`, ...).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// Every accepted name.
    pub allowed: &'static [&'static str],
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} '{}': expected one of {}",
            self.what,
            self.given,
            self.allowed.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

/// Gives a fieldless enum the names of its values: `NAMES`, `name()`, a `FromStr` that fails
/// with [`UnknownName`] on any other name, and a `Display` that writes the name.
#[macro_export]
macro_rules! named_values {
    ($ty:ty, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value's name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The value's name, as `FromStr` reads it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                $(if s == $name {
                    return Ok(Self::$variant);
                })+
                Err($crate::names::UnknownName {
                    what: $what,
                    given: s.to_string(),
                    allowed: Self::NAMES,
                })
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
