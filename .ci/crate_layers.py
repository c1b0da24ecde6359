"""The workspace's layers: every crate depends only on the crates below it, and the lower layers
pull in no transport, database driver or cache they must not know.

    python3 .ci/crate_layers.py

Reads `cargo metadata` (the crate graph cargo itself resolves) for the layers and `cargo tree -p
CRATE -e normal` (the crate built alone, with its own features) for what each crate reaches.
Exits 1, naming each offence, when a crate depends on a workspace crate of its own layer or above
(an upward dependency), or when a crate's normal dependencies, direct or transitive, include a
crate it is kept free of.
"""

import json
import subprocess
import sys

# The workspace crates each crate may depend on (normal, build or dev), lowest layer first:
# protocol -> core -> storage -> sqlite | postgres -> server -> cli, and beside them
# protocol -> client -> runner -> cli. The two database crates know nothing of each other, the
# server nothing of the runner or the client, the runner nothing of the server. Test support
# (testkit) may sit under any layer that runs a database.
MAY_DEPEND_ON = {
    "checkpointd-protocol": set(),
    "checkpointd-telemetry": set(),
    "checkpointd-testkit": set(),
    "checkpointd-core": {"checkpointd-protocol"},
    "checkpointd-storage": {"checkpointd-core"},
    "checkpointd-sqlite": {"checkpointd-core", "checkpointd-storage"},
    "checkpointd-postgres": {"checkpointd-core", "checkpointd-storage", "checkpointd-testkit"},
    "checkpointd": {
        "checkpointd-protocol",
        "checkpointd-core",
        "checkpointd-storage",
        "checkpointd-sqlite",
        "checkpointd-postgres",
        "checkpointd-telemetry",
        "checkpointd-testkit",
    },
    "checkpointd-client": {"checkpointd-protocol"},
    "checkpointd-runner": {"checkpointd-protocol", "checkpointd-client", "checkpointd-telemetry"},
}
# The top: the binary and the benchmark may use anything below them.
TOP = {"checkpointd-cli", "checkpointd-bench"}

DRIVERS = ["rusqlite", "tokio-postgres", "deadpool-postgres", "redis"]
TRANSPORT = ["tonic", "tonic-types", "tonic-health", "tonic-reflection", "axum", "hyper", "h2"]

# Crates each one must not reach through its normal dependencies.
FORBIDDEN = {
    "checkpointd-core": DRIVERS + TRANSPORT + ["tokio"],
    "checkpointd-storage": DRIVERS + TRANSPORT,
    "checkpointd-sqlite": ["tokio-postgres", "deadpool-postgres", "redis"] + TRANSPORT,
    "checkpointd-postgres": ["rusqlite", "redis"] + TRANSPORT,
    "checkpointd-protocol": DRIVERS + ["axum"],
    "checkpointd-client": DRIVERS + ["axum"],
    "checkpointd-runner": DRIVERS,
}


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    names = {package["id"]: package["name"] for package in meta["packages"]}
    members = {names[member] for member in meta["workspace_members"]}
    offences = []

    unplaced = sorted(members - set(MAY_DEPEND_ON) - TOP)
    offences += [f"{name} is not placed in .ci/crate_layers.py" for name in unplaced]

    for node in meta["resolve"]["nodes"]:
        crate = names[node["id"]]
        if crate not in MAY_DEPEND_ON:
            continue
        for dep in node["deps"]:
            target = names[dep["pkg"]]
            if target in members and target not in MAY_DEPEND_ON[crate]:
                kinds = sorted({kind["kind"] or "normal" for kind in dep["dep_kinds"]})
                offences.append(f"{crate} depends on {target} ({', '.join(kinds)}): not below it")

    for crate, forbidden in FORBIDDEN.items():
        tree = subprocess.run(
            ["cargo", "tree", "--locked", "-p", crate, "-e", "normal", "--prefix", "none"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        reached = {line.split()[0] for line in tree.splitlines() if line.strip()}
        offences += [f"{crate} reaches {bad}" for bad in forbidden if bad in reached]

    for offence in offences:
        print(offence)
    print(f"{len(members)} crates, {len(offences)} offences against the layers")
    return 1 if offences else 0


sys.exit(main())
