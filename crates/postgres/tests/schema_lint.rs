//! The schema lint for distributing by tenant (Citus), on plain Postgres: the migrated
//! catalogue matches the declared placement (`checkpointd_postgres::placement`), and every
//! locking statement in this crate's SQL is scoped to one tenant. Each rule is also shown to
//! fail, on a deliberately bad table or statement.

use checkpointd_postgres::PostgresStore;
use checkpointd_postgres::placement::{self, DISTRIBUTED, REFERENCE};
use checkpointd_storage::store::StoreOptions;
use checkpointd_testkit::PgSchema;

async fn migrated(schema: &PgSchema) -> PostgresStore {
    PostgresStore::connect(
        &schema.url(),
        &StoreOptions {
            pool_size: 2,
            ..StoreOptions::default()
        },
    )
    .await
    .unwrap_or_else(|error| panic!("connect to {}: {error}", schema.url()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migrated_schema_matches_the_declared_placement() {
    let schema = PgSchema::create().await;
    let store = migrated(&schema).await;
    assert_eq!(
        store.placement_violations().await.unwrap(),
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_table_whose_key_lacks_tenant_or_an_undeclared_table_fails_the_lint() {
    let schema = PgSchema::create().await;
    let store = migrated(&schema).await;
    schema
        .execute(
            "CREATE TABLE lint_bad (tenant text NOT NULL, id text PRIMARY KEY);
             CREATE TABLE lint_stray (id text PRIMARY KEY);
             ALTER TABLE webhook_endpoints ADD CONSTRAINT lint_bad_url UNIQUE (url)",
        )
        .await;
    let found = store.placement_violations().await.unwrap();
    let expected = [
        "table lint_bad has no declared place",
        "table lint_stray has no declared place",
        "key lint_bad_pkey of tenant table lint_bad lacks tenant",
        "key lint_bad_url of tenant table webhook_endpoints lacks tenant",
    ];
    for violation in expected {
        assert!(
            found.iter().any(|line| line.starts_with(violation)),
            "{violation:?} not in {found:?}"
        );
    }
    assert_eq!(found.len(), expected.len(), "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributing_without_citus_is_refused_and_changes_nothing() {
    let schema = PgSchema::create().await;
    let store = migrated(&schema).await;
    let refused = store.distribute().await.unwrap_err().to_string();
    assert!(refused.contains("no citus extension"), "{refused}");
}

#[test]
fn the_distribute_statements_cover_the_linted_lists() {
    let statements = placement::distribute_statements();
    for table in DISTRIBUTED {
        let wanted = format!("create_distributed_table('{table}', 'tenant'");
        assert!(statements.iter().any(|s| s.contains(&wanted)), "{table}");
    }
    for table in REFERENCE {
        let wanted = format!("create_reference_table('{table}')");
        assert!(statements.iter().any(|s| s.contains(&wanted)), "{table}");
    }
}

#[test]
fn every_locking_statement_in_the_crate_is_scoped_to_one_tenant() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut statements = Vec::new();
    for file in files(&root.join("src"), "rs") {
        let text = std::fs::read_to_string(&file).unwrap();
        let found = rust_strings(&text);
        statements.extend(found.into_iter().map(|s| (file.clone(), s)));
    }
    for file in files(&root.join("migrations"), "sql") {
        let text = std::fs::read_to_string(&file).unwrap();
        let found = sql_statements(&text);
        statements.extend(found.into_iter().map(|s| (file.clone(), s)));
    }
    let locking: Vec<_> = statements.iter().filter(|(_, s)| locks_rows(s)).collect();
    // The claim, a transition's lock, the reaper's and the sender's, and the run locks.
    assert!(locking.len() >= 5, "the scan found too few: {locking:?}");
    let unscoped: Vec<_> = locking
        .iter()
        .filter(|(_, s)| !scoped_to_a_tenant(s))
        .collect();
    assert!(
        unscoped.is_empty(),
        "locking statements without a tenant filter: {unscoped:#?}"
    );
}

#[test]
fn a_locking_scan_over_every_tenant_fails_the_text_lint() {
    // The reaper's lock as it was before it worked one tenant at a time.
    let source = r#"const LOCK_REAPABLE: &str = concat!("SELECT tenant, ", task_columns!(),
        " FROM tasks WHERE state = 'running' AND lease_expires_at <= $1::timestamptz
          ORDER BY lease_expires_at, id LIMIT $2::bigint FOR UPDATE SKIP LOCKED");
        // FOR UPDATE in a comment is prose, not a statement
        const OK: &str = "SELECT 1 FROM runs WHERE tenant = $1 AND run_id = $2 FOR UPDATE";"#;
    let strings = rust_strings(source);
    let locking: Vec<&String> = strings.iter().filter(|s| locks_rows(s)).collect();
    assert_eq!(locking.len(), 2, "{strings:?}");
    assert!(!scoped_to_a_tenant(locking[0]));
    assert!(scoped_to_a_tenant(locking[1]));
    let sql = "-- FOR UPDATE here is a comment\nSELECT * FROM tasks FOR UPDATE;";
    let statements = sql_statements(sql);
    assert!(locks_rows(&statements[0]) && !scoped_to_a_tenant(&statements[0]));
}

/// Whether a statement takes row locks (any row-locking clause, `SKIP LOCKED` included).
fn locks_rows(statement: &str) -> bool {
    let normal = normalize(statement);
    [
        "FOR UPDATE",
        "FOR NO KEY UPDATE",
        "FOR SHARE",
        "FOR KEY SHARE",
    ]
    .iter()
    .any(|clause| normal.contains(clause))
}

/// Whether the statement filters on a tenant parameter (`tenant = $n`, with any table alias).
fn scoped_to_a_tenant(statement: &str) -> bool {
    normalize(statement).contains("TENANT = $")
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase()
}

fn files(dir: &std::path::Path, extension: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path, extension));
        } else if path.extension().is_some_and(|e| e == extension) {
            found.push(path);
        }
    }
    found
}

/// SQL statements of a migration, with `--` comments removed.
fn sql_statements(text: &str) -> Vec<String> {
    let code: Vec<&str> = text
        .lines()
        .map(|line| line.split("--").next().unwrap_or_default())
        .collect();
    code.join("\n").split(';').map(str::to_owned).collect()
}

/// The contents of every string literal in Rust source, comments skipped: a small lexer that
/// knows line and block comments, character literals, escapes and raw strings.
fn rust_strings(source: &str) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let (mut found, mut i) = (Vec::new(), 0);
    while i < chars.len() {
        match (chars[i], chars.get(i + 1).copied()) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            ('r', Some('"' | '#')) if i == 0 || !chars[i - 1].is_alphanumeric() => {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                let start = i + 2 + hashes;
                let close: String = std::iter::once('"')
                    .chain("#".repeat(hashes).chars())
                    .collect();
                let rest: String = chars[start.min(chars.len())..].iter().collect();
                let end = rest.find(&close).unwrap_or(rest.len());
                found.push(rest[..end].to_owned());
                i = start + rest[..end].chars().count() + close.chars().count();
            }
            ('\'', next) => {
                // A character literal ('"', '\'', '\u{22}'), or a lifetime (no closing quote).
                i += if next == Some('\\') {
                    2 + chars[i + 2..]
                        .iter()
                        .skip(1)
                        .take_while(|c| **c != '\'')
                        .count()
                        + 2
                } else if chars.get(i + 2) == Some(&'\'') {
                    3
                } else {
                    1
                };
            }
            ('"', _) => {
                let mut text = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if let Some(c) = chars.get(i) {
                        text.push(*c);
                    }
                    i += 1;
                }
                found.push(text);
                i += 1;
            }
            _ => i += 1,
        }
    }
    found
}
