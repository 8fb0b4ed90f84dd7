"""
PyTorch frontend: a config-driven model zoo exported to linalg-on-tensors
MLIR with torch-mlir (see `torch_export`). Importing this package needs no
torch; `models` and `torch_export` need ``torch==2.13.0`` and ``torch-mlir``
(the ``torch`` extra).
"""

from hyperoffload.frontend.configs import CONFIGS, MODES, ModelConfig, get_config

__all__ = ["CONFIGS", "MODES", "ModelConfig", "get_config"]
