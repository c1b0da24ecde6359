"""The installed package's metadata: `pip install './clients/python[langgraph]'` brings every
distribution the READMEs' LangGraph examples import, at ranges that admit the CI pins. Reads
the installed distribution and the READMEs only: no network, no server."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]


def extra_requirements(extra: str) -> list[Requirement]:
    required = [Requirement(line) for line in metadata.requires("checkpointd") or []]
    return [r for r in required if r.marker is not None and r.marker.evaluate({"extra": extra})]


def langgraph_example_imports() -> set[str]:
    """The modules imported by the python blocks of both READMEs' LangGraph sections."""
    modules: set[str] = set()
    for readme in (REPO / "README.md", PACKAGE / "README.md"):
        section = readme.read_text().split("## LangGraph", 1)[1].split("\n## ", 1)[0]
        for block in re.findall(r"```python\n(.*?)```", section, re.DOTALL):
            modules.update(re.findall(r"^\s*(?:from|import)\s+([\w.]+)", block, re.MULTILINE))
    return modules


def distribution_of(module: str) -> str:
    """The installed distribution holding `module` (langgraph.* spans several distributions)."""
    path = module.replace(".", "/")
    for name in metadata.packages_distributions().get(module.split(".")[0], []):
        files = metadata.distribution(name).files or []
        if any(str(f) in (f"{path}/__init__.py", f"{path}.py") for f in files):
            return canonicalize_name(name)
    raise AssertionError(f"no installed distribution provides {module}")


def ci_pins() -> dict[str, str]:
    lines = (PACKAGE / "requirements-ci.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if "==" in line and not line.startswith("#")]
    return {canonicalize_name(name): version for name, version in pins}


def test_the_langgraph_extra_installs_what_the_readme_examples_import() -> None:
    extra = {canonicalize_name(r.name) for r in extra_requirements("langgraph")}
    imported = {m for m in langgraph_example_imports() if m.split(".")[0] != "checkpointd"}
    missing = {m: distribution_of(m) for m in imported if distribution_of(m) not in extra}
    assert not missing, f"the langgraph extra lacks {missing}"
    # The saver needs langgraph-checkpoint; the graph it checkpoints needs langgraph itself.
    assert {"langgraph", "langgraph-checkpoint"} <= extra


def test_the_extras_ranges_admit_the_ci_pins() -> None:
    pins = ci_pins()
    for extra in ("langgraph", "otlp"):
        for requirement in extra_requirements(extra):
            pinned = pins.get(canonicalize_name(requirement.name))
            if pinned is not None:
                assert requirement.specifier.contains(pinned), (str(requirement), pinned)
