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
                print!("{}", key_table(&listed));
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

/// The keys as a text table, each column as wide as its widest cell. The cells are made
/// strings first: `Role`'s `Display` writes its name without honouring a width, so padding it
/// in the format string put the columns after it out of line.
fn key_table(keys: &[ApiKey]) -> String {
    let mut rows = vec![["ID", "ROLE", "TENANT", "STATE", "NAME"].map(str::to_owned)];
    for key in keys {
        let state = if key.revoked_at.is_some() {
            "revoked"
        } else {
            "active"
        };
        rows.push([
            key.id.clone(),
            key.role.as_str().to_owned(),
            scope_text(&key.tenant).to_owned(),
            state.to_owned(),
            key.name.clone(),
        ]);
    }
    let mut widths = [0; 5];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (column, (cell, width)) in row.iter().zip(widths).enumerate() {
            if column > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', width - cell.chars().count()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, role: Role, tenant: &str, name: &str, revoked: bool) -> ApiKey {
        ApiKey {
            id: id.into(),
            secret_hash: Vec::new(),
            tenant: match tenant {
                "*" => TenantScope::All,
                name => TenantScope::One(Tenant::parse(name).unwrap()),
            },
            role,
            name: name.into(),
            created_at: SystemTime::UNIX_EPOCH,
            revoked_at: revoked.then_some(SystemTime::UNIX_EPOCH),
        }
    }

    /// Where each column starts on a line, found from the header's column names.
    fn starts(header: &str) -> Vec<usize> {
        ["ID", "ROLE", "TENANT", "STATE", "NAME"]
            .iter()
            .map(|name| header.find(name).unwrap())
            .collect()
    }

    #[test]
    fn every_column_of_keys_list_lines_up_whatever_the_lengths_of_its_cells() {
        let keys = [
            key("2b94c0ffee", Role::Agent, "acme", "worker", false),
            key(
                "a-much-longer-key-id-than-sixteen",
                Role::Operator,
                "a-tenant-name-longer-than-twenty-chars",
                "on-call operator",
                true,
            ),
            key("k3", Role::Admin, "*", "", false),
        ];
        let table = key_table(&keys);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        let columns = starts(lines[0]);
        for (line, key) in lines[1..].iter().zip(&keys) {
            let cells = [
                key.id.as_str(),
                key.role.as_str(),
                scope_text(&key.tenant),
                if key.revoked_at.is_some() {
                    "revoked"
                } else {
                    "active"
                },
                key.name.as_str(),
            ];
            for (start, cell) in columns.iter().zip(cells) {
                // A trailing empty cell is trimmed off its line, so it reads as "".
                assert_eq!(
                    line.get(*start..*start + cell.len()).unwrap_or(""),
                    cell,
                    "a cell out of its column:\n{table}"
                );
                assert!(
                    *start == 0 || cell.is_empty() || line.as_bytes()[start - 1] == b' ',
                    "columns run together:\n{table}"
                );
            }
        }
    }
}
