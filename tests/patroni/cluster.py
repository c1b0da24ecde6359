"""A throwaway Patroni cluster for the failover test: one etcd, N Postgres nodes under Patroni."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import string
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def postgres_bin_dir() -> str:
    """The newest Debian Postgres binaries (initdb, pg_ctl), as the testkit finds them."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise SystemExit("no /usr/lib/postgresql/*/bin/initdb: install postgresql")
    return str(Path(found[-1]).parent)


def record_pid(workdir: Path, pid: int) -> None:
    """Appends a pid to <workdir>/pids, which .ci/patroni.sh's trap kills if this script dies."""
    with open(workdir / "pids", "a") as pids:
        pids.write(f"{pid}\n")


@dataclass
class Node:
    name: str
    pg_port: int
    rest_port: int
    node_dir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def data_dir(self) -> Path:
        return self.node_dir / "data"

    def postmaster_pid(self) -> int:
        """The postmaster's pid, from the first line of postmaster.pid."""
        return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])


class Cluster:
    """etcd plus Patroni nodes on loopback ports, all under one work directory."""

    def __init__(self, workdir: Path, *, nodes: int = 3, etcd_port: int = 2389) -> None:
        self.workdir = workdir
        self.etcd_port = etcd_port
        self.run_id = str(os.getpid())
        self.nodes = [
            Node(f"node{i + 1}", 5451 + i, 8011 + i, workdir / f"node{i + 1}") for i in range(nodes)
        ]
        self.etcd: subprocess.Popen[bytes] | None = None

    # -- start and stop ------------------------------------------------------------------------

    def ports(self) -> list[int]:
        nodes = [port for node in self.nodes for port in (node.pg_port, node.rest_port)]
        return [self.etcd_port, self.etcd_port + 1, *nodes]

    def check_ports_free(self) -> None:
        """Fails at once, naming the port, when one is taken (a previous run's leftover, or
        another service): otherwise a node would join someone else's cluster or fail late."""
        for port in self.ports():
            with socket.socket() as probe:
                # As the servers themselves bind: a previous run's connections in TIME_WAIT do
                # not count, a listener does.
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError as error:
                    raise RuntimeError(
                        f"port {port} is taken ({error}); the test needs {self.ports()}"
                    ) from error

    def start(self, timeout: float = 90.0) -> None:
        self.check_ports_free()
        self._start_etcd()
        postgres = pwd.getpwnam("postgres")
        # initdb refuses to run as root, and the data directories must belong to the server's
        # user, so every node runs as postgres; the work directory must be traversable by it.
        os.chmod(self.workdir, 0o755)
        template = string.Template((HERE / "patroni.yml.in").read_text())
        bin_dir = postgres_bin_dir()
        for node in self.nodes:
            node.node_dir.mkdir()
            os.chown(node.node_dir, postgres.pw_uid, postgres.pw_gid)
            config = node.node_dir / "patroni.yml"
            config.write_text(
                template.substitute(
                    run_id=self.run_id,
                    name=node.name,
                    rest_port=node.rest_port,
                    etcd_port=self.etcd_port,
                    pg_port=node.pg_port,
                    data_dir=node.data_dir,
                    node_dir=node.node_dir,
                    bin_dir=bin_dir,
                )
            )
            node.process = subprocess.Popen(
                ["patroni", str(config)],
                user=postgres.pw_uid,
                group=postgres.pw_gid,
                env={**os.environ, "HOME": str(node.node_dir)},
                cwd=node.node_dir,
                stdout=open(node.node_dir / "patroni.log", "ab"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            record_pid(self.workdir, node.process.pid)
            # The first node bootstraps alone: the others then find a leader to clone from
            # instead of racing for the initialize key.
            if node is self.nodes[0]:
                self.wait_for(lambda: self.leader() is not None, timeout, "a leader after bootstrap")
        self.wait_for(self.healthy, timeout, "a leader, a sync standby and every node streaming")

    def _start_etcd(self) -> None:
        data = self.workdir / "etcd"
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_port + 1}"
        self.etcd = subprocess.Popen(
            [
                "etcd",
                "--name=etcd0",
                f"--data-dir={data}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=etcd0={peer}",
                "--initial-cluster-state=new",
            ],
            stdout=open(self.workdir / "etcd.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        record_pid(self.workdir, self.etcd.pid)
        self.wait_for(lambda: _http_ok(f"{client}/health"), 30, "etcd to answer /health")

    def stop(self) -> None:
        """SIGTERM to Patroni stops its Postgres cleanly; whatever is left gets SIGKILL."""
        for node in self.nodes:
            if node.process and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.process:
                try:
                    node.process.wait(20)
                except subprocess.TimeoutExpired:
                    node.process.kill()
            try:
                os.kill(node.postmaster_pid(), signal.SIGKILL)
            except (OSError, ValueError):
                pass  # no postmaster.pid, or the postmaster is gone: what we want
        if self.etcd and self.etcd.poll() is None:
            self.etcd.terminate()
            try:
                self.etcd.wait(10)
            except subprocess.TimeoutExpired:
                self.etcd.kill()

    # -- state from Patroni's REST API --------------------------------------------------------

    def members(self) -> list[dict[str, Any]]:
        """GET /cluster from the first node that answers (any node serves the whole view)."""
        for node in self.nodes:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{node.rest_port}/cluster", timeout=2) as r:
                    members: list[dict[str, Any]] = json.load(r)["members"]
                    return members
            except (OSError, ValueError, KeyError):
                continue
        return []

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    def leader(self) -> Node | None:
        """The node whose REST API answers 200 on /leader: it holds the lock and runs Postgres."""
        for node in self.nodes:
            if _http_ok(f"http://127.0.0.1:{node.rest_port}/leader"):
                return node
        return None

    def sync_standby(self) -> Node | None:
        for member in self.members():
            if member.get("role") == "sync_standby" and member.get("state") in ("running", "streaming"):
                return self.node(member["name"])
        return None

    def healthy(self) -> bool:
        """A leader, a running sync standby, and every node running (replicas streaming)."""
        members = self.members()
        roles = [member.get("role") for member in members]
        running = all(member.get("state") in ("running", "streaming") for member in members)
        return (
            len(members) == len(self.nodes)
            and running
            and "leader" in roles
            and "sync_standby" in roles
            and self.leader() is not None
        )

    def describe(self) -> str:
        return ", ".join(
            f"{m.get('name')}={m.get('role')}/{m.get('state')}/tl{m.get('timeline', '?')}"
            for m in self.members()
        )

    # -- the faults -----------------------------------------------------------------------------

    def kill_postmaster(self, node: Node) -> int:
        pid = node.postmaster_pid()
        os.kill(pid, signal.SIGKILL)
        return pid

    def switchover(self, leader: Node, candidate: Node) -> None:
        """A planned switchover through the leader's REST API (what `patronictl switchover
        --force` sends), to a named candidate so the outcome is checkable."""
        body = json.dumps({"leader": leader.name, "candidate": candidate.name}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{leader.rest_port}/switchover",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            if answer.status != 200:
                raise RuntimeError(f"switchover refused: {answer.status} {answer.read()!r}")

    # -- helpers --------------------------------------------------------------------------------

    def wait_for(self, condition: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            for node in self.nodes:
                if node.process and node.process.poll() is not None:
                    raise RuntimeError(f"patroni {node.name} exited ({node.process.returncode}); see its log")
            time.sleep(0.2)
        raise TimeoutError(f"waited {timeout:.0f} s for {what}; cluster: {self.describe()}")

    def dump_logs(self, tail: int = 40) -> str:
        parts = []
        for path in [self.workdir / "etcd.log"] + [node.node_dir / "patroni.log" for node in self.nodes]:
            if path.exists():
                lines = path.read_text(errors="replace").splitlines()[-tail:]
                parts.append(f"--- {path} (last {len(lines)} lines)\n" + "\n".join(lines))
        return "\n".join(parts)


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
