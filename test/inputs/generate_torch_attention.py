"""
Regenerate `torch_attention.mlir`: a small attention block exported by
torch-mlir to linalg-on-tensors, exactly as torch-mlir prints it (named ops
such as `linalg.batch_matmul`, `linalg.matmul`, `linalg.fill`).

Needs `torch==2.13.0` and `torch-mlir` (not dependencies of the project yet):

    python test/inputs/generate_torch_attention.py > test/inputs/torch_attention.mlir
"""

import torch
from torch_mlir import fx


class Attention(torch.nn.Module):
    def __init__(self, hidden: int = 16, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = torch.nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        shape = (batch, seq, self.heads, hidden // self.heads)
        q, k, v = (
            t.reshape(shape).transpose(1, 2).reshape(-1, seq, hidden // self.heads)
            for t in (q, k, v)
        )
        scores = torch.bmm(q, k.transpose(1, 2)) / (hidden // self.heads) ** 0.5
        context = torch.bmm(torch.softmax(scores, dim=-1), v)
        context = (
            context.reshape(batch, self.heads, seq, -1)
            .transpose(1, 2)
            .reshape(batch, seq, hidden)
        )
        return torch.relu(self.out(context))


def main() -> None:
    torch.manual_seed(0)
    module = fx.export_and_import(
        Attention().eval(),
        torch.randn(2, 4, 16),
        output_type="linalg-on-tensors",
        func_name="attention",
    )
    print(module)


if __name__ == "__main__":
    main()
