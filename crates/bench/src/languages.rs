//! What each language's client adds: Save and LoadLatest p50 of the Rust client (tonic, in this
//! process) and of the Python and TypeScript packages (their save-loop programs, run as child
//! processes) against one server on Postgres, taking turns round by round. `ts-floor` is the
//! TypeScript program doing the same work without the client, on a bare `node:http2` session:
//! Node's own cost, so that the client's share can be told apart from the runtime's.
//!
//! Every contender does the same work per operation: a Save of the next step with a 1 KiB JSON
//! state and checksum v1 computed by the client, then a LoadLatest whose checksum the client
//! verifies. Each times its own operations and prints them as one JSON line, so process start
//! and interpreter warm-up stay out of the figures. The target of issues 21 and 23 is a
//! difference, not a ratio: a client may add at most a fixed time over the Rust one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::BoxError;
use super::clients::{InProcessServer, checkpoint_client};
use super::payload::agent_state;
use super::schemas::Schemas;
use super::stats::{Samples, ms};
use checkpointd_protocol::checksum::{
    CheckpointContent, MessageChain, ToolChain, checkpoint_checksum, to_hex,
};
use checkpointd_protocol::v1::checkpoint_service_client::CheckpointServiceClient;
use checkpointd_protocol::v1::{LoadLatestRequest, SaveRequest};
use checkpointd_storage::store::StoreOptions;

const STATE_BYTES: usize = 1024;
const CONTENT_TYPE: &str = "application/json";

/// A client measured by running one of its programs: `command` plus the save-loop flags.
#[derive(Clone, Debug)]
pub struct ExternalClient {
    pub name: String,
    pub command: Vec<String>,
}

impl ExternalClient {
    /// The save-loop programs in this repository: Python's (with `python`, which must import
    /// the `checkpointd` package) and TypeScript's (compiled by the package's `npm test` build),
    /// the latter also as `ts-floor`: the same work on a bare `node:http2` session.
    pub fn in_repository(python: &str, node: &str) -> Vec<Self> {
        let root = repository_root();
        let typescript = path_text(&root.join("clients/typescript/dist-test/bench/save-loop.js"));
        vec![
            Self {
                name: "python".to_owned(),
                command: vec![
                    python.to_owned(),
                    path_text(&root.join("clients/python/bench/save_loop.py")),
                ],
            },
            Self {
                name: "typescript".to_owned(),
                command: vec![node.to_owned(), typescript.clone()],
            },
            // The same work on a bare node:http2 session: what Node costs before any client.
            Self {
                name: "ts-floor".to_owned(),
                command: vec![node.to_owned(), typescript, "--floor".to_owned()],
            },
        ]
    }
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// How much to measure: operations per contender per round, rounds, and unmeasured warm-up
/// operations at the start of each external program.
#[derive(Clone, Copy, Debug)]
pub struct LanguagesEffort {
    pub iterations: usize,
    pub rounds: usize,
    pub warmup: usize,
}

/// Save and LoadLatest samples of one contender.
#[derive(Debug, Default)]
pub struct ClientSamples {
    pub save: Samples,
    pub load: Samples,
}

/// Runs every contender against one in-process server on a fresh Postgres schema.
pub async fn run_languages(
    schemas: &Schemas<'_>,
    options: &StoreOptions,
    external: &[ExternalClient],
    effort: LanguagesEffort,
) -> Result<Vec<(String, ClientSamples)>, BoxError> {
    let url = schemas.create_url().await?;
    let server = InProcessServer::start(&url, options).await?;
    let target = format!("http://{}", server.addr);
    let state_file = std::env::temp_dir().join(format!(
        "checkpointd-bench-languages-{}.json",
        std::process::id()
    ));
    let state = agent_state(STATE_BYTES, 21);
    std::fs::write(&state_file, &state)?;
    let mut results: Vec<(String, ClientSamples)> = std::iter::once("rust".to_owned())
        .chain(external.iter().map(|client| client.name.clone()))
        .map(|name| (name, ClientSamples::default()))
        .collect();
    let mut rust = RustLoop::connect(server.addr, &state).await?;
    rust.run(effort.warmup).await?;
    let outcome = async {
        for round in 0..effort.rounds {
            // Rotate the order so no contender always runs right after another's burst.
            let count = results.len();
            for turn in 0..count {
                let index = (round + turn) % count;
                let run_id = format!("bench-languages-{}-{round}-{index}", std::process::id());
                let (save, load) = if index == 0 {
                    rust.run(effort.iterations).await?
                } else {
                    let client = &external[index - 1];
                    run_external(client, &target, &run_id, &state_file, effort).await?
                };
                let samples = &mut results[index].1;
                samples.save.add_batch(&save, Duration::ZERO);
                samples.load.add_batch(&load, Duration::ZERO);
            }
        }
        Ok::<_, BoxError>(())
    }
    .await;
    let _ = std::fs::remove_file(&state_file);
    server.stop().await?;
    outcome.map(|()| results)
}

/// The Rust contender: a tonic client doing what the external programs do.
struct RustLoop {
    client: CheckpointServiceClient<tonic::transport::Channel>,
    run_id: String,
    next_step: u64,
    state: Vec<u8>,
}

impl RustLoop {
    async fn connect(addr: std::net::SocketAddr, state: &[u8]) -> Result<Self, BoxError> {
        Ok(Self {
            client: checkpoint_client(addr).await?,
            run_id: format!("bench-languages-rust-{}", std::process::id()),
            next_step: 1,
            state: state.to_vec(),
        })
    }

    fn checksum(&self, step: u64, state: &[u8]) -> String {
        let content = CheckpointContent {
            run_id: &self.run_id,
            step,
            content_type: CONTENT_TYPE,
            state,
        };
        to_hex(&checkpoint_checksum(
            content,
            &BTreeMap::new(),
            &MessageChain::EMPTY,
            &ToolChain::EMPTY,
        ))
    }

    async fn run(&mut self, operations: usize) -> Result<(Vec<Duration>, Vec<Duration>), BoxError> {
        let mut saves = Vec::with_capacity(operations);
        let mut loads = Vec::with_capacity(operations);
        for _ in 0..operations {
            let step = self.next_step;
            let start = Instant::now();
            let request = SaveRequest {
                run_id: self.run_id.clone(),
                step: i64::try_from(step)?,
                content_type: CONTENT_TYPE.to_owned(),
                state: self.state.clone(),
                checksum: Some(self.checksum(step, &self.state)),
                ..SaveRequest::default()
            };
            self.client.save(request).await?;
            saves.push(start.elapsed());
            self.next_step += 1;

            let start = Instant::now();
            let response = self
                .client
                .load_latest(LoadLatestRequest {
                    run_id: self.run_id.clone(),
                    ..LoadLatestRequest::default()
                })
                .await?
                .into_inner();
            let checkpoint = response.checkpoint.ok_or("LoadLatest returned nothing")?;
            let expected = self.checksum(u64::try_from(checkpoint.step)?, &checkpoint.state);
            if checkpoint.checksum != expected || checkpoint.step != i64::try_from(step)? {
                return Err(format!("LoadLatest of {} did not verify", self.run_id).into());
            }
            loads.push(start.elapsed());
        }
        Ok((saves, loads))
    }
}

/// One external program's turn: its flags, its one JSON line of microsecond latencies.
async fn run_external(
    client: &ExternalClient,
    target: &str,
    run_id: &str,
    state_file: &Path,
    effort: LanguagesEffort,
) -> Result<(Vec<Duration>, Vec<Duration>), BoxError> {
    let (program, args) = client
        .command
        .split_first()
        .ok_or("an external client needs a command")?;
    let output = tokio::process::Command::new(program)
        .args(args)
        .args(["--target", target, "--run", run_id])
        .arg("--state-file")
        .arg(state_file)
        .args(["--iterations", &effort.iterations.to_string()])
        .args(["--warmup", &effort.warmup.to_string()])
        .output()
        .await
        .map_err(|error| format!("{} ({}): {error}", client.name, client.command.join(" ")))?;
    if !output.status.success() {
        return Err(format!(
            "{} exited with {}: {}",
            client.name,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8(output.stdout)?;
    let line = stdout
        .lines()
        .rev()
        .find(|line| line.starts_with('{'))
        .ok_or_else(|| format!("{} printed no JSON line: {stdout}", client.name))?;
    Ok((micros(line, "save_us")?, micros(line, "load_us")?))
}

/// The array of microsecond integers named `key` in the program's JSON line.
fn micros(line: &str, key: &str) -> Result<Vec<Duration>, BoxError> {
    let parsed: serde_json::Value = serde_json::from_str(line)?;
    let items = parsed[key]
        .as_array()
        .ok_or_else(|| format!("no array {key} in {line}"))?;
    items
        .iter()
        .map(|item| {
            item.as_u64()
                .map(Duration::from_micros)
                .ok_or_else(|| format!("{key} holds {item}, not microseconds").into())
        })
        .collect()
}

/// One table: p50 and p99 per client and operation, and each client's p50 over Rust's.
pub fn print(results: &[(String, ClientSamples)], effort: LanguagesEffort) {
    println!();
    println!(
        "== Clients by language: Save (client checksum) and LoadLatest (client verify), 1 KiB \
         state, one server on Postgres, {} rounds x {} operations, taking turns ==",
        effort.rounds, effort.iterations
    );
    println!("| client     | save p50 ms | save p99 ms | load p50 ms | load p99 ms |");
    println!("|------------|-------------|-------------|-------------|-------------|");
    for (name, samples) in results {
        let (save, load) = (samples.save.summary(), samples.load.summary());
        println!(
            "| {name:<10} | {:>11.3} | {:>11.3} | {:>11.3} | {:>11.3} |",
            ms(save.p50),
            ms(save.p99),
            ms(load.p50),
            ms(load.p99)
        );
    }
    let Some((_, rust)) = results.first() else {
        return;
    };
    let (rust_save, rust_load) = (rust.save.summary().p50, rust.load.summary().p50);
    for (name, samples) in results.iter().skip(1) {
        let added = |p50: Duration, base: Duration| ms(p50) - ms(base);
        println!(
            "{name}: save p50 adds {:+.3} ms over rust, load p50 adds {:+.3} ms",
            added(samples.save.summary().p50, rust_save),
            added(samples.load.summary().p50, rust_load)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_reads_each_named_array() {
        let line = r#"{"save_us":[120, 95,300],"load_us":[]}"#;
        assert_eq!(
            micros(line, "save_us").unwrap(),
            [120, 95, 300].map(Duration::from_micros)
        );
        assert!(micros(line, "load_us").unwrap().is_empty());
        assert!(micros(line, "other_us").is_err());
    }
}
