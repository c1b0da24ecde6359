//! `checkpointd webhooks ...`: an admin's webhook endpoints and their deliveries, through
//! `NotificationService`.

use serde_json::json;

use super::WebhooksCommand;
use super::client::{CliError, Client};
use super::output::{Table, or_dash, print_json, time_json, time_text};
use checkpointd::proto;

pub async fn run(client: &Client, command: WebhooksCommand, json: bool) -> Result<(), CliError> {
    let mut service = client.notifications();
    match command {
        WebhooksCommand::Create { url, description } => {
            let request = proto::CreateWebhookEndpointRequest { url, description };
            let created = service
                .create_webhook_endpoint(request)
                .await
                .map_err(|status| client.status(status))?
                .into_inner();
            let endpoint = created
                .endpoint
                .ok_or_else(|| CliError::Other("the server returned no endpoint".into()))?;
            if json {
                print_json(&json!({
                    "id": endpoint.id,
                    "url": endpoint.url,
                    "secret": created.secret,
                }));
            } else {
                println!("endpoint {} -> {}", endpoint.id, endpoint.url);
                println!("secret   {}", created.secret);
                println!("(shown once: configure it in the receiver to verify signatures)");
            }
            Ok(())
        }
        WebhooksCommand::List => {
            let endpoints = service
                .list_webhook_endpoints(proto::ListWebhookEndpointsRequest {})
                .await
                .map_err(|status| client.status(status))?
                .into_inner()
                .endpoints;
            if json {
                let rows: Vec<_> = endpoints
                    .iter()
                    .map(|e| {
                        json!({
                            "id": e.id,
                            "url": e.url,
                            "description": e.description,
                            "created_at": time_json(e.created_at.as_ref()),
                        })
                    })
                    .collect();
                print_json(&json!(rows));
            } else {
                let mut table = Table::new(vec!["ID", "URL", "DESCRIPTION", "CREATED"]);
                for e in endpoints {
                    table.row(vec![
                        e.id,
                        e.url,
                        or_dash(&e.description),
                        time_text(e.created_at.as_ref()),
                    ]);
                }
                print!("{}", table.render());
            }
            Ok(())
        }
        WebhooksCommand::Delete { id } => {
            service
                .delete_webhook_endpoint(proto::DeleteWebhookEndpointRequest { id: id.clone() })
                .await
                .map_err(|status| client.status(status))?;
            if json {
                print_json(&json!({ "id": id, "deleted": true }));
            } else {
                println!("endpoint {id} deleted");
            }
            Ok(())
        }
        WebhooksCommand::Deliveries {
            endpoint,
            status,
            limit,
        } => {
            let request = proto::ListWebhookDeliveriesRequest {
                endpoint_id: endpoint.unwrap_or_default(),
                status: status.map_or(proto::DeliveryStatus::Unspecified, |s| s.wire()) as i32,
                limit,
            };
            let deliveries = service
                .list_webhook_deliveries(request)
                .await
                .map_err(|status| client.status(status))?
                .into_inner()
                .deliveries;
            print_deliveries(&deliveries, json);
            Ok(())
        }
    }
}

fn status_name(delivery: &proto::WebhookDelivery) -> &'static str {
    match delivery.status() {
        proto::DeliveryStatus::Pending => "pending",
        proto::DeliveryStatus::Failing => "failing",
        proto::DeliveryStatus::Delivered => "delivered",
        proto::DeliveryStatus::GivenUp => "given_up",
        proto::DeliveryStatus::Unspecified => "unknown",
    }
}

fn print_deliveries(deliveries: &[proto::WebhookDelivery], json: bool) {
    if json {
        let rows: Vec<_> = deliveries
            .iter()
            .map(|d| {
                json!({
                    "event_id": d.event_id,
                    "endpoint_id": d.endpoint_id,
                    "event_type": d.event_type,
                    "status": status_name(d),
                    "attempts": d.attempts,
                    "next_attempt_at": time_json(d.next_attempt_at.as_ref()),
                    "last_error": d.last_error,
                    "delivered_at": time_json(d.delivered_at.as_ref()),
                    "created_at": time_json(d.created_at.as_ref()),
                })
            })
            .collect();
        print_json(&json!(rows));
        return;
    }
    let mut table = Table::new(vec![
        "EVENT",
        "ENDPOINT",
        "TYPE",
        "STATUS",
        "ATTEMPTS",
        "NEXT",
        "LAST ERROR",
    ]);
    for d in deliveries {
        table.row(vec![
            d.event_id.clone(),
            d.endpoint_id.clone(),
            d.event_type.clone(),
            status_name(d).to_owned(),
            d.attempts.to_string(),
            time_text(d.next_attempt_at.as_ref()),
            or_dash(&d.last_error),
        ]);
    }
    print!("{}", table.render());
}
