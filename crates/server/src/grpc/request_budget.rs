//! The server-wide request budget, shared fairly: a call takes its declared size first from its
//! connection's share, then from its tenant's share, and only then from the server's budget.
//! In that order, a call waiting for one part holds only the parts that are its own or narrower:
//! one waiting on its connection holds nothing another connection of its tenant needs.
//!
//! A FIFO semaphore alone is a lock: one tenant that declares large requests and never finishes
//! their bodies holds the whole budget, and every other tenant waits behind it. With shares, a
//! tenant can hold at most `--max-tenant-request-bytes` of the budget and one connection at most
//! `--max-connection-request-bytes`; a call that finds its own share full waits on that share,
//! never in the server's queue, so it delays no one but its tenant (or its connection). The
//! per-tenant and per-connection entries live only while a call holds or waits for them, so a
//! flood of tenant ids or connections leaves nothing behind.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::auth::CallContext;
use super::connection::{ConnectionActivity, ConnectionInfo};
use checkpointd_core::domain::Tenant;

/// The sizes of the budget and of its shares, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetSizes {
    /// What all calls together may hold.
    pub server: usize,
    /// What the calls of one tenant may hold.
    pub tenant: usize,
    /// What the calls on one connection may hold.
    pub connection: usize,
}

/// Which part of the budget a call found full for longer than it may wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    Tenant,
    Connection,
    Server,
}

impl Full {
    /// The `reason` attribute of the refusals metric.
    pub fn label(self) -> &'static str {
        match self {
            Self::Tenant => "tenant",
            Self::Connection => "connection",
            Self::Server => "server",
        }
    }
}

/// Who a call is, for its shares: its tenant (none for health and reflection, which take no
/// budget at all) and its connection, when the accept loop told us which.
#[derive(Clone)]
pub struct Caller<C> {
    pub tenant: Option<Tenant>,
    pub connection: Option<C>,
}

/// A client connection, told apart by its activity record, which the accept loop makes once per
/// connection; holding it keeps the address unique while the connection's share is in use.
#[derive(Clone, Debug)]
pub struct ConnectionId(Arc<ConnectionActivity>);

impl PartialEq for ConnectionId {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ConnectionId {}

impl std::hash::Hash for ConnectionId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0), state);
    }
}

impl Caller<ConnectionId> {
    /// The caller a request's extensions name: the auth layer's tenant (the credential's, or
    /// `x-tenant-id` with auth off) and the accept loop's connection.
    pub fn of(extensions: &tonic::codegen::http::Extensions) -> Self {
        Self {
            tenant: extensions
                .get::<CallContext>()
                .map(|context| context.tenant.clone()),
            connection: extensions
                .get::<ConnectionInfo>()
                .map(|info| ConnectionId(info.activity.clone())),
        }
    }
}

/// See the module documentation. `C` identifies a connection.
#[derive(Debug)]
pub struct FairBudget<C: Eq + Hash + Clone> {
    sizes: BudgetSizes,
    server: Arc<Semaphore>,
    tenants: Arc<Shares<Tenant>>,
    connections: Arc<Shares<C>>,
}

impl<C: Eq + Hash + Clone + Send + 'static> FairBudget<C> {
    pub fn new(sizes: BudgetSizes) -> Self {
        let clamp = |bytes: usize| bytes.min(Semaphore::MAX_PERMITS);
        let sizes = BudgetSizes {
            server: clamp(sizes.server),
            tenant: clamp(sizes.tenant.min(sizes.server)),
            connection: clamp(sizes.connection.min(sizes.server)),
        };
        Self {
            sizes,
            server: Arc::new(Semaphore::new(sizes.server)),
            tenants: Arc::new(Shares::new(sizes.tenant)),
            connections: Arc::new(Shares::new(sizes.connection)),
        }
    }

    pub fn sizes(&self) -> BudgetSizes {
        self.sizes
    }

    /// Takes `bytes` for `caller` from its connection's share, its tenant's share and the
    /// server's budget, in that order, waiting until `deadline` at most. What is taken is given
    /// back when the returned value drops.
    pub async fn take(
        &self,
        caller: Caller<C>,
        bytes: usize,
        deadline: Instant,
    ) -> Result<Held<C>, Full> {
        // Each part is taken whole or not at all, and a part never grants more than its size,
        // or a call larger than it would wait forever. A call larger than a share it takes from
        // takes that whole share and no more of the rest: served alone within its tenant (or
        // connection), it still never holds more of the server than its tenant may.
        let mut bytes = bytes.min(self.sizes.server);
        if caller.connection.is_some() {
            bytes = bytes.min(self.sizes.connection);
        }
        if caller.tenant.is_some() {
            bytes = bytes.min(self.sizes.tenant);
        }
        let mut held = Held {
            bytes,
            server: None,
            connection: None,
            tenant: None,
        };
        if let Some(connection) = caller.connection {
            let ticket = self.connections.join(connection);
            held.connection = Some(ticket.take(bytes, deadline).await.ok_or(Full::Connection)?);
        }
        if let Some(tenant) = caller.tenant {
            let ticket = self.tenants.join(tenant);
            held.tenant = Some(ticket.take(bytes, deadline).await.ok_or(Full::Tenant)?);
        }
        let permit = acquire(&self.server, held.bytes, deadline)
            .await
            .ok_or(Full::Server)?;
        held.server = Some(permit);
        Ok(held)
    }

    /// Tenants and connections with an entry: those with a call holding or waiting for bytes.
    #[cfg(test)]
    pub fn entries(&self) -> (usize, usize) {
        (self.tenants.len(), self.connections.len())
    }
}

/// What one call holds; everything goes back when it drops, the server's part first.
#[derive(Debug)]
pub struct Held<C: Eq + Hash + Clone> {
    bytes: usize,
    server: Option<OwnedSemaphorePermit>,
    connection: Option<Taken<C>>,
    tenant: Option<Taken<Tenant>>,
}

impl<C: Eq + Hash + Clone> Held<C> {
    /// The bytes taken from the server's budget.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Gives back everything above `bytes` in every part: a call that reserved room for the
    /// most it could need keeps only what it turned out to hold.
    pub fn shrink(&mut self, bytes: usize) {
        let keep = |permit: &mut OwnedSemaphorePermit| {
            let surplus = permit.num_permits().saturating_sub(bytes);
            drop(permit.split(surplus));
        };
        if let Some(permit) = self.server.as_mut() {
            keep(permit);
        }
        if let Some(taken) = self.connection.as_mut() {
            keep(&mut taken.permit);
        }
        if let Some(taken) = self.tenant.as_mut() {
            keep(&mut taken.permit);
        }
        self.bytes = self.bytes.min(bytes);
    }
}

async fn acquire(
    semaphore: &Arc<Semaphore>,
    bytes: usize,
    deadline: Instant,
) -> Option<OwnedSemaphorePermit> {
    let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
    match tokio::time::timeout_at(deadline, semaphore.clone().acquire_many_owned(bytes)).await {
        Ok(Ok(permit)) => Some(permit),
        // The semaphores are never closed.
        Ok(Err(_)) | Err(_) => None,
    }
}

/// The shares of one kind (tenants or connections), an entry per key in use.
#[derive(Debug)]
struct Shares<K: Eq + Hash + Clone> {
    size: usize,
    entries: Mutex<HashMap<K, Entry>>,
}

#[derive(Debug)]
struct Entry {
    semaphore: Arc<Semaphore>,
    /// Calls holding or waiting for this share; the entry goes when none is left.
    users: usize,
}

impl<K: Eq + Hash + Clone> Shares<K> {
    fn new(size: usize) -> Self {
        Self {
            size,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Counts a call as a user of `key`'s share until the ticket (or what it takes) drops.
    fn join(self: &Arc<Self>, key: K) -> Ticket<K> {
        let semaphore = {
            let mut entries = self.lock();
            let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
                semaphore: Arc::new(Semaphore::new(self.size)),
                users: 0,
            });
            entry.users += 1;
            entry.semaphore.clone()
        };
        Ticket {
            shares: self.clone(),
            key,
            semaphore,
        }
    }
}

/// A call's membership of one share; leaving removes the entry when it was the last user.
#[derive(Debug)]
struct Ticket<K: Eq + Hash + Clone> {
    shares: Arc<Shares<K>>,
    key: K,
    semaphore: Arc<Semaphore>,
}

impl<K: Eq + Hash + Clone> Ticket<K> {
    async fn take(self, bytes: usize, deadline: Instant) -> Option<Taken<K>> {
        let bytes = bytes.min(self.shares.size);
        let permit = acquire(&self.semaphore, bytes, deadline).await?;
        Some(Taken {
            permit,
            _ticket: self,
        })
    }
}

impl<K: Eq + Hash + Clone> Drop for Ticket<K> {
    fn drop(&mut self) {
        let mut entries = self.shares.lock();
        if let Some(entry) = entries.get_mut(&self.key) {
            entry.users -= 1;
            if entry.users == 0 {
                entries.remove(&self.key);
            }
        }
    }
}

/// Bytes taken from one share: the permit goes back before the ticket leaves (field order).
#[derive(Debug)]
struct Taken<K: Eq + Hash + Clone> {
    permit: OwnedSemaphorePermit,
    _ticket: Ticket<K>,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MIB: usize = 1 << 20;

    fn budget() -> FairBudget<u32> {
        FairBudget::new(BudgetSizes {
            server: 64 * MIB,
            tenant: 32 * MIB,
            connection: 16 * MIB,
        })
    }

    fn caller(tenant: &str, connection: u32) -> Caller<u32> {
        Caller {
            tenant: Some(Tenant::parse(tenant).unwrap()),
            connection: Some(connection),
        }
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(50)
    }

    #[tokio::test]
    async fn a_tenant_holds_at_most_its_share_and_others_still_find_room() {
        let budget = budget();
        let first = budget.take(caller("a", 1), 16 * MIB, soon()).await.unwrap();
        let second = budget.take(caller("a", 2), 16 * MIB, soon()).await.unwrap();
        // Its third large request waits on its own share, and is refused from it.
        let third = budget.take(caller("a", 3), 16 * MIB, soon()).await;
        assert_eq!(third.unwrap_err(), Full::Tenant);
        // Another tenant finds half the budget free.
        let other = budget.take(caller("b", 4), 16 * MIB, soon()).await.unwrap();
        let other_too = budget.take(caller("b", 5), 16 * MIB, soon()).await.unwrap();
        drop((first, second, other, other_too));
        assert_eq!(budget.entries(), (0, 0));
    }

    #[tokio::test]
    async fn a_call_waiting_on_its_connection_holds_nothing_its_tenant_needs() {
        let budget = Arc::new(budget());
        let held = budget.take(caller("a", 1), 16 * MIB, soon()).await.unwrap();
        let waiter = budget.clone();
        let waiting = tokio::spawn(async move {
            let long = Instant::now() + Duration::from_secs(5);
            waiter.take(caller("a", 1), 16 * MIB, long).await.is_ok()
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        // The second call of connection 1 waits on its connection; the tenant's other
        // connections still find the rest of its share.
        let other = budget.take(caller("a", 2), 16 * MIB, soon()).await;
        assert!(other.is_ok(), "{:?}", other.err());
        drop(held);
        assert!(
            waiting.await.unwrap(),
            "and the waiting call is served once room frees"
        );
    }

    #[tokio::test]
    async fn one_connection_holds_at_most_its_share_whatever_tenants_it_names() {
        let budget = budget();
        let held = budget.take(caller("a", 1), 10 * MIB, soon()).await.unwrap();
        let refused = budget.take(caller("b", 1), 10 * MIB, soon()).await;
        assert_eq!(refused.unwrap_err(), Full::Connection);
        // Small calls on the same connection still fit beside the large one.
        let small = budget.take(caller("c", 1), MIB, soon()).await.unwrap();
        drop((held, small));
        assert_eq!(budget.entries(), (0, 0));
    }

    #[tokio::test]
    async fn a_tenant_waiting_on_its_share_does_not_queue_in_front_of_others() {
        let budget = Arc::new(budget());
        let a1 = budget.take(caller("a", 1), 16 * MIB, soon()).await.unwrap();
        let a2 = budget.take(caller("a", 2), 16 * MIB, soon()).await.unwrap();
        let waiting = {
            let budget = budget.clone();
            let deadline = Instant::now() + Duration::from_secs(60);
            tokio::spawn(async move { budget.take(caller("a", 3), 16 * MIB, deadline).await })
        };
        tokio::task::yield_now().await;
        // Tenant a's waiter is queued on a's share, so b takes the rest of the server's
        // budget at once.
        let b = budget.take(caller("b", 4), 16 * MIB, soon()).await.unwrap();
        let b2 = budget.take(caller("b", 5), 16 * MIB, soon()).await.unwrap();
        assert!(!waiting.is_finished());
        // Once a gives some of its share back, its waiter goes on.
        drop(a1);
        let third = waiting.await.unwrap().unwrap();
        assert_eq!(third.bytes(), 16 * MIB);
        drop((a2, b, b2, third));
        assert_eq!(budget.entries(), (0, 0));
    }

    #[tokio::test]
    async fn a_refused_call_leaves_no_entry_behind() {
        let budget = budget();
        let held = budget.take(caller("a", 1), 32 * MIB, soon()).await;
        // 32 MiB is over the connection's share: that share grants it whole (a call larger
        // than a share would otherwise wait forever), and nothing else fits beside it.
        let held = held.unwrap();
        for n in 0..1000 {
            let tenant = format!("t{n}");
            let refused = budget.take(caller(&tenant, 1), MIB, Instant::now()).await;
            assert_eq!(refused.unwrap_err(), Full::Connection);
        }
        assert_eq!(budget.entries(), (1, 1));
        drop(held);
        assert_eq!(budget.entries(), (0, 0));
    }

    #[tokio::test]
    async fn calls_without_a_tenant_or_connection_take_only_the_servers_budget() {
        let budget = budget();
        let anonymous = Caller {
            tenant: None,
            connection: None,
        };
        let held = budget.take(anonymous, 64 * MIB, soon()).await.unwrap();
        let refused = budget.take(caller("a", 1), MIB, soon()).await;
        assert_eq!(refused.unwrap_err(), Full::Server);
        drop(held);
        assert_eq!(budget.entries(), (0, 0));
    }
}
