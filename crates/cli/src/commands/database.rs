//! `checkpointd db distribute`: distributes a Postgres schema by tenant on Citus, straight on
//! the database like `keys` and `prune`; an operator's one-time act after the first migration
//! (docs/deploy.md, "Distributing by tenant on Citus").

use clap::{Args, Subcommand};

use checkpointd_postgres::PostgresStore;
use checkpointd_postgres::placement::distribute_statements;
use checkpointd_storage::store::StoreOptions;

/// `checkpointd db`
#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Migrate the schema on a Citus coordinator, check it against the declared placement, and
    /// distribute its tables by tenant (colocated) and its reference tables; tables already
    /// distributed are skipped. `--print` only prints the statements, touching no database.
    Distribute {
        /// The coordinator: a postgres:// URL or key=value string (its search_path picks the
        /// schema).
        #[arg(long, env = "CHECKPOINTD_DATABASE", hide_env_values = true)]
        database: Option<String>,
        /// Print the statements, one per line, and connect to nothing.
        #[arg(long)]
        print: bool,
    },
}

type Outcome = Result<(), Box<dyn std::error::Error>>;

/// Runs one `db` subcommand.
pub async fn db(args: DbArgs) -> Outcome {
    let DbCommand::Distribute { database, print } = args.command;
    if print {
        for statement in distribute_statements() {
            println!("{statement}");
        }
        return Ok(());
    }
    let url = database.ok_or("pass --database (or CHECKPOINTD_DATABASE): the Citus coordinator")?;
    if url.starts_with("sqlite:") {
        return Err("distributing needs a Postgres database (a Citus coordinator)".into());
    }
    let store = PostgresStore::connect(
        &url,
        &StoreOptions {
            pool_size: 1,
            ..StoreOptions::default()
        },
    )
    .await?;
    let ran = store.distribute().await?;
    for statement in &ran {
        println!("{statement}");
    }
    println!(
        "distributed {} table(s); {} were already",
        ran.len(),
        distribute_statements().len() - ran.len()
    );
    Ok(())
}
