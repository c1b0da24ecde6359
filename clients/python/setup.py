"""Build hook: generates the gRPC stubs from the repository's protos before the package is built.

The stubs are never committed, so they cannot drift from `proto/`. `pip install ./clients/python`
builds in place, where `../../proto` is reachable; `CHECKPOINTD_PROTO_DIR` points elsewhere. A
source tree that already holds generated stubs and has no protos (an unpacked sdist) builds as is.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
OUT = HERE / "src" / "checkpointd" / "_proto"
PROTOS = ("checkpoint/v1/checkpoint.proto", "checkpoint/v1/task.proto")
# protoc names imports after the proto path (`from checkpoint.v1 import x_pb2`); inside the
# package they must be relative to it, or the stubs would need a top-level `checkpoint` package.
IMPORT = re.compile(r"^from checkpoint\.v1 import (\w+_pb2)", re.MULTILINE)


def proto_dir() -> Path | None:
    configured = os.environ.get("CHECKPOINTD_PROTO_DIR")
    candidate = Path(configured) if configured else HERE.parent.parent / "proto"
    return candidate if (candidate / PROTOS[0]).is_file() else None


def generate_stubs() -> None:
    source = proto_dir()
    if source is None:
        if (OUT / "checkpoint_pb2.py").is_file():
            return
        sys.exit(
            "checkpointd: no protos found at ../../proto (set CHECKPOINTD_PROTO_DIR) "
            "and no generated stubs in the source tree"
        )
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    scratch = OUT / "_build"
    scratch.mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"-I{source}",
        f"-I{include}",
        f"--python_out={scratch}",
        f"--pyi_out={scratch}",
        f"--grpc_python_out={scratch}",
        *(str(source / proto) for proto in PROTOS),
    ]
    if protoc.main(args) != 0:
        sys.exit("checkpointd: protoc failed on " + ", ".join(PROTOS))
    for generated in sorted((scratch / "checkpoint" / "v1").iterdir()):
        if generated.suffix not in (".py", ".pyi"):
            continue
        text = IMPORT.sub(r"from . import \1", generated.read_text())
        (OUT / generated.name).write_text(text)
    for leftover in sorted(scratch.rglob("*"), reverse=True):
        leftover.rmdir() if leftover.is_dir() else leftover.unlink()
    scratch.rmdir()


class BuildWithStubs(build_py):
    """Generates the stubs first, so the package's module scan finds them."""

    def run(self) -> None:
        generate_stubs()
        super().run()


class SdistWithStubs(sdist):
    """Ships the generated stubs in the sdist, which carries no protos."""

    def run(self) -> None:
        generate_stubs()
        super().run()


setup(cmdclass={"build_py": BuildWithStubs, "sdist": SdistWithStubs})
