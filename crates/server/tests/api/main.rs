//! Black-box tests: a real server on port 0, a real gRPC client, a fresh database per test.

mod support;

mod bad_input;
mod bad_input_strings;
mod cache;
mod cache_processes;
mod chaos;
mod checksum_vectors;
mod connections;
mod corruption;
mod durability;
mod edge_fuzz;
mod failure_logs;
mod fencing;
mod health;
mod health_command;
mod hitl;
mod intents;
mod journal_repair;
mod memory_limits;
mod messages;
mod operator_cli;
mod operator_path;
mod queue;
mod recovery;
mod retention;
mod retention_durable;
mod roundtrip;
mod runner;
mod runner_in_process;
mod scrub;
mod startup;
mod telemetry;
mod tool_journal;
