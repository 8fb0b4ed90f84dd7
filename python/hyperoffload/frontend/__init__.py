"""
PyTorch frontend: a config-driven model zoo exported to linalg-on-tensors
MLIR with torch-mlir (see `torch_export`). Importing this package needs no
torch; `models` and `torch_export` need ``torch==2.13.0`` and ``torch-mlir``
(the ``torch`` extra). `export(model, example_inputs, mode=...)` exports
your own `nn.Module` (`export_module`).
"""

from typing import Any

from hyperoffload.frontend.configs import CONFIGS, MODES, ModelConfig, get_config


def export(model: Any, example_inputs: Any, **options: Any) -> Any:
    """
    Export your own `nn.Module` (`hyperoffload.frontend.export_module.export`;
    imported on first call, so that this package needs no torch).
    """
    from hyperoffload.frontend.export_module import export as export_module

    return export_module(model, example_inputs, **options)


__all__ = ["CONFIGS", "MODES", "ModelConfig", "export", "get_config"]
