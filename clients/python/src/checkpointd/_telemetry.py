"""The worker's optional trace exporter: OTLP when an endpoint is configured and the `otlp`
extra (opentelemetry-sdk and the OTLP exporter) is installed. Without it, spans go to whatever
tracer provider the host process set up (none: they cost nothing)."""

from __future__ import annotations

import logging
import os

log = logging.getLogger("checkpointd")


def configure_exporter(endpoint: str | None, service_name: str = "checkpointd-python-worker") -> bool:
    """Installs an OTLP span exporter; True when traces are now exported."""
    endpoint = (
        endpoint
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    if not endpoint:
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning(
            "an OTLP endpoint is set but the exporter is not installed: pip install 'checkpointd[otlp]'"
        )
        return False
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    return True


def shutdown_exporter() -> None:
    """Flushes the spans still buffered (the SDK's provider has `shutdown`; the API's has not)."""
    from opentelemetry import trace

    stop = getattr(trace.get_tracer_provider(), "shutdown", None)
    if callable(stop):
        stop()
