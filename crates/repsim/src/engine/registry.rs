//! The one registry mechanism behind every kind of scheme (load balancers, congestion controls,
//! switch schemes): a table of named configuration types, open at run time, and [`Spec`], one
//! scheme's configuration as a scenario names it.
//!
//! A kind ([`Kind`]) is a contract trait used as a trait object (`dyn LbScheme`, ...) plus its
//! table. Each entry knows its configuration type only through function pointers made by
//! [`Entry::of`], so a type defined outside the crate registers exactly like a built-in one and
//! a scenario names it the same way. Tables are read when a scenario is parsed or a run set
//! up, never per packet.
use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, RwLock};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// `" (did you mean `reps`?)"` when one of `names` is close to the unknown `name` (a typo, a
/// letter too few or too many), else nothing: appended to an error listing the allowed names.
pub fn suggestion<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    // Close: at most a third of the longer name's letters differ (and at least one may).
    let close = |candidate: &str| {
        let distance = strsim::damerau_levenshtein(name, candidate);
        let longest = name.chars().count().max(candidate.chars().count());
        distance <= (longest / 3).max(1)
    };
    names
        .into_iter()
        .filter(|c| close(c))
        .min_by_key(|c| strsim::damerau_levenshtein(name, c))
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// Downcasting for configuration trait objects (blanket-implemented for every `'static` type).
pub trait AsAny: Any {
    /// The value as [`Any`].
    fn as_any(&self) -> &dyn Any;
    /// The value as mutable [`Any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A kind of scheme: its contract (as a trait object type) and its table.
pub trait Kind: 'static {
    /// The contract as a trait object (`dyn LbScheme`).
    type Dyn: ?Sized + AsAny + fmt::Debug + Send + Sync;
    /// The key naming the scheme in a table (`scheme`, `algo`).
    const TAG: &'static str;
    /// What the kind is called in messages ("load balancer").
    const WHAT: &'static str;
    /// The kind's table, filled with the built-in schemes on first use.
    fn table() -> &'static Table<Self::Dyn>;
}

/// A configuration type of the contract `D` (`dyn LbScheme`, ...): each kind implements it for
/// every type implementing its contract, which is how the generic code below makes the
/// contract's trait object from a concrete type.
pub trait Implements<D: ?Sized>: 'static {
    /// The configuration as the contract's trait object.
    fn boxed(self: Box<Self>) -> Box<D>;
}

/// What the registry needs of a configuration type besides its contract: to copy, compare,
/// read and write it.
pub trait Config: Clone + PartialEq + Serialize + DeserializeOwned + 'static {}

impl<T: Clone + PartialEq + Serialize + DeserializeOwned + 'static> Config for T {}

/// A kind's table of registered schemes.
pub type Table<D> = RwLock<Vec<Arc<Entry<D>>>>;

/// A table holding `entries` (the built-ins of a kind, in the order errors list them).
pub fn table<D: ?Sized>(entries: Vec<Entry<D>>) -> Table<D> {
    RwLock::new(entries.into_iter().map(Arc::new).collect())
}

/// One registered scheme: its name and how to make, parse, copy and compare its
/// configuration.
pub struct Entry<D: ?Sized> {
    /// The name a scenario uses.
    pub name: &'static str,
    /// The configuration type.
    pub type_id: TypeId,
    /// Its default parameters (`None` for a type whose table has required keys).
    pub default: Option<fn() -> Box<D>>,
    /// Parameters from a table (without the naming key).
    pub parse: fn(toml::Value) -> Result<Box<D>, toml::de::Error>,
    /// Parameters from a table's text (without the naming key), for errors that carry the
    /// offending key's position.
    pub parse_text: fn(&str) -> Result<(), toml::de::Error>,
    /// A copy.
    pub clone: fn(&D) -> Box<D>,
    /// Equality of two configurations of this type.
    pub eq: fn(&D, &D) -> bool,
    /// The parameters as a table (without the naming key).
    pub to_toml: fn(&D) -> Result<toml::Value, toml::ser::Error>,
}

impl<D: ?Sized + AsAny> Entry<D> {
    /// The entry of configuration type `T` registered as `name`, with `T::default()` as the
    /// parameters of the bare name.
    pub fn of<T: Implements<D> + Config + Default>(name: &'static str) -> Self {
        Entry {
            default: Some(|| Box::new(T::default()).boxed()),
            ..Self::required_keys::<T>(name)
        }
    }

    /// The entry of configuration type `T` registered as `name`, whose table has keys without
    /// a default (the bare name is not a scheme).
    pub fn required_keys<T: Implements<D> + Config>(name: &'static str) -> Self {
        Entry {
            name,
            type_id: TypeId::of::<T>(),
            default: None,
            parse: |v| Ok(Box::new(T::deserialize(v)?).boxed()),
            parse_text: |text| T::deserialize(toml::Deserializer::new(text)).map(|_| ()),
            clone: |c| Box::new(downcast::<D, T>(c).clone()).boxed(),
            eq: |a, b| a.as_any().downcast_ref::<T>() == b.as_any().downcast_ref::<T>(),
            to_toml: |c| toml::Value::try_from(downcast::<D, T>(c)),
        }
    }
}

/// The concrete configuration behind an entry's own trait object.
fn downcast<D: ?Sized + AsAny, T: 'static>(config: &D) -> &T {
    config
        .as_any()
        .downcast_ref::<T>()
        .expect("an entry handles its own type")
}

/// Adds `entry` to kind `K`'s table. Fails if the name is taken; registering the same type
/// under the same name again is a no-op, so tests and examples may register at every start.
pub fn register<K: Kind>(entry: Entry<K::Dyn>) -> Result<(), String> {
    let mut table = K::table().write().unwrap_or_else(|e| e.into_inner());
    if let Some(old) = table.iter().find(|e| e.name == entry.name) {
        if old.type_id == entry.type_id {
            return Ok(());
        }
        return Err(format!(
            "a {} named '{}' is already registered",
            K::WHAT,
            entry.name
        ));
    }
    if entry.name.is_empty() || entry.name.contains(['+', ' ']) {
        return Err(format!(
            "'{}' cannot name a {}: use a non-empty name without '+' or spaces",
            entry.name,
            K::WHAT
        ));
    }
    table.push(Arc::new(entry));
    Ok(())
}

fn find<K: Kind>(pick: impl Fn(&Entry<K::Dyn>) -> bool) -> Option<Arc<Entry<K::Dyn>>> {
    let table = K::table().read().unwrap_or_else(|e| e.into_inner());
    table.iter().find(|e| pick(e)).cloned()
}

/// One scheme of kind `K` with its parameters, as a scenario names it (`"reps"`, or a table
/// whose [`Kind::TAG`] key names it).
pub struct Spec<K: Kind> {
    entry: Arc<Entry<K::Dyn>>,
    config: Arc<K::Dyn>,
}

impl<K: Kind> Spec<K> {
    /// Names of every registered scheme of the kind, built-ins first.
    pub fn names() -> Vec<&'static str> {
        let table = K::table().read().unwrap_or_else(|e| e.into_inner());
        table.iter().map(|e| e.name).collect()
    }

    /// The scheme with default parameters, by name (`None` for an unknown name or a scheme
    /// whose table has required keys).
    pub fn named(name: &str) -> Option<Self> {
        let entry = find::<K>(|e| e.name == name)?;
        let config = Arc::from((entry.default?)());
        Some(Spec { entry, config })
    }

    /// Reads `text`, a table without its naming key, as scheme `name`'s parameters, for an
    /// error that carries the position of the key at fault (`None`: an unknown name).
    pub fn check_text(name: &str, text: &str) -> Option<Result<(), toml::de::Error>> {
        let entry = find::<K>(|e| e.name == name)?;
        Some((entry.parse_text)(text))
    }

    /// A scheme from a table naming it under [`Kind::TAG`]; the message is serde's for the
    /// parameters, or names the unknown or missing scheme.
    pub fn from_toml(value: toml::Value) -> Result<Self, String> {
        let toml::Value::Table(mut table) = value else {
            return Err(format!(
                "invalid type: expected a table naming a {}",
                K::WHAT
            ));
        };
        let name = match table.remove(K::TAG) {
            Some(toml::Value::String(name)) => name,
            Some(other) => {
                return Err(format!(
                    "invalid type: {}, expected a string for `{}`",
                    other.type_str(),
                    K::TAG
                ))
            }
            None => return Err(format!("missing field `{}`", K::TAG)),
        };
        let entry = find::<K>(|e| e.name == name).ok_or_else(|| {
            let names: Vec<String> = Self::names().iter().map(|n| format!("`{n}`")).collect();
            format!(
                "unknown variant `{name}`, expected one of {}{}",
                names.join(", "),
                suggestion(&name, Self::names())
            )
        })?;
        let config =
            (entry.parse)(toml::Value::Table(table)).map_err(|e| e.message().trim().to_string())?;
        Ok(Spec {
            entry,
            config: Arc::from(config),
        })
    }

    /// Registers configuration type `T` as the scheme `name`, which scenarios may then name
    /// like a built-in one; the bare name means `T::default()`. Fails if another type has the
    /// name, or the name is empty or holds `+` or a space.
    pub fn register<T: Implements<K::Dyn> + Config + Default>(
        name: &'static str,
    ) -> Result<(), String> {
        register::<K>(Entry::of::<T>(name))
    }

    /// Registers configuration type `T`, whose table has required keys, as the scheme `name`
    /// (as [`Spec::register`]).
    pub fn register_required_keys<T: Implements<K::Dyn> + Config>(
        name: &'static str,
    ) -> Result<(), String> {
        register::<K>(Entry::required_keys::<T>(name))
    }

    /// The registered scheme whose configuration type is `T`, with these parameters.
    ///
    /// # Panics
    /// If `T` is not registered for the kind ([`Spec::register`]; every built-in is).
    pub fn new<T: Implements<K::Dyn>>(config: T) -> Self {
        let entry = find::<K>(|e| e.type_id == TypeId::of::<T>()).unwrap_or_else(|| {
            panic!(
                "{} is not registered as a {}",
                std::any::type_name::<T>(),
                K::WHAT
            )
        });
        Spec {
            entry,
            config: Arc::from(Box::new(config).boxed()),
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The parameters, if the scheme's configuration type is `T`.
    pub fn config<T: 'static>(&self) -> Option<&T> {
        let config: &K::Dyn = &self.config;
        config.as_any().downcast_ref::<T>()
    }

    /// The parameters to change, if the scheme's configuration type is `T`.
    pub fn config_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.scheme_mut().as_any_mut().downcast_mut::<T>()
    }

    /// The configuration behind the kind's contract, to change (copied first if shared).
    pub fn scheme_mut(&mut self) -> &mut K::Dyn {
        if Arc::get_mut(&mut self.config).is_none() {
            self.config = Arc::from((self.entry.clone)(&self.config));
        }
        Arc::get_mut(&mut self.config).expect("unshared after copy")
    }
}

/// A spec is used as its scheme's contract: `spec.build(..)`, `spec.validate(..)`.
impl<K: Kind> Deref for Spec<K> {
    type Target = K::Dyn;
    fn deref(&self) -> &K::Dyn {
        &self.config
    }
}

impl<K: Kind> Clone for Spec<K> {
    /// Shares the parameters (a change through [`Spec::config_mut`] copies them first).
    fn clone(&self) -> Self {
        Spec {
            entry: self.entry.clone(),
            config: self.config.clone(),
        }
    }
}

impl<K: Kind> PartialEq for Spec<K> {
    fn eq(&self, other: &Self) -> bool {
        self.entry.name == other.entry.name && (self.entry.eq)(&self.config, &other.config)
    }
}

impl<K: Kind> fmt::Debug for Spec<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.entry.name, &self.config)
    }
}

impl<K: Kind> serde::Serialize for Spec<K> {
    /// A table naming the scheme under [`Kind::TAG`], with every parameter.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut value = (self.entry.to_toml)(&self.config).map_err(serde::ser::Error::custom)?;
        if let toml::Value::Table(t) = &mut value {
            t.insert(K::TAG.into(), toml::Value::String(self.entry.name.into()));
        }
        value.serialize(s)
    }
}

impl<'de, K: Kind> serde::Deserialize<'de> for Spec<K> {
    /// A table naming the scheme under [`Kind::TAG`], through the kind's table.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(d)?;
        Spec::from_toml(value).map_err(serde::de::Error::custom)
    }
}
