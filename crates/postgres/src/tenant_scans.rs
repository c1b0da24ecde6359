//! The scans that serve every tenant (the queue's reaper, the webhook sender) lock rows one
//! tenant at a time: a plain read picks the due rows of all tenants, earliest first, and each
//! tenant's picks are then locked by a statement scoped by `tenant = $1`.
//!
//! Why: with the tables distributed by tenant on Citus (docs/deploy.md), a `FOR UPDATE` is
//! accepted only when it is routed to one shard; a locking scan over every tenant is refused.
//! On one Postgres the split costs a round trip per tenant with due work, and keeps each lock
//! (and, for the reaper, each transaction) inside one tenant.

use tokio_postgres::Row;

use crate::error::db;
use checkpointd_core::domain::Tenant;
use checkpointd_core::error::Result;

/// The sender's pick, a plain read without locks: up to `$2` pending deliveries of any tenant
/// due at `$1`, earliest due first (the partial index of pending deliveries by due time).
pub(crate) const DUE_DELIVERIES: &str = "SELECT tenant, event_id, endpoint_id
       FROM webhook_deliveries
      WHERE state = 'pending' AND next_attempt_at <= $1
      ORDER BY next_attempt_at, event_id, endpoint_id
      LIMIT $2";

/// The sender's take, within tenant `$3`: those of the picked deliveries (`$4` event ids with
/// `$5` endpoint ids, pairwise) still pending and due at `$1`, locked, skipping rows another
/// sender holds, leased until `$2`, and returned with their endpoint and event. One statement,
/// so the lease is set as they are taken.
pub(crate) const TAKE_DUE: &str = "WITH taken AS (
         UPDATE webhook_deliveries SET next_attempt_at = $2
          WHERE tenant = $3 AND (event_id, endpoint_id) IN (
                SELECT event_id, endpoint_id FROM webhook_deliveries
                 WHERE tenant = $3
                   AND (event_id, endpoint_id) IN (SELECT * FROM unnest($4::text[], $5::text[]))
                   AND state = 'pending' AND next_attempt_at <= $1
                 FOR UPDATE SKIP LOCKED)
          RETURNING *)
     SELECT taken.tenant, taken.event_id, taken.endpoint_id, taken.type,
            taken.state, taken.attempts, taken.next_attempt_at, taken.last_error,
            taken.delivered_at, taken.created_at,
            ep.url, ep.description, ep.salt, ep.created_at AS endpoint_created_at,
            ev.seq, ev.task_id, ev.run_id, ev.payload,
            ev.created_at AS event_created_at
       FROM taken
       JOIN webhook_endpoints ep ON ep.tenant = $3 AND ep.id = taken.endpoint_id
       JOIN notification_events ev ON ev.tenant = $3 AND ev.id = taken.event_id
      ORDER BY taken.event_id, taken.endpoint_id";

/// Groups picked rows by their tenant, tenants in the order of their first (earliest) pick and
/// each tenant's picks in pick order.
pub(crate) fn group_by_tenant<T>(
    picked: impl IntoIterator<Item = (Tenant, T)>,
) -> Vec<(Tenant, Vec<T>)> {
    let mut groups: Vec<(Tenant, Vec<T>)> = Vec::new();
    for (tenant, item) in picked {
        match groups.iter_mut().find(|(known, _)| *known == tenant) {
            Some((_, items)) => items.push(item),
            None => groups.push((tenant, vec![item])),
        }
    }
    groups
}

/// Rows of `tenant` and `id` (the reaper's pick), grouped by tenant.
pub(crate) fn by_tenant(rows: &[Row]) -> Result<Vec<(Tenant, Vec<String>)>> {
    let picked = rows
        .iter()
        .map(|row| {
            let tenant = Tenant::parse(row.try_get::<_, &str>("tenant").map_err(db)?)?;
            Ok((tenant, row.try_get::<_, String>("id").map_err(db)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(group_by_tenant(picked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_order_of_each_tenants_first_pick() {
        let t = |name: &str| Tenant::parse(name).unwrap();
        let groups = group_by_tenant([(t("b"), 1), (t("a"), 2), (t("b"), 3)]);
        assert_eq!(groups, vec![(t("b"), vec![1, 3]), (t("a"), vec![2])]);
    }
}
