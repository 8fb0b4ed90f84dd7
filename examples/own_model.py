"""
Your own model for `hyperoffload-gen --module examples.own_model:cnn`
(README, "Your own model"; docs/own-model.md): a small ResNet-style CNN
with BatchNorm and max-pooling, and the factory the command calls, which
returns the model, example inputs and the loss's targets.
"""

from __future__ import annotations

from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class SmallCNN(nn.Module):
    """Convolution, BatchNorm, max-pooling, a residual block, a classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, classes)

    def forward(self, images: Tensor) -> Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.stem(images))), 2)
        x = F.relu(x + self.bn2(self.conv(x)))
        return self.fc(x.mean((2, 3)))


def cnn() -> tuple[nn.Module, tuple[Tensor], tuple[Tensor]]:
    """The model on seeded weights, a batch of two 16x16 images and their labels."""
    cast(Any, torch).manual_seed(0)
    return SmallCNN(), (torch.randn(2, 3, 16, 16),), (torch.tensor([1, 4]),)
