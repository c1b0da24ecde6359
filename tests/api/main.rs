//! Black-box tests: a real server on port 0, a real gRPC client, a fresh database per test.

mod support;

mod bad_input;
mod checksum_vectors;
mod corruption;
mod durability;
mod fencing;
mod health;
mod messages;
mod operator_cli;
mod queue;
mod recovery;
mod roundtrip;
mod runner;
mod telemetry;
mod tool_journal;
