"""
The project's own decompositions for exporting any `nn.Module`
(`hyperoffload.frontend.export_module`): the ops whose PyTorch or
torch-mlir decompositions leave a scatter (`tm_tensor`), an in-place update
or a zero-sized tensor that upstream MLIR cannot run, written in ops that
lower to linalg:

* ``max_pool2d_with_indices_backward``: for each kernel offset, the
  gradient where the forward's index chose that offset, spread back to the
  input by strided zero-interleaving and padding (PyTorch's first-maximum
  rule, through the forward's indices);
* ``avg_pool2d_backward`` and ``_adaptive_avg_pool2d_backward`` (input
  sizes divisible by the output's): the gradient over the window's divisor,
  spread back the same way;
* ``native_batch_norm`` (BatchNorm in training mode): the batch's
  statistics, the running statistics updated by a ``copy_`` that the
  exporter's functionalisation turns into new values;
* ``_native_batch_norm_legit_no_training`` (BatchNorm in eval mode): the
  normalisation, with the running statistics as its second and third
  results instead of PyTorch's zero-sized ones;
* ``scaled_dot_product_attention``: its math, grouped-query attention by
  repeating the key and value heads; `MathAttention` routes the call there
  above autograd, which then differentiates the math (the fused kernels'
  backward does not lower);
* ``native_group_norm``: reductions over a ``(batch, groups, rest)``
  view (PyTorch's decomposition gathers the statistics per element);
* ``convolution_backward`` of a transposed convolution: ordinary
  convolutions;
* the embedding's and the NLL loss's backward passes as one-hot products
  (`hyperoffload.frontend.torch_export.decomposition_table`).

```python
table = export_decompositions()
gm = make_fx(step, tracing_mode="fake", decomposition_table=table)(*args)
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor

from hyperoffload.frontend.torch_export import decomposition_table


def _pair(
    value: Sequence[int] | int, default: Sequence[int] | None = None
) -> tuple[int, int]:
    """A 2-d window parameter from PyTorch's int-or-list form."""
    if isinstance(value, int):
        return (value, value)
    if len(value) == 0 and default is not None:
        return (default[0], default[1])
    if len(value) == 1:
        return (value[0], value[0])
    return (value[0], value[1])


def _spread(part: Tensor, offset: int, stride: int, size: int, dim: int) -> Tensor:
    """
    `part` (output positions along `dim`) placed at ``offset + stride * o`` in
    a zero tensor of `size` positions along `dim` (positions past `size`
    dropped): zero-interleaved by a pad and a reshape, then padded or cut.
    """
    n = part.shape[dim]
    moved = part.movedim(dim, -1)
    if stride > 1:
        moved = F.pad(moved.unsqueeze(-1), (0, stride - 1)).flatten(-2)
        moved = moved[..., : stride * (n - 1) + 1]
    length = moved.shape[-1]
    end = offset + length
    if end > size:
        moved = moved[..., : size - offset]
        end = size
    moved = F.pad(moved, (offset, size - end))
    return moved.movedim(-1, dim)


def _positions(
    out: int, kernel_at: int, stride: int, pad: int, dilation: int
) -> Tensor:
    """Input positions ``o * stride - pad + kernel_at * dilation`` of each output `o`."""
    return torch.arange(out) * stride + (kernel_at * dilation - pad)


def _window_backward(
    grad: Tensor,
    in_size: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    weight: Callable[[int, int, Tensor, Tensor], Tensor],
) -> Tensor:
    """
    The gradient of a 2-d window op: for each kernel offset ``(i, j)``, the
    part ``weight(i, j, rows, cols)`` of `grad` (rows and cols the input
    positions the offset reads) summed into the (padded) input positions it
    came from, the padding cut off at the end.
    """
    height, width = in_size
    out_h, out_w = grad.shape[-2:]
    padded_h, padded_w = height + 2 * padding[0], width + 2 * padding[1]
    total: Tensor | None = None
    for i in range(kernel[0]):
        rows = _positions(out_h, i, stride[0], padding[0], dilation[0])
        for j in range(kernel[1]):
            cols = _positions(out_w, j, stride[1], padding[1], dilation[1])
            part = weight(i, j, rows, cols)
            part = _spread(part, i * dilation[0], stride[0], padded_h, -2)
            part = _spread(part, j * dilation[1], stride[1], padded_w, -1)
            total = part if total is None else total + part
    assert total is not None, "a window has at least one position"
    return total[..., padding[0] : padding[0] + height, padding[1] : padding[1] + width]


def _in_bounds(rows: Tensor, cols: Tensor, height: int, width: int) -> Tensor:
    """Whether each (row, col) pair lies in the input: (out_h, out_w) bool."""
    row_ok = (rows >= 0) & (rows < height)
    col_ok = (cols >= 0) & (cols < width)
    return row_ok.unsqueeze(-1) & col_ok.unsqueeze(0)


def max_pool2d_with_indices_backward(
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    indices: Tensor,
) -> Tensor:
    """
    Each output's gradient goes to the input position its forward index
    names (the first maximum of its window, as PyTorch chooses).
    """
    kernel = _pair(kernel_size)
    strides = _pair(stride, kernel)
    pads, dilations = _pair(padding), _pair(dilation)
    height, width = self.shape[-2:]

    def chosen(i: int, j: int, rows: Tensor, cols: Tensor) -> Tensor:
        flat = rows.unsqueeze(-1) * width + cols.unsqueeze(0)
        hit = (indices == flat) & _in_bounds(rows, cols, height, width)
        return torch.where(hit, grad_output, torch.zeros_like(grad_output))

    return _window_backward(
        grad_output, (height, width), kernel, strides, pads, dilations, chosen
    )


def avg_pool2d_backward(
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    """Each output's gradient over its window's divisor, to every position it read."""
    kernel = _pair(kernel_size)
    strides = _pair(stride, kernel)
    pads = _pair(padding)
    height, width = self.shape[-2:]
    out_h, out_w = grad_output.shape[-2:]
    if divisor_override:
        divisor: Tensor | float = float(divisor_override)
    else:
        count = torch.zeros(out_h, out_w, dtype=torch.int64)
        for i in range(kernel[0]):
            rows = _positions(out_h, i, strides[0], pads[0], 1)
            for j in range(kernel[1]):
                cols = _positions(out_w, j, strides[1], pads[1], 1)
                if count_include_pad:
                    inside = _in_bounds(
                        rows + pads[0],
                        cols + pads[1],
                        height + 2 * pads[0],
                        width + 2 * pads[1],
                    )
                else:
                    inside = _in_bounds(rows, cols, height, width)
                count = count + inside.to(torch.int64)
        divisor = count.to(grad_output.dtype)
    share = grad_output / divisor

    def spread(i: int, j: int, rows: Tensor, cols: Tensor) -> Tensor:
        inside = _in_bounds(rows, cols, height, width)
        return torch.where(inside, share, torch.zeros_like(share))

    return _window_backward(
        share, (height, width), kernel, strides, pads, (1, 1), spread
    )


def adaptive_avg_pool2d_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """
    The adaptive average pool's gradient where the input's sizes are
    multiples of the output's (the windows are then a plain average pool's).
    """
    height, width = self.shape[-2:]
    out_h, out_w = grad_output.shape[-2:]
    if height % out_h or width % out_w:
        raise NotImplementedError(
            f"adaptive average pooling from {height}x{width} to {out_h}x{out_w}: "
            "the input's sizes must be multiples of the output's"
        )
    kernel = [height // out_h, width // out_w]
    return avg_pool2d_backward(
        grad_output, self, kernel, kernel, [0, 0], False, True, None
    )


def batch_norm_no_training(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor,
    running_var: Tensor,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """
    BatchNorm in eval mode: ``(x - mean) / sqrt(var + eps) * weight + bias``
    over the running statistics, which are also its second and third results
    (PyTorch returns zero-sized tensors, which torch-mlir casts unsoundly).
    """
    shape = [1, -1] + [1] * (input.dim() - 2)
    inverse = torch.rsqrt(running_var + eps)
    out = (input - running_mean.reshape(shape)) * inverse.reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, running_mean, running_var


def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """
    BatchNorm: in training, over the batch's mean and biased variance (the
    running statistics, when given, move by `momentum` towards the mean and
    the unbiased variance, in place); in eval mode `batch_norm_no_training`.
    Returns the output, the mean and the inverse standard deviation that
    the backward pass reads.
    """
    if not training:
        assert running_mean is not None
        assert running_var is not None
        out, _, _ = batch_norm_no_training(
            input, weight, bias, running_mean, running_var, momentum, eps
        )
        return out, running_mean, torch.rsqrt(running_var + eps)
    dims = [0, *range(2, input.dim())]
    shape = [1, -1] + [1] * (input.dim() - 2)
    mean = input.mean(dims)
    centred = input - mean.reshape(shape)
    var = (centred * centred).mean(dims)
    inverse = torch.rsqrt(var + eps)
    out = centred * inverse.reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    count = input.numel() // input.shape[1]
    if running_mean is not None:
        running_mean.copy_(momentum * mean + (1 - momentum) * running_mean)
    if running_var is not None:
        unbiased = var * (count / max(count - 1, 1))
        running_var.copy_(momentum * unbiased + (1 - momentum) * running_var)
    return out, mean, inverse


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """
    Attention as its math (``softmax(q kᵀ · scale + mask) v``), so that
    autograd differentiates the math (PyTorch's fused CPU kernels have a
    backward torch-mlir cannot lower); with `enable_gqa` each key/value head
    serves ``heads / kv_heads`` query heads (repeated, as PyTorch does).
    """
    if dropout_p:
        raise NotImplementedError("attention dropout (export in eval mode or with p=0)")
    heads, kv_heads = query.shape[-3], key.shape[-3]
    if enable_gqa and heads != kv_heads:
        key = key.repeat_interleave(heads // kv_heads, dim=-3)
        value = value.repeat_interleave(heads // kv_heads, dim=-3)
    factor = scale if scale is not None else query.shape[-1] ** -0.5
    scores = (query * factor) @ key.transpose(-2, -1)
    n, m = scores.shape[-2:]
    if is_causal:
        keep = torch.ones(n, m, dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ value


def convolution_backward(
    grad_output: Tensor,
    input: Tensor,
    weight: Tensor,
    bias_sizes: Sequence[int] | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> Any:
    """
    A transposed convolution's backward pass as ordinary convolutions
    (torch-mlir lowers only the ordinary one's): the input's gradient is
    the forward convolution of the output's gradient by the same weight, the
    weight's gradient that of an ordinary convolution of the output's
    gradient whose own output gradient is the input. Ordinary convolutions
    are left to torch-mlir (`NotImplemented`).
    """
    if not transposed:
        return NotImplemented
    aten: Any = cast(Any, torch.ops).aten
    zeros = [0] * len(stride)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = aten.convolution.default(
            grad_output, weight, None, stride, padding, dilation, False, zeros, groups
        )
    if output_mask[1]:
        grad_weight = aten.convolution_backward.default(
            input,
            grad_output,
            weight,
            None,
            stride,
            padding,
            dilation,
            False,
            zeros,
            groups,
            [False, True, False],
        )[1]
    if output_mask[2]:
        grad_bias = grad_output.sum([0, *range(2, grad_output.dim())])
    return grad_input, grad_weight, grad_bias


class MathAttention(torch.overrides.TorchFunctionMode):
    """
    Routes `F.scaled_dot_product_attention` to `scaled_dot_product_attention`
    above autograd, so that a training step differentiates its math.
    """

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        if func is F.scaled_dot_product_attention:
            return scaled_dot_product_attention(*args, **(kwargs or {}))
        return func(*args, **(kwargs or {}))


def native_group_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    n: int,
    channels: int,
    hw: int,
    group: int,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """
    GroupNorm over a ``(batch, groups, rest)`` view: the statistics are
    reductions of the view and the affine parameters broadcast per channel
    (PyTorch's decomposition gathers them per element, a `tensor.extract` in
    every element's body). Returns the output, the mean and the inverse
    standard deviation, ``(batch, groups)`` each.
    """
    grouped = input.reshape(n, group, -1)
    mean = grouped.mean(-1, keepdim=True)
    centred = grouped - mean
    var = (centred * centred).mean(-1, keepdim=True)
    inverse = torch.rsqrt(var + eps)
    out = (centred * inverse).reshape(input.shape)
    shape = [1, channels] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean.reshape(n, group), inverse.reshape(n, group)


def export_decompositions() -> dict[Any, Callable[..., Any]]:
    """
    The zoo's decomposition table (`decomposition_table`) with the ops of
    this module: what `export_module` traces any model with.
    """
    aten: Any = cast(Any, torch.ops).aten
    table = decomposition_table()
    table[aten.native_batch_norm.default] = native_batch_norm
    table[aten.scaled_dot_product_attention.default] = scaled_dot_product_attention
    table[aten.convolution_backward.default] = convolution_backward
    table[aten.native_group_norm.default] = native_group_norm
    table[aten.max_pool2d_with_indices_backward.default] = (
        max_pool2d_with_indices_backward
    )
    table[aten.avg_pool2d_backward.default] = avg_pool2d_backward
    table[aten._adaptive_avg_pool2d_backward.default] = adaptive_avg_pool2d_backward
    table[aten._native_batch_norm_legit_no_training.default] = batch_norm_no_training
    return table
