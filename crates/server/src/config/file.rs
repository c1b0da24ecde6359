//! The config file's layer: a flat TOML table whose keys are the declared settings' names (the
//! flags with underscores). Each value is kept as text and read by its setting's own parser, the
//! one its flag uses, so a file value and a flag value can never mean different things.

use std::collections::BTreeMap;
use std::path::Path;

/// The keys a config file set, checked against the declared settings.
pub struct FileLayer {
    /// Where the values came from, for error messages; empty when there is no file.
    origin: String,
    values: BTreeMap<String, String>,
}

impl FileLayer {
    /// No file: every setting falls through to its default.
    pub fn empty() -> Self {
        Self {
            origin: String::new(),
            values: BTreeMap::new(),
        }
    }

    /// Reads `path`, refusing keys that are not in `known`.
    pub fn read(path: &Path, known: &[&str]) -> Result<Self, String> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read config file {origin}: {error}"))?;
        let table: toml::Table = toml::from_str(&text)
            .map_err(|error| format!("invalid config file {origin}: {error}"))?;
        let mut values = BTreeMap::new();
        for (key, value) in table {
            if !known.contains(&key.as_str()) {
                return Err(format!(
                    "invalid config file {origin}: unknown key `{key}`; the keys are the flags of \
                     `checkpointd serve` with underscores, e.g. `drain_timeout`"
                ));
            }
            let text = match value {
                toml::Value::String(text) => text,
                toml::Value::Integer(number) => number.to_string(),
                toml::Value::Float(number) => number.to_string(),
                toml::Value::Boolean(flag) => flag.to_string(),
                _ => {
                    return Err(format!(
                        "invalid config file {origin}: `{key}` must be a string, a number or a \
                         boolean"
                    ));
                }
            };
            values.insert(key, text);
        }
        Ok(Self { origin, values })
    }

    /// The file's value of `key`, read by `parse`; `None` when the file does not set it.
    pub fn value<T>(
        &self,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        self.values
            .get(key)
            .map(|raw| {
                parse(raw)
                    .map_err(|error| format!("invalid config file {}: {key}: {error}", self.origin))
            })
            .transpose()
    }
}
