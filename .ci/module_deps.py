"""Import circles between sibling modules, in every crate of the workspace.

    python3 .ci/module_deps.py [crates]

Inside each folder of each crate, a module that uses a sibling (through `crate::...`, `super::...`
or `self::...` paths, `use` groups included, tests included: a test that reaches into another
module is a dependency too) is an edge; a strongly connected set of two or more siblings is a
circle. Exits 1 when there is one, so a folder's layering cannot quietly grow a cycle. Which
crate may depend on which is the crate graph's business (`.ci/crate_layers.py`).
"""

import pathlib
import re
import sys

CRATES = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "crates")
PATH = re.compile(r"\b((?:crate|super|self)(?:::(?:super|[A-Za-z_][A-Za-z0-9_]*))*)(::\{[^;]*?\})?")


def module_path(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts = parts[:-1]
    return tuple(parts)


def expand_group(group):
    """`{a, b::c, d::{e, f}}` into ['a', 'b::c', 'd::e', 'd::f'] (one nesting level is enough)."""
    inner = group.strip().removeprefix("::").removeprefix("{").removesuffix("}")
    items, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}"
        current += char
    items.append(current.strip())
    out = []
    for item in filter(None, items):
        head, _, rest = item.partition("::{")
        if rest:
            out += [f"{head}::{sub}" for sub in expand_group("{" + rest)]
        else:
            out.append(item.split(" as ")[0])
    return out


def targets(module, text):
    """Absolute module paths (tuples) that `module`'s text names."""
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    found = []
    for match in PATH.finditer(code):
        base = match.group(1).split("::")
        suffixes = expand_group(match.group(2)) if match.group(2) else [""]
        for suffix in suffixes:
            segments = base + [s for s in suffix.split("::") if s]
            if segments[0] == "crate":
                resolved = []
            else:
                resolved = list(module)
            for segment in segments[1:] if segments[0] == "crate" else segments:
                if segment == "super":
                    resolved = resolved[:-1]
                elif segment != "self":
                    resolved.append(segment)
            found.append(tuple(resolved))
    return found


def circles(edges, nodes):
    """Strongly connected sets of two or more nodes (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return out


found = 0
for src in sorted(CRATES.glob("*/src")):
    files = {module_path(src, path): path for path in sorted(src.rglob("*.rs"))}
    modules = set(files)
    folders = {}
    for module, path in files.items():
        for target in targets(module, path.read_text()):
            # The longest prefix of the target that is a module of this crate.
            while target and target not in modules:
                target = target[:-1]
            common = 0
            while common < min(len(module), len(target)) and module[common] == target[common]:
                common += 1
            if common >= len(module) or common >= len(target):
                continue  # a module and its own ancestor or descendant
            folder = module[:common]
            edge = folders.setdefault(folder, {})
            edge.setdefault(module[common], set()).add(target[common])
    for folder, edges in sorted(folders.items()):
        nodes = set(edges) | {n for targets_ in edges.values() for n in targets_}
        for group in circles(edges, nodes):
            found += 1
            where = "/".join((src.parent.name, "src") + folder)
            print(f"circle in {where}: {' <-> '.join(group)}")
print(f"{found} import circles between sibling modules")
sys.exit(1 if found else 0)
