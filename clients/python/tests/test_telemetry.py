"""One OpenTelemetry span per save with its latency, and the trace context sent to the server."""

from __future__ import annotations

import pytest
from agents import CountingAgent
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from checkpointd import CheckpointStore, RecoverableAgent
from checkpointd._connection import Connection

EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def tracer_provider() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)


async def test_every_save_is_one_client_span_with_its_latency(server) -> None:
    EXPORTER.clear()
    store = CheckpointStore(server.target)
    await RecoverableAgent(CountingAgent(steps=7), store, checkpoint_every_n=3).run_with_recovery(
        None, "traced"
    )
    saves = [s for s in EXPORTER.get_finished_spans() if s.name == "checkpoint.save"]
    assert [s.attributes["checkpoint.step"] for s in saves] == [3, 6, 7]
    for span in saves:
        assert span.kind == trace.SpanKind.CLIENT
        assert span.attributes["checkpoint.run_id"] == "traced"
        assert span.attributes["checkpoint.bytes"] > 0
        assert span.attributes["checkpoint.save.latency_ms"] > 0
        assert span.end_time > span.start_time
    assert len(store.stats.latencies) == 3
    await store.close()


def test_calls_carry_the_current_trace_context_and_credentials() -> None:
    connection = Connection.parse("127.0.0.1:1", token="s3cret", tenant="acme")
    assert ("authorization", "Bearer s3cret") in connection.metadata()
    assert ("x-tenant-id", "acme") in connection.metadata()
    assert not any(key == "traceparent" for key, _ in connection.metadata())
    with trace.get_tracer("test").start_as_current_span("agent.step") as span:
        headers = dict(connection.metadata())
    trace_id = format(span.get_span_context().trace_id, "032x")
    assert headers["traceparent"].split("-")[1] == trace_id
