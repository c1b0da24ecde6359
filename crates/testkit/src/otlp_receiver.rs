//! A minimal OTLP/gRPC collector (trace and metrics services, from the published OpenTelemetry
//! protos) that keeps what it receives in memory. The benchmark exports to it to measure tracing
//! overhead; the tests assert on what the server and worker send it.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// One received span, flattened: attribute values as text.
#[derive(Clone, Debug)]
pub struct ReceivedSpan {
    pub name: String,
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    /// Empty for a root span.
    pub parent_span_id: Vec<u8>,
    /// OTLP `SpanKind`: 2 server, 3 client.
    pub kind: i32,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub attributes: HashMap<String, String>,
    /// The resource's `service.instance.id`.
    pub instance_id: String,
}

impl ReceivedSpan {
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_unix_nanos.saturating_sub(self.start_unix_nanos))
    }
}

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<ReceivedSpan>>,
    /// Metric name to the `service.instance.id`s that sent it.
    metrics: Mutex<HashMap<String, BTreeSet<String>>>,
    arrived: Notify,
}

/// The collector, serving on 127.0.0.1 at an ephemeral port until stopped or dropped.
pub struct OtlpReceiver {
    pub addr: SocketAddr,
    received: Arc<Received>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl OtlpReceiver {
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let received = Arc::new(Received::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let router = Server::builder()
            .add_service(TraceServiceServer::new(Collector(received.clone())))
            .add_service(MetricsServiceServer::new(Collector(received.clone())));
        let server = tokio::spawn(async move {
            let incoming = TcpIncoming::from(listener);
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(error) = router
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
            {
                tracing::warn!(%error, "otlp receiver stopped");
            }
        });
        Ok(Self {
            addr,
            received,
            stop: Some(stop),
            server: Some(server),
        })
    }

    /// `http://ADDR`, the form `--otlp-endpoint` takes.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.received
            .spans
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
    }

    /// Every metric name received, with the instances that sent it.
    pub fn metrics(&self) -> HashMap<String, BTreeSet<String>> {
        self.received
            .metrics
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// Waits until `done` holds or `timeout` passes, re-checking after each export arrives.
    pub async fn wait_for(&self, timeout: Duration, done: impl Fn(&Self) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.received.arrived.notified();
            if done(self) {
                return true;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return done(self);
            }
        }
    }

    /// Stops serving and closes the port; exporters pointed here now fail to connect.
    pub async fn stop(mut self) {
        self.shut_down().await;
    }

    async fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

struct Collector(Arc<Received>);

fn text(value: &Option<AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// The sender's `service.instance.id`.
fn instance_of(resource: &Option<Resource>) -> String {
    resource
        .iter()
        .flat_map(|resource| &resource.attributes)
        .find(|kv| kv.key == "service.instance.id")
        .map(|kv| text(&kv.value))
        .unwrap_or_default()
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let mut flattened = Vec::new();
        for resource_spans in request.into_inner().resource_spans {
            let instance_id = instance_of(&resource_spans.resource);
            for span in resource_spans
                .scope_spans
                .into_iter()
                .flat_map(|scope| scope.spans)
            {
                flattened.push(ReceivedSpan {
                    name: span.name,
                    trace_id: span.trace_id,
                    span_id: span.span_id,
                    parent_span_id: span.parent_span_id,
                    kind: span.kind,
                    start_unix_nanos: span.start_time_unix_nano,
                    end_unix_nanos: span.end_time_unix_nano,
                    attributes: span
                        .attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), text(&kv.value)))
                        .collect(),
                    instance_id: instance_id.clone(),
                });
            }
        }
        if let Ok(mut spans) = self.0.spans.lock() {
            spans.extend(flattened);
        }
        self.0.arrived.notify_waiters();
        Ok(Response::new(ExportTraceServiceResponse::default()))
    }
}

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<Response<ExportMetricsServiceResponse>, Status> {
        if let Ok(mut metrics) = self.0.metrics.lock() {
            for resource_metrics in request.into_inner().resource_metrics {
                let instance_id = instance_of(&resource_metrics.resource);
                for metric in resource_metrics
                    .scope_metrics
                    .into_iter()
                    .flat_map(|scope| scope.metrics)
                {
                    metrics
                        .entry(metric.name)
                        .or_default()
                        .insert(instance_id.clone());
                }
            }
        }
        self.0.arrived.notify_waiters();
        Ok(Response::new(ExportMetricsServiceResponse::default()))
    }
}
