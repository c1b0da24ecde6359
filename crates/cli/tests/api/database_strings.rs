//! `--database` takes a libpq `key=value` connection string as well as a `postgres://` URL, as
//! the README says: a server started with one serves, on the database it names.

use checkpointd::proto::LoadLatestRequest;

use crate::support::requests::save;
use crate::support::{PgSchema, ServerProcess, connect, database_url};

/// `schema`'s database as a `key=value` string: host, port, user and database from the test
/// URL, and the schema as libpq's quoted `options`.
fn key_value(schema: &PgSchema) -> String {
    let config: tokio_postgres::Config = database_url().parse().expect("TEST_DATABASE_URL");
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
        tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
    };
    format!(
        "host={host} port={} user={} dbname={} options='-c search_path={}'",
        config.get_ports().first().copied().unwrap_or(5432),
        config.get_user().unwrap_or("postgres"),
        config.get_dbname().unwrap_or("postgres"),
        schema.name
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_value_connection_string_serves_the_database_it_names() {
    let schema = PgSchema::create().await;
    let by_words = ServerProcess::start(&key_value(&schema), &[]);
    let mut client = connect(by_words.addr).await;
    client.save(save("run-1", 1, b"{}")).await.unwrap();
    drop(by_words);
    // The same schema through its URL holds the checkpoint.
    let by_url = ServerProcess::start(&schema.url(), &[]);
    let latest = connect(by_url.addr)
        .await
        .load_latest(LoadLatestRequest {
            run_id: "run-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(latest.checkpoint.unwrap().step, 1);
}
