//! Redis for cache tests: the shared server from `TEST_REDIS_URL` (or this process's own), and private `redis-server`
//! processes a test can kill and restart.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use redis::aio::MultiplexedConnection;

use crate::pki::CertFiles;
use crate::unique::unique_name;
use crate::wait::wait_until;

/// `TEST_REDIS_URL`, or (when it is unset) a Redis of this process's own, started on the
/// first call from the `redis-server` on the `PATH` and removed after the process exits.
pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| crate::throwaway::redis_url())
}

/// A raw connection, bypassing checkpointd; panics with a hint when Redis is not there.
pub async fn redis_connection(url: &str) -> MultiplexedConnection {
    let client = redis::Client::open(url).expect("parse redis url");
    client
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|error| {
            panic!(
                "tests need Redis at {url} (TEST_REDIS_URL, or unset it to have the tests start \
                 their own): {error}"
            )
        })
}

/// A key prefix no other test (or earlier run) uses.
pub fn unique_prefix() -> String {
    unique_name("cpd-test", '-')
}

/// A `redis-server` of this test's own, with an append-only file fsynced on every write, so a
/// restart after SIGKILL brings back exactly the entries it held — stale ones included.
pub struct RedisProcess {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
    options: RedisOptions,
}

/// How a [`RedisProcess`] is protected.
#[derive(Clone, Debug, Default)]
pub struct RedisOptions {
    /// TLS only (no plain port), with this server certificate and the CA file that signed it.
    pub tls: Option<(CertFiles, PathBuf)>,
    /// `requirepass`: clients must authenticate with this password.
    pub password: Option<String>,
}

impl RedisProcess {
    pub async fn start() -> Self {
        Self::start_with(RedisOptions::default()).await
    }

    /// Starts with TLS and/or a password.
    pub async fn start_with(options: RedisOptions) -> Self {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").expect("find a free port");
            listener.local_addr().unwrap().port()
        };
        let mut redis = Self {
            child: None,
            port,
            dir: tempfile::tempdir().expect("temp dir for redis"),
            options,
        };
        redis.spawn().await;
        redis
    }

    /// `redis://` (with the password, if any) or `rediss://` when TLS is on.
    pub fn url(&self) -> String {
        let scheme = if self.options.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        let auth = match &self.options.password {
            Some(password) => format!(":{password}@"),
            None => String::new(),
        };
        format!("{scheme}://{auth}127.0.0.1:{}", self.port)
    }

    /// A client for [`RedisProcess::url`], trusting the test CA when TLS is on.
    pub fn client(&self) -> redis::Client {
        match &self.options.tls {
            None => redis::Client::open(self.url()).expect("parse redis url"),
            Some((_, ca)) => redis::Client::build_with_tls(
                self.url(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(std::fs::read(ca).expect("read the CA file")),
                },
            )
            .expect("redis client with TLS"),
        }
    }

    /// SIGKILL: Redis gets no chance to say goodbye to its clients.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL redis-server");
            child.wait().expect("reap redis-server");
        }
    }

    /// Starts again on the same port and data directory.
    pub async fn restart(&mut self) {
        self.kill9();
        self.spawn().await;
    }

    async fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut command = Command::new("redis-server");
        command.args(["--bind", "127.0.0.1"]);
        match &self.options.tls {
            None => {
                command.args(["--port", &port]);
            }
            Some((cert, ca)) => {
                command
                    .args([
                        "--port",
                        "0",
                        "--tls-port",
                        &port,
                        "--tls-auth-clients",
                        "no",
                    ])
                    .arg("--tls-cert-file")
                    .arg(&cert.cert)
                    .arg("--tls-key-file")
                    .arg(&cert.key)
                    .arg("--tls-ca-cert-file")
                    .arg(ca);
            }
        }
        if let Some(password) = &self.options.password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (install it: apt-get install redis-server)");
        self.child = Some(child);
        let client = self.client();
        wait_until("redis-server accepts connections", || {
            let client = client.clone();
            async move {
                match client.get_multiplexed_async_connection().await {
                    Ok(mut connection) => redis::cmd("PING")
                        .query_async::<String>(&mut connection)
                        .await
                        .is_ok(),
                    Err(_) => false,
                }
            }
        })
        .await;
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        self.kill9();
    }
}
