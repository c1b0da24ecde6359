//! The one declaration of a setting. [`settings!`] turns each entry (help, flag and environment
//! variable, type, default) into a `serve` flag, a config-file key of the same name, a resolved
//! value and the `[default: ...]` of its help, so none of them can drift from another.
//!
//! An entry's default is one of:
//! - `"text"`: parsed like a flag's value when neither flag, variable nor file sets it;
//! - `unset`: the value stays `None`;
//! - `(computed "text")`: `None` too, computed from other settings when the tree is built;
//!   `text` is what the help shows;
//! - `switch`: a flag without a value (`--allow-unauthenticated`, declared with
//!   `action = clap::ArgAction::SetTrue`), `false` unless set.

use std::fmt::Display;
use std::str::FromStr;

use super::file::FileLayer;

/// A group of declared settings: the flags clap parses, resolved over the config file and the
/// declared defaults into plain values.
pub trait SettingsGroup {
    /// The group's values, every layer applied.
    type Values;
    /// Each setting from its flag (or environment variable), else the file, else its default.
    fn resolve(&self, file: &FileLayer) -> Result<Self::Values, String>;
    /// Every setting of the group, nested groups included.
    fn declared(settings: &mut Vec<Declared>);
}

/// One declared setting, as the file and the documentation see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The config-file key, which is also the flag's name with underscores.
    pub key: &'static str,
    /// The declared default, as text, when it is one (not unset, computed or a switch).
    pub default: Option<&'static str>,
}

/// The config-file keys of a group.
pub fn keys<G: SettingsGroup>() -> Vec<&'static str> {
    let mut settings = Vec::new();
    G::declared(&mut settings);
    settings.iter().map(|setting| setting.key).collect()
}

impl<G: SettingsGroup> SettingsGroup for Box<G> {
    type Values = G::Values;

    fn resolve(&self, file: &FileLayer) -> Result<G::Values, String> {
        (**self).resolve(file)
    }

    fn declared(settings: &mut Vec<Declared>) {
        G::declared(settings)
    }
}

/// The declared defaults of a group alone: what an in-process server gets.
pub fn declared_defaults<G: SettingsGroup + Default>() -> G::Values {
    G::default()
        .resolve(&FileLayer::empty())
        .expect("every declared default parses (config::tests checks them all)")
}

/// A flag's help: its doc comment's lines joined, then its declared default.
pub fn help(doc: &[&str], default: Option<&str>) -> String {
    let lines: Vec<&str> = doc.iter().map(|line| line.trim()).collect();
    let text = lines.join(" ");
    let text = text.trim().trim_end_matches('.');
    match default {
        Some(default) => format!("{text} [default: {default}]"),
        None => text.to_owned(),
    }
}

/// `str::parse` with its error as text: how a file value or a declared default is read when
/// the entry names no parser of its own.
pub fn from_str<T: FromStr>(raw: &str) -> Result<T, String>
where
    T::Err: Display,
{
    raw.parse().map_err(|error: T::Err| error.to_string())
}

/// Declares a group of settings; see the module documentation.
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $Args:ident => $Values:ident {
            $(
                $(#[doc = $doc:literal])*
                #[arg($($arg:tt)*)]
                pub $name:ident: $ty:ty = $default:tt $(, parsed by $parse:path)?;
            )*
            $(
                #[command(flatten)]
                pub $group:ident: $Group:ty;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, clap::Args)]
        pub struct $Args {
            $(
                #[arg($($arg)*)]
                #[arg(help = $crate::config::declare::help(
                    &[$($doc),*],
                    $crate::config::declare::default_text!($default),
                ))]
                $(#[arg(value_parser = $parse)])?
                pub $name: Option<$ty>,
            )*
            $(
                #[command(flatten)]
                pub $group: $Group,
            )*
        }

        /// Resolved values of the flags of the same name.
        #[derive(Clone, Debug)]
        pub struct $Values {
            $(
                $(#[doc = $doc])*
                pub $name: $crate::config::declare::value_type!($default, $ty),
            )*
            $(
                pub $group: <$Group as $crate::config::declare::SettingsGroup>::Values,
            )*
        }

        impl $crate::config::declare::SettingsGroup for $Args {
            type Values = $Values;

            fn resolve(
                &self,
                file: &$crate::config::file::FileLayer,
            ) -> Result<$Values, String> {
                Ok($Values {
                    $(
                        $name: {
                            let parse = $crate::config::declare::parser!($ty $(, $parse)?);
                            let from_file = file.value(stringify!($name), parse)?;
                            let given = $crate::config::declare::given!($default, self.$name)
                                .or(from_file);
                            $crate::config::declare::or_default!(
                                $default, given, parse, stringify!($name)
                            )?
                        },
                    )*
                    $(
                        $group: $crate::config::declare::SettingsGroup::resolve(
                            &self.$group, file,
                        )?,
                    )*
                })
            }

            fn declared(settings: &mut Vec<$crate::config::declare::Declared>) {
                $(
                    settings.push($crate::config::declare::Declared {
                        key: stringify!($name),
                        default: $crate::config::declare::literal_default!($default),
                    });
                )*
                $(<$Group as $crate::config::declare::SettingsGroup>::declared(settings);)*
            }
        }
    };
}
pub(crate) use settings;

/// The `[default: ...]` an entry's help shows.
macro_rules! default_text {
    (switch) => {
        None
    };
    (unset) => {
        None
    };
    ((computed $text:literal)) => {
        Some($text)
    };
    ($default:literal) => {
        Some($default)
    };
}
pub(crate) use default_text;

/// An entry's default when it is declared as text.
macro_rules! literal_default {
    ($default:literal) => {
        Some($default)
    };
    ($default:tt) => {
        None
    };
}
pub(crate) use literal_default;

/// The type of an entry's resolved value: optional unless something always gives it one.
macro_rules! value_type {
    (unset, $ty:ty) => {
        Option<$ty>
    };
    ((computed $text:literal), $ty:ty) => {
        Option<$ty>
    };
    ($default:tt, $ty:ty) => {
        $ty
    };
}
pub(crate) use value_type;

/// What the flag layer says: a switch left off says nothing, so the file can still set it.
macro_rules! given {
    (switch, $flag:expr) => {
        $flag.filter(|set| *set)
    };
    ($default:tt, $flag:expr) => {
        $flag.clone()
    };
}
pub(crate) use given;

/// The value once no layer gave one.
macro_rules! or_default {
    (unset, $given:expr, $parse:expr, $key:expr) => {
        Ok::<_, String>($given)
    };
    ((computed $text:literal), $given:expr, $parse:expr, $key:expr) => {
        Ok::<_, String>($given)
    };
    (switch, $given:expr, $parse:expr, $key:expr) => {
        Ok::<_, String>($given.unwrap_or(false))
    };
    ($default:literal, $given:expr, $parse:expr, $key:expr) => {
        match $given {
            Some(value) => Ok(value),
            None => $parse($default)
                .map_err(|error| format!("the declared default of {}: {error}", $key)),
        }
    };
}
pub(crate) use or_default;

/// How an entry's file value and default are read: its own parser, or `str::parse`.
macro_rules! parser {
    ($ty:ty) => {
        $crate::config::declare::from_str::<$ty>
    };
    ($ty:ty, $parse:path) => {
        $parse
    };
}
pub(crate) use parser;
