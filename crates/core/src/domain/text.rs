//! Free-form strings that arrive on the wire: labels (content types, roles, tool names,
//! metadata keys) and texts (metadata values, error messages, comments).
//!
//! Judged here, once, so every backend gives the same answer: Postgres refuses a NUL byte in
//! a `text` column while SQLite and memory store it, so without this check the same request
//! would be `INTERNAL` on one backend and succeed on another.

use crate::error::Error;

/// Longest label accepted, in bytes.
pub const MAX_LABEL_BYTES: usize = 256;

/// Longest text accepted, in bytes: room for a stack trace, not for a payload (payloads
/// travel in bytes fields).
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// A short name: at most [`MAX_LABEL_BYTES`], no control characters (NUL included).
pub fn check_label(field: &str, value: &str) -> Result<(), Error> {
    check_length(field, value, MAX_LABEL_BYTES)?;
    if value.chars().any(char::is_control) {
        return Err(Error::invalid(
            field,
            format!("{field} must not contain control characters"),
        ));
    }
    Ok(())
}

/// Human text: at most [`MAX_TEXT_BYTES`] and no NUL byte; newlines and tabs are welcome.
pub fn check_text(field: &str, value: &str) -> Result<(), Error> {
    check_length(field, value, MAX_TEXT_BYTES)?;
    check_no_nul(field, value)
}

/// No NUL byte, whatever the length: for text whose length the rules cap by cutting it (a
/// task's error).
pub fn check_no_nul(field: &str, value: &str) -> Result<(), Error> {
    if value.contains('\0') {
        return Err(Error::invalid(
            field,
            format!("{field} must not contain a NUL byte"),
        ));
    }
    Ok(())
}

fn check_length(field: &str, value: &str, limit: usize) -> Result<(), Error> {
    if value.len() > limit {
        return Err(Error::invalid(
            field,
            format!("{field} is {} bytes; the limit is {limit}", value.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(outcome: Result<(), Error>) -> String {
        match outcome {
            Err(Error::InvalidField { message, .. }) => message,
            other => panic!("expected INVALID_ARGUMENT, got {other:?}"),
        }
    }

    #[test]
    fn labels_refuse_nul_control_characters_and_overlong_values_naming_the_field() {
        assert!(message(check_label("tool_name", "a\0b")).contains("tool_name"));
        assert!(message(check_label("role", "a\nb")).contains("role"));
        assert!(message(check_label("content_type", &"t".repeat(257))).contains("content_type"));
        check_label("content_type", "application/json; charset=utf-8").unwrap();
        check_label("content_type", "").unwrap();
        check_label("role", &"r".repeat(MAX_LABEL_BYTES)).unwrap();
    }

    #[test]
    fn texts_refuse_nul_and_overlong_values_but_keep_newlines() {
        assert!(message(check_text("error", "boom\0")).contains("error"));
        assert!(
            message(check_text("comment", &"c".repeat(MAX_TEXT_BYTES + 1))).contains("comment")
        );
        check_text("error", "line 1\n\tline 2").unwrap();
        check_text("error", "").unwrap();
        assert!(message(check_no_nul("error", "a\0")).contains("error"));
        check_no_nul("error", &"e".repeat(MAX_TEXT_BYTES + 1)).unwrap();
    }
}
