"""The clients against a real server that speaks only TLS and answers only an API key."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from checkpointd import AsyncClient, Client
from checkpointd.errors import CheckpointdError, PermissionDenied, Unauthenticated


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def certificates(tmp_path: Path) -> Path:
    """A private CA and a certificate for localhost it signed, made for this test."""
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        cwd=tmp_path,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        cwd=tmp_path,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-copy_extensions",
        "copy",
        "-out",
        "server.pem",
        cwd=tmp_path,
    )
    return tmp_path


@pytest.fixture
def server_args(certificates: Path) -> list[str]:
    return [
        "--auth",
        "api-key",
        "--tls-cert",
        str(certificates / "server.pem"),
        "--tls-key",
        str(certificates / "server.key"),
    ]


def _key(server, tenant: str, role: str) -> str:
    done = subprocess.run(
        [
            server.binary,
            "keys",
            "create",
            "--tenant",
            tenant,
            "--role",
            role,
            "--database",
            server.database.url,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def _target(server) -> str:
    # The certificate names localhost, not 127.0.0.1.
    return "https://localhost:" + server.addr.rsplit(":", 1)[1]


def test_a_key_over_tls_saves_and_loads(server, certificates: Path) -> None:
    token = _key(server, "acme", "agent")
    with Client(_target(server), ca_cert=certificates / "ca.pem", token=token) as client:
        client.save(run_id="secure-run", step=1, state=b"secret state")
        assert client.load_latest(run_id="secure-run").checkpoint.state == b"secret state"
        # The tenant came from the key: naming it again is allowed, naming another is not.
    with Client(_target(server), ca_cert=certificates / "ca.pem", token=token, tenant="acme") as same:
        assert same.get_run(run_id="secure-run").run.latest_step == 1
    with Client(_target(server), ca_cert=certificates / "ca.pem", token=token, tenant="other") as other:
        with pytest.raises(PermissionDenied) as denied:
            other.load_latest(run_id="secure-run")
        assert denied.value.reason == "TENANT_MISMATCH"


async def test_the_async_client_sends_the_key_too(server, certificates: Path) -> None:
    token = _key(server, "acme", "agent")
    async with AsyncClient(_target(server), ca_cert=certificates / "ca.pem", token=token) as client:
        await client.save(run_id="async-run", step=1, state=b"x")
        assert (await client.load_latest(run_id="async-run")).checkpoint.step == 1


def test_no_key_or_a_wrong_one_is_unauthenticated(server, certificates: Path) -> None:
    _key(server, "acme", "agent")
    for token in (None, "ckpt_0000000000000000_" + "0" * 64):
        with Client(_target(server), ca_cert=certificates / "ca.pem", token=token) as client:
            with pytest.raises(Unauthenticated) as refused:
                client.load_latest(run_id="secure-run")
            assert refused.value.reason == "CREDENTIAL_INVALID"


def test_an_agent_key_cannot_approve(server, certificates: Path) -> None:
    token = _key(server, "acme", "agent")
    with Client(_target(server), ca_cert=certificates / "ca.pem", token=token) as client:
        with pytest.raises(PermissionDenied) as denied:
            client.approve(task_id="00000000-0000-0000-0000-000000000000", decided_by="me")
        assert denied.value.reason == "ROLE_FORBIDDEN"


def test_a_client_without_the_ca_cannot_connect(server, certificates: Path) -> None:
    token = _key(server, "acme", "agent")
    with Client(_target(server), token=token, timeout=10) as client:
        with pytest.raises(CheckpointdError) as failed:
            client.load_latest(run_id="secure-run")
        assert not isinstance(failed.value, (Unauthenticated, PermissionDenied))
