//! The one way every query of this crate reaches Postgres, sent as `--postgres-statements`
//! says: named statements prepared once per connection and cached (`prepared`), or unnamed
//! statements that never outlive their transaction (`unnamed`), which a transaction-mode pooler
//! needs.
//!
//! A transaction-mode pooler (PgBouncer, RDS Proxy, Supavisor) hands each transaction, and each
//! statement outside one, whichever server connection is free. A named statement prepared on one
//! server connection is then missing on the next (SQLSTATE 26000), or its name is already taken
//! there by another client's (42P05). An unnamed statement is parsed, bound and executed in one
//! message batch (tokio-postgres's `query_typed`), so it lives exactly as long as the round trip.
//!
//! `query_typed` needs each parameter's type. Rather than spell the types out beside each of
//! the crate's statements (a second copy of what the SQL already says, free to drift), they are
//! learned from Postgres once per statement text and kept: a named statement is prepared,
//! described and closed inside one transaction (the caller's, or one of its own on a connection
//! of its own), so it never outlives that transaction either.
//!
//! Call sites keep their two phases: [`Statements::prepare`] first (which may wait for
//! Postgres), then [`Prepared::query`] and friends, which send on their first poll. Statements
//! pipelined with `try_join!` therefore still reach the server in argument order, whichever of
//! them were already cached.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use futures_util::TryStreamExt;
use tokio_postgres::GenericClient as _;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Error, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

pub(crate) use checkpointd_storage::store::PostgresStatements;

/// A connection statements run on: a pooled client (autocommit) or a transaction on one.
pub(crate) trait Conn: deadpool_postgres::GenericClient {
    /// Whether everything sent on it already runs inside a transaction.
    const IN_TRANSACTION: bool;
    type Driver: tokio_postgres::GenericClient + Sync;
    fn driver(&self) -> &Self::Driver;
}

impl Conn for deadpool_postgres::Client {
    const IN_TRANSACTION: bool = false;
    type Driver = tokio_postgres::Client;
    fn driver(&self) -> &tokio_postgres::Client {
        self
    }
}

impl<'a> Conn for deadpool_postgres::Transaction<'a> {
    const IN_TRANSACTION: bool = true;
    type Driver = tokio_postgres::Transaction<'a>;
    fn driver(&self) -> &tokio_postgres::Transaction<'a> {
        self
    }
}

/// The store's choice of statements, with the parameter types learned for `unnamed`. Cheap to
/// clone; clones share what was learned.
#[derive(Clone)]
pub(crate) struct Statements {
    mode: PostgresStatements,
    learned: Arc<RwLock<HashMap<String, Arc<Unnamed>>>>,
    learner: Arc<Learner>,
}

/// Where parameter types are learned: the store's own database settings.
pub(crate) struct Learner {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) connector: MakeRustlsConnect,
}

/// A statement ready to run: a cached named one, or unnamed SQL with its parameter types.
pub(crate) enum Prepared {
    Named(Statement),
    Unnamed(Arc<Unnamed>),
}

#[derive(Debug)]
pub(crate) struct Unnamed {
    sql: String,
    types: Vec<Type>,
}

impl Statements {
    pub(crate) fn new(mode: PostgresStatements, learner: Learner) -> Self {
        Self {
            mode,
            learned: Arc::default(),
            learner: Arc::new(learner),
        }
    }

    /// `sql` ready to run on `conn`: from the connection's cache of named statements, or as
    /// unnamed SQL whose parameter types are learned on first use.
    pub(crate) async fn prepare<C: Conn>(&self, conn: &C, sql: &str) -> Result<Prepared, Error> {
        if self.mode == PostgresStatements::Prepared {
            return Ok(Prepared::Named(conn.prepare_cached(sql).await?));
        }
        let known = self
            .learned
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(sql)
            .cloned();
        if let Some(known) = known {
            return Ok(Prepared::Unnamed(known));
        }
        let types = learn_types(conn, &self.learner, sql).await?;
        let unnamed = Arc::new(Unnamed {
            sql: sql.to_owned(),
            types,
        });
        self.learned
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sql.to_owned(), unnamed.clone());
        Ok(Prepared::Unnamed(unnamed))
    }

    /// Prepares and runs `sql` once, for a statement nothing else is pipelined behind.
    pub(crate) async fn query<C: Conn>(
        &self,
        conn: &C,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.prepare(conn, sql).await?.query(conn, params).await
    }

    pub(crate) async fn query_opt<C: Conn>(
        &self,
        conn: &C,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.prepare(conn, sql).await?.query_opt(conn, params).await
    }

    pub(crate) async fn query_one<C: Conn>(
        &self,
        conn: &C,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, Error> {
        self.prepare(conn, sql).await?.query_one(conn, params).await
    }

    pub(crate) async fn execute<C: Conn>(
        &self,
        conn: &C,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        self.prepare(conn, sql).await?.execute(conn, params).await
    }
}

/// The parameter types Postgres infers for `sql`, from a named statement prepared and closed
/// inside one transaction, so a pooler keeps one server connection for the prepare and the
/// close. It runs once per statement text per process.
///
/// Inside the caller's transaction when there is one: a connection of its own would need a
/// second server connection from a pooler whose every one may be held by such transactions,
/// each waiting for its own learner. Otherwise on a connection of its own, not the caller's
/// pooled one: a call cancelled between `BEGIN` and `ROLLBACK` (a client gone, a deadline)
/// would hand that back to the pool inside a transaction, and the next autocommit Save on it
/// would not commit. A cancelled learner only drops its own connection.
async fn learn_types<C: Conn>(conn: &C, learner: &Learner, sql: &str) -> Result<Vec<Type>, Error> {
    if C::IN_TRANSACTION {
        // Dropping the statement queues its Close ahead of anything sent later, so the Close
        // reaches the same server connection, still inside the caller's transaction.
        return Ok(conn.prepare(sql).await?.params().to_vec());
    }
    let (client, connection) = learner.config.connect(learner.connector.clone()).await?;
    let connection = tokio::spawn(connection);
    client.batch_execute("BEGIN").await?;
    // As above: the Close goes ahead of the ROLLBACK, inside the transaction.
    let types = client.prepare(sql).await?.params().to_vec();
    client.batch_execute("ROLLBACK").await?;
    drop(client);
    let _ = connection.await;
    Ok(types)
}

impl Prepared {
    pub(crate) async fn query<C: Conn>(
        &self,
        conn: &C,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        match self {
            Self::Named(statement) => conn.query(statement, params).await,
            Self::Unnamed(unnamed) => {
                (conn.driver())
                    .query_typed(&unnamed.sql, &unnamed.typed(params))
                    .await
            }
        }
    }

    pub(crate) async fn query_opt<C: Conn>(
        &self,
        conn: &C,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        match self {
            Self::Named(statement) => conn.query_opt(statement, params).await,
            Self::Unnamed(unnamed) => {
                (conn.driver())
                    .query_typed_opt(&unnamed.sql, &unnamed.typed(params))
                    .await
            }
        }
    }

    pub(crate) async fn query_one<C: Conn>(
        &self,
        conn: &C,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, Error> {
        match self {
            Self::Named(statement) => conn.query_one(statement, params).await,
            Self::Unnamed(unnamed) => {
                (conn.driver())
                    .query_typed_one(&unnamed.sql, &unnamed.typed(params))
                    .await
            }
        }
    }

    pub(crate) async fn execute<C: Conn>(
        &self,
        conn: &C,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        match self {
            Self::Named(statement) => conn.execute(statement, params).await,
            Self::Unnamed(unnamed) => {
                let rows = (conn.driver())
                    .query_typed_raw(&unnamed.sql, unnamed.typed(params))
                    .await?;
                futures_util::pin_mut!(rows);
                while rows.try_next().await?.is_some() {}
                Ok(rows.rows_affected().unwrap_or(0))
            }
        }
    }
}

impl Unnamed {
    /// Each parameter with its learned type; a parameter beyond them gets `unknown`, which
    /// fails to encode, so a miscounted call is an error, as it is for a named statement.
    fn typed<'p>(&self, params: &[&'p (dyn ToSql + Sync)]) -> Vec<(&'p (dyn ToSql + Sync), Type)> {
        params
            .iter()
            .enumerate()
            .map(|(index, param)| {
                let ty = self.types.get(index).cloned().unwrap_or(Type::UNKNOWN);
                (*param, ty)
            })
            .collect()
    }
}
