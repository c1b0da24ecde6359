//! Printing helpers shared by the operator commands: compact tables and JSON values.

use std::time::SystemTime;

use serde_json::{Value, json};

/// A left-aligned table whose columns are as wide as their widest cell.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: Vec<&'static str>) -> Self {
        Self {
            header,
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    /// The table as text, one line per row, with no trailing spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self
            .header
            .iter()
            .map(|cell| cell.chars().count())
            .collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let header: Vec<String> = self.header.iter().map(|cell| (*cell).to_owned()).collect();
        let mut out = String::new();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (index, (cell, width)) in row.iter().zip(&widths).enumerate() {
                if index > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.extend(std::iter::repeat_n(
                    ' ',
                    width.saturating_sub(cell.chars().count()),
                ));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Prints `label  value` lines with the labels aligned.
pub fn print_fields(fields: &[(&str, String)]) {
    let width = fields
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0);
    for (label, value) in fields {
        println!("{label:<width$}  {value}");
    }
}

/// Lets a write to a closed stdout end the process quietly, as `head` or `grep -q` expect.
///
/// Rust ignores SIGPIPE, so `println!` to a closed pipe panics with a backtrace; the default
/// action ends the process by the signal instead (status 141 in a shell), like any Unix tool.
/// Only for commands that print for a reader: the server and the worker keep ignoring it.
pub fn end_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called before any other thread could be installing signal handlers; SIG_DFL is
    // a valid action for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Pretty-printed JSON on stdout.
pub fn print_json(value: &Value) {
    // Serializing a `Value` cannot fail.
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

fn system_time(timestamp: &prost_types::Timestamp) -> Option<SystemTime> {
    SystemTime::try_from(*timestamp).ok()
}

/// RFC 3339 to the second, or `-` when absent.
pub fn time_text(timestamp: Option<&prost_types::Timestamp>) -> String {
    timestamp.and_then(system_time).map_or_else(
        || "-".to_owned(),
        |time| humantime::format_rfc3339_seconds(time).to_string(),
    )
}

/// RFC 3339 with milliseconds, or `null` when absent.
pub fn time_json(timestamp: Option<&prost_types::Timestamp>) -> Value {
    timestamp.and_then(system_time).map_or(Value::Null, |time| {
        Value::String(humantime::format_rfc3339_millis(time).to_string())
    })
}

/// Opaque bytes for a person: the text when it is UTF-8, else a hex dump marked as such.
pub fn bytes_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => format!("hex:{}", hex::encode(bytes)),
    }
}

/// Opaque bytes in JSON: a string when they are UTF-8, else `{"hex": "..."}`; never lossy.
pub fn bytes_json(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => Value::String(text.to_owned()),
        Err(_) => json!({ "hex": hex::encode(bytes) }),
    }
}

/// One line of at most `max` characters: control characters become spaces, the rest is cut
/// with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The first 12 hex digits of a checksum: enough to tell checkpoints apart at a glance.
pub fn short_checksum(checksum: &str) -> String {
    checksum.chars().take(12).collect()
}

/// `-` for an empty cell, so columns never look shifted.
pub fn or_dash(text: &str) -> String {
    if text.is_empty() {
        "-".to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns_and_trim_trailing_spaces() {
        let mut table = Table::new(vec!["A", "LONG"]);
        table.row(vec!["wide cell".to_owned(), "x".to_owned()]);
        assert_eq!(table.render(), "A          LONG\nwide cell  x\n");
    }

    #[test]
    fn non_utf8_bytes_are_shown_as_hex_and_text_as_itself() {
        assert_eq!(bytes_json(b"hi"), json!("hi"));
        assert_eq!(bytes_json(&[0xff, 0x00]), json!({ "hex": "ff00" }));
        assert_eq!(bytes_text(&[0xff]), "hex:ff");
    }

    #[test]
    fn long_text_is_cut_to_one_line() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
