"""The server crate's module graph: which top-level modules use which, and any two-way pair.

    python3 .ci/module_deps.py [crates/server/src]

Counts every `crate::MODULE` path outside comments, tests included (a test that reaches into
another module is a dependency too). Exits 1 when two modules depend on each other, so the
layering (grpc -> service -> store/queue -> domain) cannot quietly grow a cycle.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "crates/server/src")
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"\bcrate::\{([^}]*)\}")


def module_of(path):
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".rs")


def uses(text):
    found = set()
    for line in text.splitlines():
        code = line.split("//", 1)[0]
        found |= set(PATH.findall(code))
        for group in GROUP.findall(code):
            found |= {item.strip().split("::")[0] for item in group.split(",") if item.strip()}
    return found


graph = {}
for path in sorted(ROOT.rglob("*.rs")):
    module = module_of(path)
    if module in ("lib", "main"):
        continue
    graph.setdefault(module, set()).update(uses(path.read_text()) - {module, "self"})

for module in sorted(graph):
    print(f"{module:12} -> {', '.join(sorted(graph[module])) or '-'}")
cycles = sorted(
    (a, b) for a in graph for b in graph[a] if a < b and a in graph.get(b, set())
)
for a, b in cycles:
    print(f"two-way: {a} <-> {b}")
print(f"{len(cycles)} two-way module dependencies")
sys.exit(1 if cycles else 0)
