//! Telemetry: structured logs always; OpenTelemetry traces and metrics over OTLP when an endpoint
//! is configured; Prometheus text for the admin port. [`Telemetry`] flushes on shutdown.

pub mod admin;
pub mod metrics;
pub mod propagation;
pub mod queue_depth;
pub mod rpc_layer;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{Filtered, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::LogFormat;

/// The standard variables that, like `--otlp-endpoint`, switch OTLP export on.
const OTLP_ENDPOINT_VARIABLES: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
];

/// Export flags shared by `serve` and `worker`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct TelemetryArgs {
    /// OTLP/gRPC collector for traces and metrics, e.g. `http://collector:4317`; falls back to
    /// OTEL_EXPORTER_OTLP_ENDPOINT. Unset: no exporter.
    #[arg(long, env = "CHECKPOINTD_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// `service.instance.id` on traces and metrics [default: hostname-pid].
    #[arg(long, env = "CHECKPOINTD_INSTANCE_ID")]
    pub instance_id: Option<String>,
}

/// What a long-running command (`serve`, `worker`) asks of telemetry.
#[derive(Clone, Debug)]
pub struct TelemetrySettings {
    pub log_format: LogFormat,
    /// `--otlp-endpoint`; when unset the standard `OTEL_EXPORTER_OTLP_*` variables still apply.
    pub otlp_endpoint: Option<String>,
    /// `service.instance.id` of the resource.
    pub instance_id: String,
    /// Whether metrics are kept for a Prometheus scrape (the admin port is on).
    pub prometheus: bool,
}

/// The installed providers; [`Telemetry::shutdown`] exports what is still buffered.
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    registry: Option<prometheus::Registry>,
}

/// `hostname-pid`, the default instance id.
pub fn default_instance_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}-{}", std::process::id())
}

/// Logs only, for short commands (`demo`, the operator CLI, the benchmark).
pub fn init_logs(format: LogFormat) {
    let _ = base_registry(format, None).try_init();
}

/// Installs logs, and when an endpoint is configured, the OTLP trace and metric pipelines;
/// the Prometheus reader when asked. With neither, no OpenTelemetry provider exists at all.
pub fn init(settings: &TelemetrySettings) -> Result<Telemetry, String> {
    let export = settings.otlp_endpoint.is_some()
        || OTLP_ENDPOINT_VARIABLES
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    let resource = Resource::builder()
        .with_service_name("checkpointd")
        .with_attributes([
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            KeyValue::new("service.instance.id", settings.instance_id.clone()),
        ])
        .build();
    let tracer = if export {
        let mut builder = opentelemetry_otlp::SpanExporter::builder().with_tonic();
        if let Some(endpoint) = &settings.otlp_endpoint {
            builder = opentelemetry_otlp::WithExportConfig::with_endpoint(builder, endpoint);
        }
        let exporter = builder
            .build()
            .map_err(|error| format!("cannot build the OTLP span exporter: {error}"))?;
        // The batch processor queues spans in memory and exports from its own thread, so a slow
        // or absent collector costs dropped spans, never slower RPCs.
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.clone())
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Some(provider)
    } else {
        None
    };
    let registry = settings.prometheus.then(prometheus::Registry::new);
    let meter = build_meter(export, settings, registry.as_ref(), resource)?;
    if let Some(meter) = &meter {
        opentelemetry::global::set_meter_provider(meter.clone());
    }
    // Only this crate's spans are exported: the exporter's own gRPC client is traced too, and
    // exporting its spans would feed the pipeline from itself.
    let otel_layer = tracer.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("checkpointd"))
            .with_tracked_inactivity(false)
            // Source locations, thread names and targets would add six attributes to every
            // span; the span name already says where it comes from.
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            // Parents come from the tracing span tree (and, for an RPC, from the caller's
            // context the server layer sets), so entering a span need not also make its
            // context current, which an async span would pay on every poll.
            .with_context_activation(false)
            .with_filter(Targets::new().with_target("checkpointd", tracing::Level::INFO))
    });
    let _ = base_registry(settings.log_format, otel_layer).try_init();
    Ok(Telemetry {
        tracer,
        meter,
        registry,
    })
}

fn build_meter(
    export: bool,
    settings: &TelemetrySettings,
    registry: Option<&prometheus::Registry>,
    resource: Resource,
) -> Result<Option<SdkMeterProvider>, String> {
    if !export && registry.is_none() {
        return Ok(None);
    }
    let mut builder = SdkMeterProvider::builder().with_resource(resource);
    if let Some(registry) = registry {
        let reader = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .build()
            .map_err(|error| format!("cannot build the Prometheus reader: {error}"))?;
        builder = builder.with_reader(reader);
    }
    if export {
        let mut exporter = opentelemetry_otlp::MetricExporter::builder().with_tonic();
        if let Some(endpoint) = &settings.otlp_endpoint {
            exporter = opentelemetry_otlp::WithExportConfig::with_endpoint(exporter, endpoint);
        }
        let exporter = exporter
            .build()
            .map_err(|error| format!("cannot build the OTLP metric exporter: {error}"))?;
        // Interval from OTEL_METRIC_EXPORT_INTERVAL, 60 s by default.
        builder = builder.with_periodic_exporter(exporter);
    }
    Ok(Some(builder.build()))
}

type OtelLayer = Filtered<
    tracing_opentelemetry::OpenTelemetryLayer<
        tracing_subscriber::Registry,
        opentelemetry_sdk::trace::Tracer,
    >,
    Targets,
    tracing_subscriber::Registry,
>;

/// The log layer (text or JSON on stderr, filtered by `RUST_LOG`, `info` by default) plus the
/// optional OpenTelemetry layer. Spans reach OpenTelemetry unfiltered by `RUST_LOG`.
fn base_registry(
    format: LogFormat,
    otel: Option<OtelLayer>,
) -> impl SubscriberInitExt + Send + Sync {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
    tracing_subscriber::registry().with(otel).with(logs)
}

impl Telemetry {
    /// The registry `/metrics` renders, when the admin port is on.
    pub fn prometheus_registry(&self) -> Option<prometheus::Registry> {
        self.registry.clone()
    }

    /// Exports what is buffered and stops the exporters. Blocking work runs off the runtime.
    pub async fn shutdown(self) {
        let Telemetry { tracer, meter, .. } = self;
        let flushed = tokio::task::spawn_blocking(move || {
            if let Some(tracer) = tracer
                && let Err(error) = tracer.shutdown()
            {
                tracing::warn!(%error, "span export did not flush cleanly");
            }
            if let Some(meter) = meter
                && let Err(error) = meter.shutdown()
            {
                tracing::warn!(%error, "metric export did not flush cleanly");
            }
        });
        let _ = flushed.await;
    }
}
