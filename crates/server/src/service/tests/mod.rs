//! Engine behaviours over every backend: recovery past a damaged checkpoint, reports of what
//! reads pass over, refusals that change nothing, and what only SQL can damage in a SQLite file.

mod passed_over;
mod recovery;
mod refusals;
mod sqlite_damaged_rows;

/// One test per backend for each engine behaviour.
macro_rules! engine_behaviours {
    ($($module:ident: $backend:ty),* $(,)?) => {
        $(
            mod $module {
                engine_behaviours!(@tests $backend;
                    recovery::resume_skips_a_damaged_checkpoint_and_rewinds_to_the_one_before,
                    passed_over::every_read_reports_quarantined_checkpoints_until_they_are_repaired,
                    passed_over::a_newer_valid_save_above_quarantined_checkpoints_makes_reads_quiet,
                    passed_over::a_resume_from_scratch_reports_every_quarantined_checkpoint,
                    refusals::every_refusal_leaves_the_run_as_it_was,
                    refusals::a_refused_resume_retried_leaves_the_writer_its_epoch,
                );
            }
        )*
    };
    (@tests $backend:ty; $($group:ident :: $behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let backend =
                    <$backend as checkpointd_storage::store::tests::TestBackend>::create().await;
                crate::service::tests::$group::$behaviour(&backend).await;
            }
        )*
    };
}

engine_behaviours!(
    memory: checkpointd_storage::store::tests::MemoryBackend,
    sqlite: checkpointd_sqlite::testing::SqliteBackend,
    postgres: checkpointd_postgres::testing::PostgresBackend,
    instrumented_memory: crate::instrumented::store_tests::Instrumented<checkpointd_storage::store::tests::MemoryBackend>,
    cached_sqlite: crate::cache::tests::Cached<checkpointd_sqlite::testing::SqliteBackend, true>,
);
