//! Where this machine's Postgres server binaries are, and whom they must run as: the one place
//! that knows, for the TLS clusters and the throwaway instance alike.

use std::path::PathBuf;
use std::process::Command;

/// The directory with `initdb` and `pg_ctl`: `pg_config --bindir` when that has them, else the
/// newest `/usr/lib/postgresql/*/bin` (where Debian's packages put them; `pg_config` comes from
/// `libpq-dev`, which a server-only machine may lack).
pub(crate) fn postgres_bin() -> Result<PathBuf, String> {
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
        .filter(|bin| bin.join("initdb").exists());
    if let Some(bin) = from_pg_config {
        return Ok(bin);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "tests need the Postgres server binaries (initdb, pg_ctl): none in `pg_config --bindir` \
         or /usr/lib/postgresql/*/bin. Install them: apt-get install postgresql"
            .to_owned()
    })
}

/// `initdb`'s arguments for a test cluster in `data`: superuser `postgres`, trust, UTF-8, and no
/// fsync of the new files (a test cluster is thrown away), the same for every cluster here.
pub(crate) fn initdb_args(data: &str) -> [&str; 8] {
    [
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
    ]
}

/// The uid and gid to run Postgres as: `None` (this process's own) unless this process is
/// root, where `initdb` and `postgres` refuse to run, so the `postgres` user runs them.
pub(crate) fn cluster_owner() -> Result<Option<(u32, u32)>, String> {
    if !is_root() {
        return Ok(None);
    }
    postgres_user().map(Some).ok_or_else(|| {
        "running as root: tests need a `postgres` user to run initdb as \
         (apt-get install postgresql creates it)"
            .to_owned()
    })
}

/// Whether this process runs as root.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().next().map(|uid| uid == "0"))
        })
        .unwrap_or(false)
}

/// The `postgres` user's uid and gid, from /etc/passwd.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&"postgres") && fields.len() > 3)
            .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
            .flatten()
    })
}
