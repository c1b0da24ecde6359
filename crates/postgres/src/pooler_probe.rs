//! At startup under `--postgres-statements prepared`: refuse a database reached through a
//! transaction-mode pooler, whose lost prepared statements would otherwise fail calls one by
//! one, with a message naming the setting to change.
//!
//! The sign is the server process behind each connection. Directly, and through a session-mode
//! pooler, each client connection keeps one server process for its whole life. A
//! transaction-mode pooler lends a server process per transaction, so two client connections
//! taking turns meet the same one (PgBouncer reuses its most recently released connection
//! first), or one client connection meets several. Either is proof; neither happens otherwise.
//! Only simple-protocol statements are sent, so the probe itself is pooler-safe.

use std::collections::HashMap;

use tokio_postgres::SimpleQueryMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::db;
use checkpointd_core::error::{Error, Result};

/// Rounds of one query per probe connection; one round suffices on an idle PgBouncer, the rest
/// cover a pooler busy with other clients.
const ROUNDS: usize = 4;

/// `Err(InvalidArgument)` naming `--postgres-statements unnamed` when the database at `config`
/// is behind a transaction-mode pooler.
pub(crate) async fn refuse_transaction_pooler(
    config: &tokio_postgres::Config,
    connector: MakeRustlsConnect,
    shown_url: &str,
) -> Result<()> {
    let mut clients = Vec::new();
    for _ in 0..2 {
        let (client, connection) = config.connect(connector.clone()).await.map_err(db)?;
        tokio::spawn(connection);
        clients.push(client);
    }
    // Which probe connection met each server process, and which processes each one met.
    let mut met_by: HashMap<String, usize> = HashMap::new();
    let mut met: Vec<Vec<String>> = vec![Vec::new(); clients.len()];
    for _ in 0..ROUNDS {
        for (index, client) in clients.iter().enumerate() {
            let backend = backend(client).await?;
            let shared = *met_by.entry(backend.clone()).or_insert(index) != index;
            if !met[index].contains(&backend) {
                met[index].push(backend.clone());
            }
            if shared || met[index].len() > 1 {
                return Err(Error::InvalidArgument(format!(
                    "postgres at {shown_url} is behind a transaction-mode pooler (two \
                     connections were served by one server process, or one by two: {backend}); \
                     named prepared statements do not survive it: set --postgres-statements \
                     unnamed (CHECKPOINTD_POSTGRES_STATEMENTS=unnamed), or connect directly or \
                     through a session-mode pooler"
                )));
            }
        }
    }
    Ok(())
}

/// The server process answering this statement: its pid and its server's start time (pids
/// repeat across servers).
async fn backend(client: &tokio_postgres::Client) -> Result<String> {
    let messages = client
        .simple_query("SELECT pg_backend_pid()::text || '@' || pg_postmaster_start_time()::text")
        .await
        .map_err(db)?;
    messages
        .iter()
        .find_map(|message| match message {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        })
        .ok_or_else(|| Error::internal("postgres answered the backend probe with no row"))
}
