//! HTML building blocks: escaping, the page shell with its navigation, and small helpers every
//! page uses. Pages are plain server-rendered HTML; everything that came from a caller or the
//! store goes through [`escape`].

use std::fmt::Write;
use std::time::SystemTime;

use super::session::Session;

/// `text` safe inside an element or a double-quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` as one component of a URL path or query.
pub fn url_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            other => {
                let _ = write!(out, "%{other:02X}");
            }
        }
    }
    out
}

/// Bytes shown as text: pretty JSON when they are JSON, else UTF-8 (lossy), escaped.
pub fn pretty_bytes(bytes: &[u8]) -> String {
    escape(&pretty_text(bytes))
}

/// Bytes as readable text, unescaped: pretty JSON when they are JSON, else lossy UTF-8.
pub fn pretty_text(bytes: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(value) => serde_json::to_string_pretty(&value)
            .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned()),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Messages as an ordered list numbered from `first` (1-based), each with its role.
pub fn message_list(first: u64, messages: &[crate::proto::Message]) -> String {
    let mut out = format!(r#"<ol start="{first}">"#);
    for message in messages {
        let _ = write!(
            out,
            "<li><strong>{}</strong>: <pre>{}</pre></li>",
            escape(&message.role),
            pretty_bytes(&message.content)
        );
    }
    out.push_str("</ol>");
    out
}

/// A timestamp as RFC 3339 (UTC, seconds), or a dash when there is none.
pub fn when(timestamp: Option<&prost_types::Timestamp>) -> String {
    let Some(timestamp) = timestamp else {
        return "—".to_owned();
    };
    let Ok(time) = SystemTime::try_from(*timestamp) else {
        return "—".to_owned();
    };
    humantime::format_rfc3339_seconds(time).to_string()
}

/// The hidden field every form that changes something carries.
pub fn csrf_field(session: &Session) -> String {
    format!(
        r#"<input type="hidden" name="csrf" value="{}">"#,
        escape(&session.csrf_token)
    )
}

/// A whole page: the shell, the navigation (with `current` marked), then `body`.
pub fn page(title: &str, session: Option<&Session>, current: &str, body: &str) -> String {
    let nav = match session {
        None => String::new(),
        Some(session) => {
            let link = |href: &str, label: &str| {
                let mark = if label == current {
                    r#" aria-current="page""#
                } else {
                    ""
                };
                format!(r#"<li><a href="{href}"{mark}>{label}</a></li>"#)
            };
            format!(
                r#"<nav aria-label="Console"><ul>{}{}{}{}</ul>
<form method="post" action="/sign-out" class="who">{}<span>{} ({}) in tenant <strong>{}</strong></span> <button type="submit">Sign out</button></form></nav>"#,
                link("/inbox", "Inbox"),
                link("/runs", "Runs"),
                link("/tasks", "Tasks"),
                link("/integrity", "Integrity"),
                csrf_field(session),
                escape(&session.context.identity.subject),
                session.context.identity.role,
                escape(session.context.tenant.as_str()),
            )
        }
    };
    format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · checkpointd</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><p class="brand">checkpointd console</p>{nav}</header>
<main id="main">
<h1>{title}</h1>
{body}
</main>
</body>
</html>
"##,
        title = escape(title),
    )
}

/// A short notice (`role="status"`), e.g. after a change or for an error.
pub fn notice(kind: &str, text: &str) -> String {
    format!(
        r#"<p class="notice {kind}" role="status"><strong>{}:</strong> {}</p>"#,
        escape(kind),
        escape(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_stored_text_is_shown_never_interpreted() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(url_part("run 1/é"), "run%201%2F%C3%A9");
    }

    #[test]
    fn json_is_shown_pretty_and_other_bytes_as_text() {
        assert_eq!(pretty_text(br#"{"a":1}"#), "{\n  \"a\": 1\n}");
        assert_eq!(pretty_text(b"plain"), "plain");
    }
}
