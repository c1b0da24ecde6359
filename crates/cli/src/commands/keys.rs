//! `checkpointd keys`: create, list and revoke API keys straight on the database
//! (`--database`, as `serve` takes it), like `prune` and `scrub`: key management is an admin's
//! act on the deployment, not an RPC a credential could reach.

use std::time::SystemTime;

use clap::{Args, Subcommand};
use serde_json::json;

use checkpointd::database;
use checkpointd_core::domain::{
    ApiKey, NewApiKey, Role, Tenant, TenantScope, check_binding, check_label,
};

/// `checkpointd keys`
#[derive(Debug, Args)]
pub struct KeysArgs {
    /// The database holding the keys: sqlite://PATH or postgres://...
    #[arg(
        long,
        env = "CHECKPOINTD_DATABASE",
        hide_env_values = true,
        global = true
    )]
    pub database: Option<String>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: KeysCommand,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make a key and print it, once: only its hash is stored.
    Create {
        /// The tenant the key acts in; `*` (admin keys only) for every tenant.
        #[arg(long)]
        tenant: String,
        /// agent, operator or admin.
        #[arg(long)]
        role: String,
        /// A label to recognise the key by in `keys list`.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// List every key with its tenant, role and state; never a secret.
    List,
    /// Stop a key from working; servers refuse it from their next call on.
    Revoke {
        /// The key's id, as `keys list` shows it.
        id: String,
    },
}

type Outcome = Result<(), Box<dyn std::error::Error>>;

/// Runs one `keys` subcommand.
pub async fn keys(args: KeysArgs) -> Outcome {
    let url = args
        .database
        .ok_or("pass --database (or CHECKPOINTD_DATABASE): the database the server uses")?;
    let keys = database::open(&url, &super::operator_store_options()?)
        .await?
        .keys;
    match args.command {
        KeysCommand::Create { tenant, role, name } => {
            let role: Role = role.parse()?;
            let tenant = match tenant.as_str() {
                "*" => TenantScope::All,
                name => TenantScope::One(Tenant::parse(name)?),
            };
            check_binding(&tenant, role)?;
            if !name.is_empty() {
                check_label("name", &name)?;
            }
            let fresh = NewApiKey::generate()?;
            let key = ApiKey {
                id: fresh.id,
                secret_hash: fresh.secret_hash,
                tenant,
                role,
                name,
                created_at: SystemTime::now(),
                revoked_at: None,
            };
            keys.create_key(&key).await?;
            if args.json {
                let mut view = view(&key);
                view["key"] = json!(fresh.token);
                println!("{view}");
            } else {
                println!("{}", fresh.token);
                eprintln!(
                    "created key {} ({} in {}); it is shown only now: store it safely",
                    key.id,
                    key.role,
                    scope_text(&key.tenant)
                );
            }
        }
        KeysCommand::List => {
            let listed = keys.list_keys().await?;
            if args.json {
                for key in &listed {
                    println!("{}", view(key));
                }
            } else {
                println!(
                    "{:<16}  {:<8}  {:<20}  {:<8}  NAME",
                    "ID", "ROLE", "TENANT", "STATE"
                );
                for key in &listed {
                    let state = if key.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    };
                    println!(
                        "{:<16}  {:<8}  {:<20}  {:<8}  {}",
                        key.id,
                        key.role,
                        scope_text(&key.tenant),
                        state,
                        key.name
                    );
                }
            }
        }
        KeysCommand::Revoke { id } => {
            if !keys.revoke_key(&id, SystemTime::now()).await? {
                return Err(format!("no key {id:?}").into());
            }
            println!("revoked key {id}");
        }
    }
    Ok(())
}

fn scope_text(scope: &TenantScope) -> &str {
    match scope {
        TenantScope::One(tenant) => tenant.as_str(),
        TenantScope::All => "*",
    }
}

/// A key as JSON: never its secret or hash.
fn view(key: &ApiKey) -> serde_json::Value {
    let seconds = |time: SystemTime| checkpointd::wire::timestamp(time).seconds;
    json!({
        "id": key.id,
        "role": key.role.as_str(),
        "tenant": scope_text(&key.tenant),
        "name": key.name,
        "created_at": seconds(key.created_at),
        "revoked_at": key.revoked_at.map(seconds),
    })
}
