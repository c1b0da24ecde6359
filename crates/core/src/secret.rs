//! Secrets in configuration: URLs that may hold a password, and tokens.
//!
//! They are kept as [`SecretString`], whose `Debug` prints `[REDACTED]`, so a config printed
//! with `{:?}` or carried in an error shows none of them; [`redact_url`] is the one way a URL is
//! shown in a log line or a message, with every password it may hold masked.

pub use secrecy::{ExposeSecret, SecretString};

/// What a masked password reads as.
const MASK: &str = "***";

/// For clap: any string, kept secret.
pub fn parse_secret(raw: &str) -> Result<SecretString, String> {
    Ok(SecretString::from(raw.to_owned()))
}

/// `url` with its passwords masked, wherever they sit: in the userinfo
/// (`postgres://app:PW@db/x`), as a query parameter (`?password=PW`), or as a key of a
/// `key=value` connection string (`host=db password=PW`).
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return redact_pairs(url, ' ');
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let mut at = rest.rfind('@');
    // An `@` inside the query (`?x=a@b`) is not the end of a userinfo.
    if let (Some(a), Some(q)) = (at, rest.find('?'))
        && q < a
        && rest[q..a].contains('=')
    {
        at = rest[..q].rfind('@');
    }
    let (authority_end, userinfo) = match at {
        Some(at) => match rest[..at].find(':') {
            Some(colon) => (at, format!("{}:{MASK}", &rest[..colon])),
            None => (at, rest[..at].to_owned()),
        },
        None => (0, String::new()),
    };
    let tail = &rest[authority_end..];
    let tail = match tail.find('?') {
        Some(q) => format!("{}?{}", &tail[..q], redact_pairs(&tail[q + 1..], '&')),
        None => tail.to_owned(),
    };
    format!("{scheme}{userinfo}{tail}")
}

/// Masks the value of every `password` key in `key=value` pairs separated by `separator`
/// (a space also ends a value, and `'...'` quotes one, as in libpq's connection strings).
fn redact_pairs(text: &str, separator: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            out.push_str(rest);
            break;
        };
        let before = rest[..eq].trim_end();
        let key_start = before
            .rfind(|c: char| c == separator || c.is_whitespace())
            .map_or(0, |i| i + 1);
        let key = &before[key_start..];
        out.push_str(&rest[..=eq]);
        let value = rest[eq + 1..].trim_start_matches(' ');
        out.push_str(&rest[eq + 1..eq + 1 + (rest.len() - eq - 1 - value.len())]);
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // Up to the closing quote that is not escaped.
            let mut end = quoted.len();
            let mut escaped = false;
            for (i, c) in quoted.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '\'' if !escaped => {
                        end = i + 1;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            1 + end
        } else {
            value
                .find(|c: char| c == separator || c.is_whitespace())
                .unwrap_or(value.len())
        };
        if key.eq_ignore_ascii_case("password") || key.eq_ignore_ascii_case("sslpassword") {
            out.push_str(MASK);
        } else {
            out.push_str(&value[..value_len]);
        }
        rest = &value[value_len..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_wherever_they_sit() {
        let cases = [
            (
                "postgres://app:s3cret@db:5432/x",
                "postgres://app:***@db:5432/x",
            ),
            ("postgres://app@db/x", "postgres://app@db/x"),
            ("sqlite:///tmp/a.db", "sqlite:///tmp/a.db"),
            (
                "postgres://app:p@ss:w?rd@db/x?sslmode=require",
                "postgres://app:***@db/x?sslmode=require",
            ),
            (
                "postgres://db/x?user=app&password=s3cret&sslmode=require",
                "postgres://db/x?user=app&password=***&sslmode=require",
            ),
            (
                "postgres://db/x?application_name=a@b&password=s3cret",
                "postgres://db/x?application_name=a@b&password=***",
            ),
            (
                "host=db user=app password=s3cret dbname=x",
                "host=db user=app password=*** dbname=x",
            ),
            (
                "host=db password = 'it\\'s s3cret' dbname=x",
                "host=db password = *** dbname=x",
            ),
            (
                "rediss://:s3cret@cache:6380/0",
                "rediss://:***@cache:6380/0",
            ),
            (
                "redis://worker:s3cret@cache:6379",
                "redis://worker:***@cache:6379",
            ),
        ];
        for (url, redacted) in cases {
            assert_eq!(redact_url(url), redacted, "{url}");
            assert!(!redact_url(url).contains("s3cret"), "{url}");
        }
    }

    #[test]
    fn a_secret_string_prints_nothing_in_debug() {
        let secret = parse_secret("postgres://app:s3cret@db/x").unwrap();
        assert!(!format!("{secret:?}").contains("s3cret"));
        assert_eq!(secret.expose_secret(), "postgres://app:s3cret@db/x");
    }
}
