//! What identity costs: Save and GetRun p50 on a server with `--auth api-key` (a key made
//! through the key store, as `checkpointd keys create` makes one) against a server without
//! authentication over the same Postgres schema, both in this process, taking turns round by
//! round.

use std::sync::Arc;
use std::time::SystemTime;

use super::BoxError;
use super::clients::{BenchClient, GrpcClient, InProcessServer};
use super::overhead::take_turns;
use super::payload::agent_state;
use super::scenario::Effort;
use super::schemas::Schemas;
use super::stats::{Summary, ms, ratio};
use super::targets::{Row, Targets};
use checkpointd::config::{AuthSettings, ServerSettings};
use checkpointd_core::domain::{ApiKey, NewApiKey, Role, Tenant, TenantScope};
use checkpointd_storage::store::StoreOptions;

/// As in the tracing scenario, a 3% difference is tens of microseconds: more samples, finer
/// interleaving than the core scenario.
const SAMPLES_PER_ITERATION: usize = 4;
const ROUNDS_PER_ROUND: usize = 8;
const STATE_BYTES: usize = 1024;

/// Save and GetRun p50 without authentication and with an API key.
#[derive(Clone, Debug)]
pub struct IdentityResult {
    pub save: [Summary; 2],
    pub get_run: [Summary; 2],
}

/// An agent key of tenant `bench`, stored through the server's key store; its token.
async fn make_key(server: &InProcessServer) -> Result<String, BoxError> {
    let fresh = NewApiKey::generate()?;
    server
        .keys
        .create_key(&ApiKey {
            id: fresh.id.clone(),
            secret_hash: fresh.secret_hash,
            tenant: TenantScope::One(Tenant::parse("bench")?),
            role: Role::Agent,
            name: "checkpointd-bench identity".to_owned(),
            created_at: SystemTime::now(),
            revoked_at: None,
        })
        .await?;
    Ok(fresh.token)
}

pub async fn run_identity(
    schemas: &Schemas<'_>,
    options: &StoreOptions,
    effort: Effort,
) -> Result<IdentityResult, BoxError> {
    let url = schemas.create_url().await?;
    let plain = InProcessServer::start(&url, options).await?;
    let settings = ServerSettings {
        auth: AuthSettings {
            api_keys: true,
            ..AuthSettings::default()
        },
        ..ServerSettings::default()
    };
    let authenticated = InProcessServer::start_with(&url, options, settings).await?;
    let token = make_key(&authenticated).await?;
    let state = Arc::new(agent_state(STATE_BYTES, 13));
    let run_id = |name: &str| format!("bench-identity-{name}-{}", std::process::id());
    let mut clients = [
        GrpcClient::connect(plain.addr, run_id("none"), state.clone()).await?,
        GrpcClient::connect(authenticated.addr, run_id("api-key"), state.clone())
            .await?
            .with_token(&token)?,
    ];
    // Warm-up: connections, prepared statements, and the key's first lookup.
    for client in &mut clients {
        for _ in 0..effort.warmup.max(1) * 5 {
            client.write_next().await?;
            client.get_run().await?;
        }
    }
    let rounds = effort.rounds * ROUNDS_PER_ROUND;
    let per_round = (effort.iterations * SAMPLES_PER_ITERATION)
        .div_ceil(rounds)
        .max(1);
    let saves = take_turns(&mut clients, rounds, per_round, async |client| {
        client.write_next().await
    })
    .await?;
    let get_runs = take_turns(&mut clients, rounds, per_round, async |client| {
        client.get_run().await
    })
    .await?;
    plain.stop().await?;
    authenticated.stop().await?;
    Ok(IdentityResult {
        save: [saves[0].summary(), saves[1].summary()],
        get_run: [get_runs[0].summary(), get_runs[1].summary()],
    })
}

pub fn print(result: &IdentityResult, effort: Effort, targets: &mut Targets) {
    println!();
    println!(
        "== Identity: --auth api-key against no authentication, postgres, 1 client, 1 KB state =="
    );
    println!(
        "(two in-process servers over the same Postgres schema; {} calls of each per server, in {} alternating rounds)",
        effort.iterations * SAMPLES_PER_ITERATION,
        effort.rounds * ROUNDS_PER_ROUND
    );
    println!(
        "{:<8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}",
        "call", "none p50", "key p50", "none p99", "key p99", "key/none", "target"
    );
    for (call, [none, key]) in [("Save", result.save), ("GetRun", result.get_run)] {
        let value = ratio(ms(key.p50), ms(none.p50));
        targets.record(Row::Identity, call, value);
        println!(
            "{call:<8} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7.3}x {:>9}",
            ms(none.p50),
            ms(key.p50),
            ms(none.p99),
            ms(key.p99),
            value,
            Row::Identity.bound().label()
        );
    }
    println!("(times in ms)");
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpointd_testkit::{connect_or_panic, database_url};

    /// Both servers answer every call (the authenticated one only with the key made through
    /// its key store), and every call is recorded.
    #[tokio::test]
    async fn save_and_get_run_are_measured_with_a_key_and_without() {
        let url = database_url();
        let admin = connect_or_panic(&url).await;
        let schemas = Schemas::new(&admin, &url);
        let effort = Effort {
            iterations: 4,
            rounds: 1,
            warmup: 1,
        };
        let result = run_identity(&schemas, &StoreOptions::default(), effort).await;
        schemas.drop_all().await;
        let result = result.unwrap();
        let per_server = (effort.iterations * SAMPLES_PER_ITERATION).div_ceil(ROUNDS_PER_ROUND)
            * ROUNDS_PER_ROUND;
        for summary in result.save.iter().chain(&result.get_run) {
            assert_eq!(summary.ops, per_server, "{result:?}");
        }
        let mut targets = Targets::default();
        print(&result, effort, &mut targets);
        assert_eq!(targets.verdict(Row::Identity).unwrap().all.len(), 2);
    }
}
