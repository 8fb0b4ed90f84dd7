"""
Random programs for differential testing, as MLIR text (linalg on tensors):

- `random_dag`: a DAG of elementwise, unary, contraction, reduction and view
  ops over square tensors, with tagged arguments (parameters, optimizer
  state, KV cache in the remote pool or host memory) and written-back
  results; a generalisation of the generators of
  `test/python/passes/test_insert_properties.py`;
- `random_transformer`: a transformer-like step (RMSNorm, single-head
  attention with a softmax, a SiLU MLP, residuals) of a few layers, as a
  forward pass, a decode step over a per-layer KV cache, or a training step
  with weight gradients and optimizer updates written back.

Both are deterministic functions of a `random.Random`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Shape = tuple[int, ...]
Body = Callable[[list[str], str], tuple[list[str], str]]
"""Given the block arguments of the inputs and of the output, the body lines
and the value it yields."""

REMOTE = "#hyperoffload.tier<remote>"
HOST = "#hyperoffload.tier<host>"


@dataclass(frozen=True)
class Program:
    kind: str
    """`dag`, `transformer-forward`, `transformer-decode` or `transformer-train`."""
    text: str


def _float(value: float) -> str:
    """An MLIR float literal (it needs a decimal point)."""
    return f"{value:.9e}"


def _map(rank: int, results: Sequence[str]) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


def arg_attributes(tier: str | None, category: str | None) -> str:
    """The attribute dictionary of a tagged argument ('' when untagged)."""
    entries: list[str] = []
    if tier is not None:
        entries.append(f"hyperoffload.tier = {tier}")
    if category is not None:
        entries.append(f'hyperoffload.category = "{category}"')
    return f" {{{', '.join(entries)}}}" if entries else ""


class Builder:
    """Emits the body of one function; every value gets a fresh name."""

    def __init__(self, element: str = "f32"):
        self.element = element
        self.lines: list[str] = []
        self.counter = 0

    def type(self, shape: Shape) -> str:
        return f"tensor<{''.join(f'{d}x' for d in shape)}{self.element}>"

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def scalar(self, value: float, body: list[str]) -> str:
        name = self.fresh("s")
        body.append(f"    {name} = arith.constant {_float(value)} : {self.element}")
        return name

    def empty(self, shape: Shape) -> str:
        name = self.fresh("e")
        self.lines.append(f"  {name} = tensor.empty() : {self.type(shape)}")
        return name

    def filled(self, shape: Shape, value: float) -> str:
        empty = self.empty(shape)
        constant, name = self.fresh("c"), self.fresh("f")
        self.lines.append(
            f"  {constant} = arith.constant {_float(value)} : {self.element}"
        )
        self.lines.append(
            f"  {name} = linalg.fill ins({constant} : {self.element}) "
            f"outs({empty} : {self.type(shape)}) -> {self.type(shape)}"
        )
        return name

    def generic(
        self,
        inputs: Sequence[tuple[str, Shape, Sequence[str]]],
        out_shape: Shape,
        out_results: Sequence[str],
        iterators: Sequence[str],
        body: Body,
        init: str | None = None,
    ) -> str:
        """A `linalg.generic` over `len(iterators)` loops; each input is
        (value, shape, the dims its map reads)."""
        rank = len(iterators)
        init = init if init is not None else self.empty(out_shape)
        maps = [_map(rank, dims) for _, _, dims in inputs] + [_map(rank, out_results)]
        kinds = ", ".join(f'"{k}"' for k in iterators)
        ins = ", ".join(v for v, _, _ in inputs)
        in_types = ", ".join(self.type(s) for _, s, _ in inputs)
        block_args = [self.fresh("b") for _ in inputs]
        out_arg = self.fresh("b")
        body_lines, result = body(block_args, out_arg)
        name = self.fresh()
        signature = ", ".join(f"{a}: {self.element}" for a in [*block_args, out_arg])
        out_type = self.type(out_shape)
        self.lines += [
            f"  {name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f"iterator_types = [{kinds}]}} ins({ins} : {in_types}) "
            f"outs({init} : {out_type}) {{",
            f"  ^bb0({signature}):",
            *body_lines,
            f"    linalg.yield {result} : {self.element}",
            f"  }} -> {out_type}",
        ]
        return name

    # --- operations on 2-d tensors ---------------------------------------------

    def binary(self, op: str, a: str, b: str, shape: Shape) -> str:
        dims = [f"d{i}" for i in range(len(shape))]

        def body(args: list[str], _: str) -> tuple[list[str], str]:
            result = self.fresh("s")
            return [
                f"    {result} = arith.{op} {args[0]}, {args[1]} : {self.element}"
            ], result

        return self.generic(
            [(a, shape, dims), (b, shape, dims)],
            shape,
            dims,
            ["parallel"] * len(shape),
            body,
        )

    def unary(self, op: str, a: str, shape: Shape) -> str:
        dims = [f"d{i}" for i in range(len(shape))]

        def body(args: list[str], _: str) -> tuple[list[str], str]:
            lines: list[str] = []
            result = self.fresh("s")
            if op == "negf":
                lines.append(f"    {result} = arith.negf {args[0]} : {self.element}")
            elif op == "exp":
                lines.append(f"    {result} = math.exp {args[0]} : {self.element}")
            elif op == "relu":
                zero = self.scalar(0.0, lines)
                lines.append(
                    f"    {result} = arith.maximumf {args[0]}, {zero} : {self.element}"
                )
            elif op == "silu":  # x / (1 + exp(-x))
                one = self.scalar(1.0, lines)
                neg, exp, den = self.fresh("s"), self.fresh("s"), self.fresh("s")
                lines += [
                    f"    {neg} = arith.negf {args[0]} : {self.element}",
                    f"    {exp} = math.exp {neg} : {self.element}",
                    f"    {den} = arith.addf {one}, {exp} : {self.element}",
                    f"    {result} = arith.divf {args[0]}, {den} : {self.element}",
                ]
            else:  # "scale"
                half = self.scalar(0.5, lines)
                lines.append(
                    f"    {result} = arith.mulf {args[0]}, {half} : {self.element}"
                )
            return lines, result

        return self.generic(
            [(a, shape, dims)], shape, dims, ["parallel"] * len(shape), body
        )

    def matmul(
        self,
        a: str,
        b: str,
        m: int,
        n: int,
        k: int,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ) -> str:
        """`a (m x k) . b (k x n)`, either read transposed (a: k x m, b: n x k)."""
        init = self.filled((m, n), 0.0)
        a_dims, a_shape = (
            (["d2", "d0"], (k, m)) if transpose_a else (["d0", "d2"], (m, k))
        )
        b_dims, b_shape = (
            (["d1", "d2"], (n, k)) if transpose_b else (["d2", "d1"], (k, n))
        )

        def body(args: list[str], out: str) -> tuple[list[str], str]:
            product, total = self.fresh("s"), self.fresh("s")
            return [
                f"    {product} = arith.mulf {args[0]}, {args[1]} : {self.element}",
                f"    {total} = arith.addf {out}, {product} : {self.element}",
            ], total

        return self.generic(
            [(a, a_shape, a_dims), (b, b_shape, b_dims)],
            (m, n),
            ["d0", "d1"],
            ["parallel", "parallel", "reduction"],
            body,
            init,
        )

    def named_matmul(self, a: str, b: str, n: int) -> str:
        init = self.filled((n, n), 0.0)
        name = self.fresh()
        t = self.type((n, n))
        self.lines.append(
            f"  {name} = linalg.matmul ins({a}, {b} : {t}, {t}) outs({init} : {t}) -> {t}"
        )
        return name

    def tensor_arith(self, op: str, a: str, b: str, shape: Shape) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = arith.{op} {a}, {b} : {self.type(shape)}")
        return name

    def row_reduce(self, op: str, a: str, rows: int, cols: int) -> str:
        """`op` (`addf` or `maximumf`) over each row: a (rows x cols) -> (rows)."""
        init = self.filled((rows,), -3.0e38 if op == "maximumf" else 0.0)

        def body(args: list[str], out: str) -> tuple[list[str], str]:
            result = self.fresh("s")
            return [
                f"    {result} = arith.{op} {out}, {args[0]} : {self.element}"
            ], result

        return self.generic(
            [(a, (rows, cols), ["d0", "d1"])],
            (rows,),
            ["d0"],
            ["parallel", "reduction"],
            body,
            init,
        )

    def row_broadcast(self, op: str, a: str, row: str, rows: int, cols: int) -> str:
        """`a[i, j] op row[i]`."""

        def body(args: list[str], _: str) -> tuple[list[str], str]:
            result = self.fresh("s")
            return [
                f"    {result} = arith.{op} {args[0]}, {args[1]} : {self.element}"
            ], result

        return self.generic(
            [(a, (rows, cols), ["d0", "d1"]), (row, (rows,), ["d0"])],
            (rows, cols),
            ["d0", "d1"],
            ["parallel", "parallel"],
            body,
        )

    def view_round_trip(self, a: str, rows: int, cols: int) -> str:
        """Collapse to 1-d and expand back: a view sharing `a`'s buffer."""
        flat, back = self.fresh("c"), self.fresh("x")
        self.lines += [
            f"  {flat} = tensor.collapse_shape {a} [[0, 1]] : {self.type((rows, cols))} "
            f"into {self.type((rows * cols,))}",
            f"  {back} = tensor.expand_shape {flat} [[0, 1]] output_shape [{rows}, {cols}] "
            f": {self.type((rows * cols,))} into {self.type((rows, cols))}",
        ]
        return back

    # --- transformer pieces ----------------------------------------------------

    def rmsnorm(self, x: str, gain: str, rows: int, cols: int) -> str:
        squares = self.unary_square(x, rows, cols)
        total = self.row_reduce("addf", squares, rows, cols)

        def body(args: list[str], _: str) -> tuple[list[str], str]:
            lines: list[str] = []
            eps = self.scalar(1e-05, lines)
            scale = self.scalar(1.0 / cols, lines)
            mean, shifted, inv, normed, out = (self.fresh("s") for _ in range(5))
            lines += [
                f"    {mean} = arith.mulf {args[1]}, {scale} : {self.element}",
                f"    {shifted} = arith.addf {mean}, {eps} : {self.element}",
                f"    {inv} = math.rsqrt {shifted} : {self.element}",
                f"    {normed} = arith.mulf {args[0]}, {inv} : {self.element}",
                f"    {out} = arith.mulf {normed}, {args[2]} : {self.element}",
            ]
            return lines, out

        return self.generic(
            [
                (x, (rows, cols), ["d0", "d1"]),
                (total, (rows,), ["d0"]),
                (gain, (cols,), ["d1"]),
            ],
            (rows, cols),
            ["d0", "d1"],
            ["parallel", "parallel"],
            body,
        )

    def unary_square(self, x: str, rows: int, cols: int) -> str:
        def body(args: list[str], _: str) -> tuple[list[str], str]:
            result = self.fresh("s")
            return [
                f"    {result} = arith.mulf {args[0]}, {args[0]} : {self.element}"
            ], result

        return self.generic(
            [(x, (rows, cols), ["d0", "d1"])],
            (rows, cols),
            ["d0", "d1"],
            ["parallel", "parallel"],
            body,
        )

    def softmax(self, scores: str, rows: int, cols: int) -> str:
        top = self.row_reduce("maximumf", scores, rows, cols)
        shifted = self.row_broadcast("subf", scores, top, rows, cols)
        exp = self.unary("exp", shifted, (rows, cols))
        total = self.row_reduce("addf", exp, rows, cols)
        return self.row_broadcast("divf", exp, total, rows, cols)

    def sum_of_squares(self, x: str, rows: int, cols: int) -> str:
        """A 0-d loss: the sum of the squares of `x`."""
        init = self.filled((), 0.0)

        def body(args: list[str], out: str) -> tuple[list[str], str]:
            square, total = self.fresh("s"), self.fresh("s")
            return [
                f"    {square} = arith.mulf {args[0]}, {args[0]} : {self.element}",
                f"    {total} = arith.addf {out}, {square} : {self.element}",
            ], total

        return self.generic(
            [(x, (rows, cols), ["d0", "d1"])],
            (),
            [],
            ["reduction", "reduction"],
            body,
            init,
        )

    def momentum(self, state: str, grad: str, shape: Shape) -> str:
        """`0.5 * state + grad`."""
        return self._scaled_pair(state, grad, shape, 0, 0.5, "addf")

    def sgd(self, weight: str, step: str, shape: Shape) -> str:
        """`weight - 0.125 * step`."""
        return self._scaled_pair(weight, step, shape, 1, 0.125, "subf")

    def _scaled_pair(
        self, a: str, b: str, shape: Shape, scaled: int, factor: float, op: str
    ) -> str:
        """`a op b`, operand `scaled` (0: a, 1: b) multiplied by `factor` first."""

        def body(args: list[str], _: str) -> tuple[list[str], str]:
            lines: list[str] = []
            constant = self.scalar(factor, lines)
            product, result = self.fresh("s"), self.fresh("s")
            operands = list(args)
            operands[scaled] = product
            lines += [
                f"    {product} = arith.mulf {args[scaled]}, {constant} : {self.element}",
                f"    {result} = arith.{op} {operands[0]}, {operands[1]} : {self.element}",
            ]
            return lines, result

        dims = ["d0", "d1"]
        return self.generic(
            [(a, shape, dims), (b, shape, dims)], shape, dims, ["parallel"] * 2, body
        )


@dataclass
class _Argument:
    name: str
    shape: Shape
    attributes: str


@dataclass
class _Result:
    value: str
    shape: Shape
    write_back: bool = False


def _function(
    name: str, builder: Builder, args: Sequence[_Argument], results: Sequence[_Result]
) -> str:
    params = ", ".join(f"{a.name}: {builder.type(a.shape)}{a.attributes}" for a in args)
    out_types = ", ".join(
        builder.type(r.shape)
        + (f" {{hyperoffload.tier = {REMOTE}}}" if r.write_back else "")
        for r in results
    )
    values = ", ".join(r.value for r in results)
    plain_types = ", ".join(builder.type(r.shape) for r in results)
    return "\n".join(
        [
            f"func.func @{name}({params}) -> ({out_types}) {{",
            *builder.lines,
            f"  func.return {values} : {plain_types}",
            "}",
            "",
        ]
    )


def _random_tag(rng: random.Random) -> str:
    tier, category = rng.choice(
        [
            (None, None),
            (None, None),
            (REMOTE, None),
            (REMOTE, "params"),
            (REMOTE, "optimizer"),
            (REMOTE, "kv"),
            (HOST, "params"),
            (None, "activations"),
        ]
    )
    return arg_attributes(tier, category)


def random_dag(rng: random.Random) -> Program:
    """A random DAG of 2 to 16 ops over n x n tensors (f32, sometimes bf16)."""
    element = "bf16" if rng.random() < 0.15 else "f32"
    builder = Builder(element)
    n = rng.choice([4, 8, 16])
    shape = (n, n)
    args = [
        _Argument(f"%a{i}", shape, _random_tag(rng)) for i in range(rng.randint(1, 4))
    ]
    values = [a.name for a in args]
    kinds = [
        "addf", "mulf", "subf", "maximumf", "negf", "relu", "scale", "matmul",
        "matmul", "named_matmul", "tensor_addf", "tensor_mulf", "softmax", "view",
    ]  # fmt: skip
    if element == "f32":
        kinds += ["exp", "silu"]

    def operand() -> str:
        # mostly recent values (short lifetimes), sometimes any (long gaps)
        if rng.random() < 0.6:
            return rng.choice(values[-3:])
        return rng.choice(values)

    for _ in range(rng.randint(2, 16)):
        kind = rng.choice(kinds)
        a, b = operand(), operand()
        if kind in ("addf", "mulf", "subf", "maximumf"):
            value = builder.binary(kind, a, b, shape)
        elif kind in ("negf", "relu", "scale", "exp", "silu"):
            value = builder.unary(kind, a, shape)
        elif kind == "matmul":
            value = builder.matmul(
                a,
                b,
                n,
                n,
                n,
                transpose_a=rng.random() < 0.3,
                transpose_b=rng.random() < 0.3,
            )
        elif kind == "named_matmul":
            value = builder.named_matmul(a, b, n)
        elif kind == "softmax":
            value = builder.softmax(a, n, n)
        elif kind == "view":
            value = builder.view_round_trip(a, n, n)
        else:
            value = builder.tensor_arith(kind.removeprefix("tensor_"), a, b, shape)
        values.append(value)
    computed = values[len(args) :]
    results = [_Result(computed[-1], shape)]
    for value in rng.sample(computed[:-1], min(len(computed) - 1, rng.randint(0, 2))):
        results.append(_Result(value, shape, write_back=rng.random() < 0.4))
    return Program("dag", _function("dag", builder, args, results))


def _param_tag(rng: random.Random, category: str = "params") -> str:
    roll = rng.random()
    if roll < 0.15:
        return ""
    tier = HOST if roll < 0.3 else REMOTE
    return arg_attributes(tier, category)


def random_transformer(rng: random.Random, mode: str | None = None) -> Program:
    """
    A transformer-like step: `layers` blocks of RMSNorm, attention (over the
    sequence, or over a per-layer KV cache in `decode` mode), SiLU MLP and
    residual adds; in `train` mode a 0-d loss, weight gradients for the
    attention and MLP weights in reverse layer order and momentum/SGD
    updates, the new optimizer state and tagged weights written back.
    """
    mode = mode or rng.choice(["forward", "decode", "train"])
    builder = Builder()
    seq = rng.choice([2, 4, 8])
    dim = rng.choice([4, 8, 16])
    hidden = dim * rng.choice([2, 4])
    cache = rng.choice([4, 8])
    layers = rng.randint(1, 3)
    args = [_Argument("%x", (seq, dim), "")]
    weights: dict[str, tuple[str, Shape, bool]] = {}
    """name -> (argument, shape, tagged)"""

    def weight(name: str, shape: Shape) -> str:
        tag = _param_tag(rng)
        args.append(_Argument(f"%{name}", shape, tag))
        weights[name] = (f"%{name}", shape, bool(tag))
        return f"%{name}"

    caches: list[tuple[str, str]] = []
    for layer in range(layers):
        weight(f"g{layer}", (dim,))
        for w in ("wq", "wk", "wv", "wo"):
            weight(f"{w}{layer}", (dim, dim))
        weight(f"w1_{layer}", (dim, hidden))
        weight(f"w2_{layer}", (hidden, dim))
        if mode == "decode":
            for kv in ("k", "v"):
                tag = _param_tag(rng, "kv")
                args.append(_Argument(f"%{kv}cache{layer}", (cache, dim), tag))
            caches.append((f"%kcache{layer}", f"%vcache{layer}"))

    x = "%x"
    saved: list[dict[str, str]] = []
    results: list[_Result] = []
    for layer in range(layers):
        h = builder.rmsnorm(x, f"%g{layer}", seq, dim)
        q = builder.matmul(h, f"%wq{layer}", seq, dim, dim)
        k = builder.matmul(h, f"%wk{layer}", seq, dim, dim)
        v = builder.matmul(h, f"%wv{layer}", seq, dim, dim)
        if mode == "decode":
            keys, vals, length = caches[layer][0], caches[layer][1], cache
            results += [_Result(k, (seq, dim)), _Result(v, (seq, dim))]
        else:
            keys, vals, length = k, v, seq
        scores = builder.matmul(q, keys, seq, length, dim, transpose_b=True)
        probs = builder.softmax(
            builder.unary("scale", scores, (seq, length)), seq, length
        )
        attended = builder.matmul(probs, vals, seq, dim, length)
        out = builder.matmul(attended, f"%wo{layer}", seq, dim, dim)
        x1 = builder.binary("addf", x, out, (seq, dim))
        h2 = builder.rmsnorm(x1, f"%g{layer}", seq, dim)
        up = builder.matmul(h2, f"%w1_{layer}", seq, hidden, dim)
        act = builder.unary("silu", up, (seq, hidden))
        down = builder.matmul(act, f"%w2_{layer}", seq, dim, hidden)
        x = builder.binary("addf", x1, down, (seq, dim))
        saved.append({"h": h, "attended": attended, "h2": h2, "act": act})

    if mode != "train":
        return Program(
            f"transformer-{mode}",
            _function(mode, builder, args, [_Result(x, (seq, dim)), *results]),
        )

    loss = builder.sum_of_squares(x, seq, dim)
    results = [_Result(loss, ())]
    grad = x  # d(loss)/dx up to a factor: enough to exercise the data flow
    updates: list[tuple[str, str]] = []
    for layer in reversed(range(layers)):
        s = saved[layer]
        grads = {
            f"w2_{layer}": builder.matmul(
                s["act"], grad, hidden, dim, seq, transpose_a=True
            ),
            f"wo{layer}": builder.matmul(
                s["attended"], grad, dim, dim, seq, transpose_a=True
            ),
        }
        d_act = builder.matmul(grad, f"%w2_{layer}", seq, hidden, dim, transpose_b=True)
        grads[f"w1_{layer}"] = builder.matmul(
            s["h2"], d_act, dim, hidden, seq, transpose_a=True
        )
        grads[f"wq{layer}"] = builder.matmul(
            s["h"], grad, dim, dim, seq, transpose_a=True
        )
        back = builder.matmul(d_act, f"%w1_{layer}", seq, dim, hidden, transpose_b=True)
        grad = builder.binary("addf", grad, back, (seq, dim))
        updates += grads.items()
    for name, g in updates:
        arg, shape, tagged = weights[name]
        step = g
        if rng.random() < 0.6:  # momentum state, an optimizer argument
            tag = _param_tag(rng, "optimizer")
            args.append(_Argument(f"%m_{name}", shape, tag))
            step = builder.momentum(f"%m_{name}", g, shape)
            results.append(_Result(step, shape, write_back=bool(tag)))
        results.append(_Result(builder.sgd(arg, step, shape), shape, write_back=tagged))
    return Program("transformer-train", _function("train", builder, args, results))


GENERATORS: dict[str, Callable[[random.Random], Program]] = {
    "dag": random_dag,
    "transformer": random_transformer,
}


def random_program(rng: random.Random) -> Program:
    """A DAG or a transformer-like step, half and half."""
    return random_dag(rng) if rng.random() < 0.5 else random_transformer(rng)
