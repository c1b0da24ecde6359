//! Secrets in the configuration never reach a real process's output: passwords in the database
//! URL (userinfo and `?password=`) and in the Redis URL are absent from the startup log, the
//! warnings and `/metrics`.

use std::io::{BufRead, BufReader, Read};
use std::process::Command;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{PgSchema, redis_url, serve_command};

#[tokio::test]
async fn passwords_in_urls_never_appear_in_the_log_or_metrics() {
    let schema = PgSchema::create().await;
    // Trust authentication ignores the passwords; they only have to be kept quiet.
    let database = format!(
        "{}&password=pg-s3cret-query",
        schema
            .url()
            .replacen("postgres@", "postgres:pg-s3cret-userinfo@", 1)
    );
    assert!(database.contains("pg-s3cret-userinfo@"), "{database}");
    // The test Redis has no password: authenticating fails, and that failure is logged.
    let redis = redis_url().replacen("redis://", "redis://:redis-s3cret@", 1);
    assert!(redis.contains(":redis-s3cret@"), "{redis}");
    let mut child = serve_command(&database)
        .args(["--redis", &redis])
        .env("RUST_LOG", "info,checkpointd=debug")
        .spawn()
        .expect("spawn checkpointd");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let admin = line
        .trim()
        .strip_prefix("checkpointd admin listening on ")
        .unwrap_or_else(|| panic!("checkpointd did not start: {line:?}"))
        .to_owned();
    printed.push_str(&line);

    let mut http = tokio::net::TcpStream::connect(&admin).await.unwrap();
    http.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut metrics = String::new();
    http.read_to_string(&mut metrics).await.unwrap();
    assert!(metrics.contains("200 OK"), "{metrics}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    stdout.read_to_string(&mut printed).unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut printed)
        .unwrap();
    child.wait().unwrap();

    assert!(printed.contains("checkpointd serving"), "{printed}");
    // The database URL is logged, masked.
    assert!(printed.contains("postgres:***@"), "{printed}");
    for output in [&printed, &metrics] {
        assert!(!output.contains("s3cret"), "a password leaked:\n{output}");
    }
}
