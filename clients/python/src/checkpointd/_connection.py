"""How a client reaches the server: target parsing, TLS credentials, limits and call metadata."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

import grpc
from opentelemetry import propagate

from ._readiness import CONNECT_TIMEOUT, RECONNECT_OPTIONS, AioWaitForServer, WaitForServer

#: Largest message either way. The server accepts 16 MiB requests, and a loaded checkpoint
#: (state, history and journal) can exceed that; grpcio's default 4 MiB receive limit cannot.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024

#: PEM bytes, or a path to a PEM file.
Pem = Union[bytes, str, "os.PathLike[str]"]


def _read_pem(value: Pem | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    text = os.fspath(value)
    if "-----BEGIN" in text:
        return text.encode()
    return Path(text).read_bytes()


@dataclass(frozen=True)
class Connection:
    """Everything needed to open a channel and to decorate each call."""

    address: str
    tls: bool
    ca_cert: bytes | None = None
    client_cert: bytes | None = None
    client_key: bytes | None = None
    token: str | None = None
    tenant: str | None = None
    options: tuple[tuple[str, int | str], ...] = field(default_factory=tuple)
    #: How long a call waits for a server that is not reachable (yet), in seconds.
    connect_timeout: float = CONNECT_TIMEOUT

    @classmethod
    def parse(
        cls,
        target: str,
        *,
        ca_cert: Pem | None = None,
        client_cert: Pem | None = None,
        client_key: Pem | None = None,
        token: str | None = None,
        tenant: str | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> Connection:
        """`host:port` (plaintext unless a TLS option is given), `http://host:port` or
        `https://host:port`. A call waits up to `connect_timeout` seconds (within its own
        deadline) for a server that is not reachable yet, then fails with `Unavailable`."""
        if (client_cert is None) != (client_key is None):
            raise ValueError("client_cert and client_key go together")
        tls_options = any(v is not None for v in (ca_cert, client_cert, client_key))
        if target.startswith("https://"):
            address, tls = target[len("https://") :], True
        elif target.startswith("http://"):
            if tls_options:
                raise ValueError(f"TLS options given for a plaintext target {target!r}")
            address, tls = target[len("http://") :], False
        else:
            address, tls = target, tls_options
        address = address.rstrip("/")
        if not address or "/" in address:
            raise ValueError(f"target must be host:port or http(s)://host:port, got {target!r}")
        return cls(
            address=address,
            tls=tls,
            ca_cert=_read_pem(ca_cert),
            client_cert=_read_pem(client_cert),
            client_key=_read_pem(client_key),
            token=token,
            tenant=tenant,
            options=(
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", max_message_bytes),
                *RECONNECT_OPTIONS,
            ),
            connect_timeout=connect_timeout,
        )

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca_cert,
            private_key=self.client_key,
            certificate_chain=self.client_cert,
        )

    def sync_channel(self) -> grpc.Channel:
        """A channel whose calls wait for the server to come up (see `_readiness`)."""
        if self.tls:
            channel = grpc.secure_channel(self.address, self.credentials(), options=self.options)
        else:
            channel = grpc.insecure_channel(self.address, options=self.options)
        return grpc.intercept_channel(channel, WaitForServer(channel, self.address, self.connect_timeout))

    def aio_channel(self) -> grpc.aio.Channel:
        """An asyncio channel whose calls wait for the server to come up (see `_readiness`)."""
        waiting = AioWaitForServer(self.address, self.connect_timeout)
        if self.tls:
            channel = grpc.aio.secure_channel(
                self.address, self.credentials(), options=self.options, interceptors=waiting.interceptors
            )
        else:
            channel = grpc.aio.insecure_channel(
                self.address, options=self.options, interceptors=waiting.interceptors
            )
        waiting.channel = channel
        return channel

    def metadata(self) -> list[tuple[str, str]]:
        """The headers of one call: credentials, tenant, and the current trace context
        (`traceparent`), so the server's spans join the caller's trace."""
        headers: list[tuple[str, str]] = []
        if self.token:
            headers.append(("authorization", f"Bearer {self.token}"))
        if self.tenant:
            headers.append(("x-tenant-id", self.tenant))
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        headers.extend((key.lower(), value) for key, value in carrier.items())
        return headers
