//! SQLite store, the embedded default.

pub struct SqliteStore;
