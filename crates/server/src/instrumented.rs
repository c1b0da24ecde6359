//! Wrappers around the storage contracts that give each operation a span and a latency metric,
//! composed around any backend in the composition root.

mod queue;
mod store;

pub use queue::InstrumentedQueue;
pub use store::InstrumentedStore;
#[cfg(test)]
pub(crate) use store::tests as store_tests;
