//! A Postgres cluster of a test's own, with TLS on: `initdb` into a temporary directory, a
//! certificate from a [`TestCa`], a free port, trust authentication, started with `pg_ctl` and
//! stopped (immediately) when dropped. The binaries are found as [`crate::pg_binaries`] says; as
//! root the cluster runs as the `postgres` user.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::pg_binaries::{cluster_owner, initdb_args, postgres_bin};
use crate::pki::TestCa;

/// Who may connect over what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgHba {
    /// Plain text or TLS, as the client likes.
    AnyConnection,
    /// TLS connections only (`hostssl`); plain ones are refused.
    TlsOnly,
}

/// A running TLS-enabled Postgres cluster.
pub struct PgTlsCluster {
    pub port: u16,
    bin: PathBuf,
    data: PathBuf,
    owner: Option<(u32, u32)>,
    _dir: tempfile::TempDir,
}

impl PgTlsCluster {
    /// Starts a cluster whose certificate (signed by `ca`) names `localhost` only, so dialling `127.0.0.1` is a host name mismatch.
    pub fn start(ca: &TestCa, hba: PgHba) -> Self {
        let bin = postgres_bin().unwrap_or_else(|message| panic!("{message}"));
        let dir = tempfile::tempdir().expect("temp dir for postgres");
        let owner = cluster_owner().unwrap_or_else(|message| panic!("{message}"));
        let data = dir.path().join("data");
        let cert = ca.server_cert("postgres-server", &["localhost"]);
        let cert_path = dir.path().join("server.crt");
        let key_path = dir.path().join("server.key");
        std::fs::copy(&cert.cert, &cert_path).expect("copy server certificate");
        std::fs::copy(&cert.key, &key_path).expect("copy server key");
        set_mode(&key_path, 0o600);
        if let Some((uid, gid)) = owner {
            for path in [dir.path(), &cert_path, &key_path] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown to postgres");
            }
        }
        let cluster = Self {
            port: free_port(),
            bin,
            data,
            owner,
            _dir: dir,
        };
        cluster.run("initdb", &initdb_args(path_str(&cluster.data)));
        let conf = format!(
            "\nport = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nfsync = off\n",
            cluster.port,
            path_str(&cluster.data),
            path_str(&cert_path),
            path_str(&key_path),
        );
        append(&cluster.data.join("postgresql.conf"), &conf);
        let method = match hba {
            PgHba::AnyConnection => "host",
            PgHba::TlsOnly => "hostssl",
        };
        std::fs::write(
            cluster.data.join("pg_hba.conf"),
            format!("local all all trust\n{method} all all 127.0.0.1/32 trust\n"),
        )
        .expect("write pg_hba.conf");
        let log = cluster.data.join("server.log");
        cluster.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&cluster.data),
                "-l",
                path_str(&log),
                "-w",
                "-t",
                "30",
                "start",
            ],
        );
        cluster
    }

    /// A URL for database `postgres` on `host` (`localhost` or `127.0.0.1`) with `query`
    /// appended, e.g. `sslmode=require`.
    pub fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres?{query}", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let mut command = Command::new(self.bin.join(program));
        command.args(args);
        if let Some((uid, gid)) = self.owner {
            command.uid(uid).gid(gid);
        }
        let output = command
            .output()
            .unwrap_or_else(|error| panic!("run {program}: {error}"));
        assert!(
            output.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }
}

impl Drop for PgTlsCluster {
    fn drop(&mut self) {
        let mut command = Command::new(self.bin.join("pg_ctl"));
        command.args(["-D", path_str(&self.data), "-m", "immediate", "-w", "stop"]);
        if let Some((uid, gid)) = self.owner {
            command.uid(uid).gid(gid);
        }
        let _ = command.output();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("find a free port");
    listener.local_addr().expect("bound address").port()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open postgresql.conf");
    file.write_all(text.as_bytes())
        .expect("append to postgresql.conf");
}
