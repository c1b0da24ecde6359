//! The schema versions every SQL backend applies, named once. Each database crate keeps one file
//! per version in its own `migrations/` folder, in its own dialect, and embeds them through
//! [`schema_versions!`](crate::schema_versions), so the databases cannot drift apart by a
//! version: a file missing from either fails its build. A released version's file is never
//! edited; a change is a new version here and a new file in each database crate.

/// Calls `$embed!` with every schema version and its file name (without `.sql`), oldest first.
#[macro_export]
macro_rules! schema_versions {
    ($embed:ident) => {
        $embed! {
            1 => "0001_initial",
            2 => "0002_tasks",
            3 => "0003_retention",
            4 => "0004_tool_intents",
            5 => "0005_auto_resume_hitl",
            6 => "0006_api_keys",
            7 => "0007_labels_and_run_listing",
            8 => "0008_journal_by_step",
            9 => "0009_notifications",
            10 => "0010_passed_over_and_call_arguments",
            11 => "0011_tenant_keys",
        }
    };
}
