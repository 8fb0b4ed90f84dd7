"""
Four small models nobody wrote for HyperOffload, as a user brings them
(`test_own_model.py` exports them with ``hyperoffload-gen --module
own_models:NAME``): each factory returns ``(model, example_inputs,
targets)`` on seeded weights.
"""

from __future__ import annotations

from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hyperoffload.frontend import annotations as ho


def _seeded() -> None:
    """Seed PyTorch's generator: every factory makes the same weights and inputs."""
    cast(Any, torch).manual_seed(0)


# ---------------------------------------------------------------- ResNet-style CNN


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with BatchNorm and a skip (strided: a 1x1 projection)."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = (
            nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class TinyResNet(nn.Module):
    """Stem, max-pooling, two basic blocks, global average pool, classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.fc = nn.Linear(16, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.pool(F.relu(self.bn(self.stem(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def resnet() -> tuple[nn.Module, tuple[Tensor], tuple[Tensor]]:
    _seeded()
    model = TinyResNet()
    return model, (torch.randn(2, 3, 16, 16),), (torch.tensor([3, 7]),)


# ---------------------------------------------------------------- ViT-style encoder


class EncoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (
            t.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
            for t in (q, k, v)
        )
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyViT(nn.Module):
    """Patch embedding (a strided convolution), class token, two encoder blocks."""

    def __init__(self, dim: int = 16, patch: int = 4, size: int = 16) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(dim, 2) for _ in range(2))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, images: Tensor) -> Tensor:
        x = self.embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def vit() -> tuple[nn.Module, tuple[Tensor], tuple[()]]:
    _seeded()
    return TinyViT().eval(), (torch.randn(2, 3, 16, 16),), ()


# ------------------------------------------------------------- Qwen-style decoder


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + turned * sin


class DecoderLayer(nn.Module):
    """GQA attention with qkv bias and RoPE, SwiGLU MLP, RMSNorm."""

    def __init__(self, dim: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.norm1 = RMSNorm(dim)
        self.q = nn.Linear(dim, heads * self.head_dim)
        self.k = nn.Linear(dim, kv_heads * self.head_dim)
        self.v = nn.Linear(dim, kv_heads * self.head_dim)
        self.o = nn.Linear(heads * self.head_dim, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.gate = nn.Linear(dim, 2 * dim, bias=False)
        self.up = nn.Linear(dim, 2 * dim, bias=False)
        self.down = nn.Linear(2 * dim, dim, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, n, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).reshape(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).reshape(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).reshape(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyQwen(nn.Module):
    """Embedding tied to the LM head, one decoder layer, final RMSNorm."""

    def __init__(self, vocab: int = 64, dim: int = 16, seq: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([DecoderLayer(dim, 4, 2)])
        self.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight
        head_dim = dim // 4
        freq = 1.0 / 10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(seq).float(), freq)
        self.register_buffer(
            "cos", torch.cat([angles, angles], -1).cos(), persistent=False
        )
        self.register_buffer(
            "sin", torch.cat([angles, angles], -1).sin(), persistent=False
        )

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin)
        return self.lm_head(self.norm(x))


def qwen() -> tuple[nn.Module, tuple[Tensor], tuple[Tensor]]:
    _seeded()
    model = TinyQwen()
    tokens = torch.randint(0, 64, (2, 8))
    return model, (tokens,), (torch.roll(tokens, -1, dims=1),)


# ---------------------------------------------------------------- U-Net-style


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.GroupNorm(2, cout)

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(self.norm(self.conv(x)))


class TinyUNet(nn.Module):
    """Two levels: average-pooled down, transposed-convolution up, skips concatenated."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.enc1 = ConvBlock(1, width)
        self.enc2 = ConvBlock(width, 2 * width)
        self.mid = nn.Conv2d(2 * width, 2 * width, 3, padding=2, dilation=2, groups=2)
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.dec = ConvBlock(2 * width, width)
        self.out = nn.Conv2d(width, 1, 1)

    def forward(self, x: Tensor) -> Tensor:
        s1 = self.enc1(x)
        s2 = self.enc2(F.avg_pool2d(s1, 2))
        m = F.silu(self.mid(s2)) + s2
        u = self.up(m)
        return self.out(self.dec(torch.cat([u, s1], dim=1)))


def unet() -> tuple[nn.Module, tuple[Tensor], tuple[Tensor]]:
    _seeded()
    return TinyUNet(), (torch.randn(2, 1, 8, 8),), (torch.randn(2, 1, 8, 8),)


# ------------------------------------------------------------ not supported


class RunningTotal(nn.Module):
    """A linear layer, then a cumulative sum (torch-mlir lowers it to tm_tensor.scan)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: Tensor) -> Tensor:
        return torch.cumsum(self.fc(x), dim=-1)  # the unsupported line


def running_total() -> tuple[nn.Module, tuple[Tensor]]:
    _seeded()
    return RunningTotal(), (torch.randn(2, 4),)


# ---------------------------------------------------------------- annotated


class TwoLayers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def annotated() -> tuple[nn.Module, tuple[Tensor]]:
    """`fc1` marked remote, `fc2.weight` fetched at least 2 ops ahead."""
    _seeded()
    model = TwoLayers()
    ho.remote(model.fc1)
    ho.prefetch(model.fc2.weight, distance=2)
    return model, (torch.randn(2, 4),)
