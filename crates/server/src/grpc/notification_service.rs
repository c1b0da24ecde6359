//! The `NotificationService` adapter: webhook endpoints and deliveries (an admin's), and the
//! watch streams (an agent's), each scoped to the caller's tenant.

use std::pin::Pin;

use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use super::convert::summary_to_wire;
use super::status::to_status;
use super::tenant::{run_key, tenant_of};
use super::watch;
use crate::notify::Notifications;
use crate::proto;
use crate::service::Engine;
use crate::wire::timestamp;
use checkpointd_core::domain::Step;
use checkpointd_core::error::{Error, Result};
use checkpointd_core::notify::{Delivery, DeliveryStatus, Event, WebhookEndpoint};
use checkpointd_storage::notifications::DeliveryFilter;

/// The answer of a watch: items until the client cancels.
pub type WatchStream<T> = Pin<Box<dyn Stream<Item = std::result::Result<T, Status>> + Send>>;

/// Serves `checkpoint.v1.NotificationService`.
#[derive(Clone)]
pub struct NotificationApi {
    notifications: Notifications,
    engine: Engine,
}

impl NotificationApi {
    pub fn new(notifications: Notifications, engine: Engine) -> Self {
        Self {
            notifications,
            engine,
        }
    }
}

fn endpoint_to_wire(endpoint: WebhookEndpoint) -> proto::WebhookEndpoint {
    proto::WebhookEndpoint {
        id: endpoint.id,
        url: endpoint.url,
        description: endpoint.description,
        created_at: Some(timestamp(endpoint.created_at)),
    }
}

fn status_to_wire(status: DeliveryStatus) -> proto::DeliveryStatus {
    match status {
        DeliveryStatus::Pending => proto::DeliveryStatus::Pending,
        DeliveryStatus::Failing => proto::DeliveryStatus::Failing,
        DeliveryStatus::Delivered => proto::DeliveryStatus::Delivered,
        DeliveryStatus::GivenUp => proto::DeliveryStatus::GivenUp,
    }
}

fn status_from_wire(raw: i32) -> Result<Option<DeliveryStatus>> {
    match proto::DeliveryStatus::try_from(raw) {
        Ok(proto::DeliveryStatus::Unspecified) => Ok(None),
        Ok(proto::DeliveryStatus::Pending) => Ok(Some(DeliveryStatus::Pending)),
        Ok(proto::DeliveryStatus::Failing) => Ok(Some(DeliveryStatus::Failing)),
        Ok(proto::DeliveryStatus::Delivered) => Ok(Some(DeliveryStatus::Delivered)),
        Ok(proto::DeliveryStatus::GivenUp) => Ok(Some(DeliveryStatus::GivenUp)),
        Err(_) => Err(Error::invalid(
            "status",
            format!("unknown delivery status {raw}"),
        )),
    }
}

fn delivery_to_wire(delivery: Delivery) -> proto::WebhookDelivery {
    let status = delivery.status();
    proto::WebhookDelivery {
        event_id: delivery.event_id,
        endpoint_id: delivery.endpoint_id,
        event_type: delivery.kind.as_str().to_owned(),
        status: status_to_wire(status).into(),
        attempts: delivery.attempts,
        next_attempt_at: matches!(status, DeliveryStatus::Pending | DeliveryStatus::Failing)
            .then(|| timestamp(delivery.next_attempt_at)),
        last_error: delivery.last_error.unwrap_or_default(),
        delivered_at: delivery.delivered_at.map(timestamp),
        created_at: Some(timestamp(delivery.created_at)),
    }
}

fn event_to_wire(event: Event) -> proto::WatchTasksResponse {
    proto::WatchTasksResponse {
        sequence: event.sequence,
        event_id: event.id,
        event_type: event.kind.as_str().to_owned(),
        task_id: event.task_id.unwrap_or_default(),
        run_id: event.run_id.unwrap_or_default(),
        payload: event.payload,
        created_at: Some(timestamp(event.created_at)),
    }
}

/// The endpoint id a request names: printable, bounded.
fn endpoint_id(raw: &str) -> Result<&str> {
    if raw.is_empty() || raw.len() > 256 || raw.chars().any(char::is_control) {
        return Err(Error::invalid(
            "id",
            "id must be an endpoint id as ListWebhookEndpoints shows it",
        ));
    }
    Ok(raw)
}

#[tonic::async_trait]
impl proto::notification_service_server::NotificationService for NotificationApi {
    async fn create_webhook_endpoint(
        &self,
        request: Request<proto::CreateWebhookEndpointRequest>,
    ) -> std::result::Result<Response<proto::CreateWebhookEndpointResponse>, Status> {
        let tenant = tenant_of(request.extensions()).map_err(to_status)?;
        let body = request.get_ref();
        let created = self
            .notifications
            .create_endpoint(&tenant, &body.url, &body.description)
            .await
            .map_err(to_status)?;
        tracing::info!(tenant = %tenant, endpoint_id = %created.endpoint.id, "webhook endpoint created");
        Ok(Response::new(proto::CreateWebhookEndpointResponse {
            endpoint: Some(endpoint_to_wire(created.endpoint)),
            secret: created.secret,
        }))
    }

    async fn list_webhook_endpoints(
        &self,
        request: Request<proto::ListWebhookEndpointsRequest>,
    ) -> std::result::Result<Response<proto::ListWebhookEndpointsResponse>, Status> {
        let tenant = tenant_of(request.extensions()).map_err(to_status)?;
        let endpoints = self
            .notifications
            .list_endpoints(&tenant)
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::ListWebhookEndpointsResponse {
            endpoints: endpoints.into_iter().map(endpoint_to_wire).collect(),
        }))
    }

    async fn delete_webhook_endpoint(
        &self,
        request: Request<proto::DeleteWebhookEndpointRequest>,
    ) -> std::result::Result<Response<proto::DeleteWebhookEndpointResponse>, Status> {
        let tenant = tenant_of(request.extensions()).map_err(to_status)?;
        let id = endpoint_id(&request.get_ref().id).map_err(to_status)?;
        self.notifications
            .delete_endpoint(&tenant, id)
            .await
            .map_err(to_status)?;
        tracing::info!(tenant = %tenant, endpoint_id = %id, "webhook endpoint deleted");
        Ok(Response::new(proto::DeleteWebhookEndpointResponse {}))
    }

    async fn list_webhook_deliveries(
        &self,
        request: Request<proto::ListWebhookDeliveriesRequest>,
    ) -> std::result::Result<Response<proto::ListWebhookDeliveriesResponse>, Status> {
        let tenant = tenant_of(request.extensions()).map_err(to_status)?;
        let body = request.get_ref();
        let filter = DeliveryFilter {
            endpoint_id: (!body.endpoint_id.is_empty())
                .then(|| endpoint_id(&body.endpoint_id).map(str::to_owned))
                .transpose()
                .map_err(to_status)?,
            status: status_from_wire(body.status).map_err(to_status)?,
        };
        let limit = match body.limit {
            0 => 100,
            limit => limit as usize,
        };
        let deliveries = self
            .notifications
            .list_deliveries(&tenant, &filter, limit)
            .await
            .map_err(to_status)?;
        Ok(Response::new(proto::ListWebhookDeliveriesResponse {
            deliveries: deliveries.into_iter().map(delivery_to_wire).collect(),
        }))
    }

    type WatchTasksStream = WatchStream<proto::WatchTasksResponse>;

    async fn watch_tasks(
        &self,
        request: Request<proto::WatchTasksRequest>,
    ) -> std::result::Result<Response<Self::WatchTasksStream>, Status> {
        let tenant = tenant_of(request.extensions()).map_err(to_status)?;
        let events = watch::task_events(
            self.notifications.store().clone(),
            tenant,
            request.get_ref().after_sequence,
        );
        Ok(Response::new(Box::pin(
            events.map(|item| item.map(event_to_wire).map_err(to_status)),
        )))
    }

    type WatchRunStream = WatchStream<proto::WatchRunResponse>;

    async fn watch_run(
        &self,
        request: Request<proto::WatchRunRequest>,
    ) -> std::result::Result<Response<Self::WatchRunStream>, Status> {
        let run = run_key(request.extensions(), &request.get_ref().run_id).map_err(to_status)?;
        let after = match request.get_ref().after_step {
            0 => None,
            raw => Some(Step::parse(raw).map_err(|e| to_status(e.in_field("after_step")))?),
        };
        // An unknown run is refused at once rather than watched forever.
        self.engine.run_info(&run).await.map_err(to_status)?;
        let checkpoints = watch::run_checkpoints(self.engine.clone(), run, after);
        Ok(Response::new(Box::pin(checkpoints.map(|item| {
            item.map(|summary| proto::WatchRunResponse {
                checkpoint: Some(summary_to_wire(summary)),
            })
            .map_err(to_status)
        }))))
    }
}
