"""The shared client scenarios (tests/scenarios/*.json), each against a fresh real server on
SQLite and on Postgres, run through this package's `Client` by `scenarios.Runner`; the
TypeScript package runs the same files (clients/typescript/test/scenarios.test.ts)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Server, checkpointd_bin, fresh_database
from scenarios import Runner, load_scenarios

SCENARIOS = load_scenarios()


def create_keys(binary: str, database_url: str, keys: dict[str, Any]) -> dict[str, dict[str, str]]:
    """API keys made on the database before the server starts, by name: token and tenant."""
    made = {}
    for name, key in keys.items():
        done = subprocess.run(
            [binary, "keys", "create", "--database", database_url, "--tenant", key["tenant"]]
            + ["--role", key["role"], "--name", name, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        made[name] = {"token": json.loads(done.stdout)["key"], "tenant": key["tenant"]}
    return made


def test_the_scenarios_directory_holds_the_suite() -> None:
    assert {"checksum", "corruption", "all-corrupt", "intents", "approval-cli", "cross-language"} <= set(
        SCENARIOS
    )
    for name, scenario in SCENARIOS.items():
        assert scenario["summary"] and scenario["steps"], name


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name: str, kind: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    settings = scenario.get("server", {})
    binary = checkpointd_bin()
    with fresh_database(kind, tmp_path) as database:
        keys = create_keys(binary, database.url, settings.get("keys", {}))
        args = list(settings.get("args", []))
        if "auth" in settings:
            args += ["--auth", settings["auth"]]
        server = Server(binary, database, args, tmp_path / "server.log")
        try:
            Runner(server, keys, tmp_path).run(scenario)
        except AssertionError as error:
            log = (tmp_path / "server.log").read_text(errors="replace")[-4000:]
            raise AssertionError(f"scenario {name} on {kind}: {error}\nserver log tail:\n{log}") from error
        finally:
            server.stop()
