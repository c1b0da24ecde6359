//! The parts of a Postgres URL a PgBouncer's `[databases]` line needs: where the server is and
//! whom to log in as (`TEST_DATABASE_URL` may name any Postgres, not only the throwaway one).

/// `postgres://user[:password]@host[:port]/database`, with libpq's defaults for what is left out.
#[derive(Debug, PartialEq)]
pub(super) struct Upstream {
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) user: String,
    pub(super) password: Option<String>,
    pub(super) database: String,
}

impl Upstream {
    pub(super) fn parse(url: &str) -> Result<Self, String> {
        let unparsable = || {
            format!(
                "cannot put PgBouncer in front of {url}: expected postgres://user@host:port/database"
            )
        };
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or_else(unparsable)?;
        let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
        let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(password.to_owned())),
            None => (userinfo, None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| unparsable())?),
            None => (hostport, 5432),
        };
        let user = if user.is_empty() { "postgres" } else { user };
        Ok(Self {
            host: if host.is_empty() { "127.0.0.1" } else { host }.to_owned(),
            port,
            user: user.to_owned(),
            password,
            database: if database.is_empty() { user } else { database }.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Upstream;

    #[test]
    fn a_test_database_url_gives_host_port_user_and_database() {
        assert_eq!(
            Upstream::parse("postgres://postgres@127.0.0.1:5432/test?sslmode=disable"),
            Ok(Upstream {
                host: "127.0.0.1".into(),
                port: 5432,
                user: "postgres".into(),
                password: None,
                database: "test".into(),
            })
        );
        let with_password = Upstream::parse("postgresql://app:secret@db.example").unwrap();
        assert_eq!(
            (
                with_password.port,
                with_password.password.as_deref(),
                with_password.database.as_str()
            ),
            (5432, Some("secret"), "app")
        );
        assert!(Upstream::parse("mysql://x").is_err());
    }
}
