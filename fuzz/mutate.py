"""
Mutators for the inputs of the tools: MLIR text, schedule JSON and hardware
TOML. Each is a deterministic function of a `random.Random`.

IR mutations are mostly token-aware (a shape, an element type, an SSA name,
a tier, an op name, an offload op inserted or removed, lines moved), so that
many mutants still parse and reach the passes; a few are byte-level (a span
deleted, a character inserted, the text cut short). JSON and TOML are
mutated as data (a key deleted, a value replaced by one of another type or
out of range, list elements duplicated or dropped), then printed; sometimes
the printed text is damaged as well.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

# --- MLIR text ----------------------------------------------------------------

_SSA = re.compile(r"%[A-Za-z0-9_$.\-#]+")
_NUMBER = re.compile(r"(?<![A-Za-z_%#@\d])-?\d+(\.\d+)?([eE][-+]?\d+)?")
_DIMS = re.compile(r"(tensor|memref)<((?:[0-9?]+x)+)")
_ELEMENT = re.compile(
    r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64|index|f8E4M3FN|complex<f32>)\b"
)
_TIER = re.compile(r"tier<(\w+)>|(?<=>), (hbm|remote|host|ssd)>")
_CATEGORY = re.compile(r'hyperoffload\.category = "(\w*)"')
_TENSOR_TYPE = re.compile(r"tensor<[0-9x?]*[a-z][a-z0-9]*>")
_REMOTE_TYPE = re.compile(r"!hyperoffload\.remote<(tensor<[^<>]*>)(, \w+)?>")
_ARGUMENT = re.compile(r"(%[A-Za-z0-9_]+): (tensor<[^<>]*>)")

INTERESTING_INTS = [0, 1, 2, 3, 7, 8, 16, 255, 1024, 65536, -1, 2**31, 2**63, 10**30]
INTERESTING_NUMBERS = [
    *(str(i) for i in INTERESTING_INTS),
    "0.0",
    "-0.0",
    "1.5",
    "1.0e+308",
    "1.0e-320",
    "3.4e+39",
    "0x7FC00000",
    "0xFF800000",
]
ELEMENT_TYPES = [
    "f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index", "f8E4M3FN",
    "complex<f32>", "si32", "ui8", "f4E2M1FN", "none",
]  # fmt: skip
TIERS = ["hbm", "remote", "host", "ssd", "nvme", ""]
CATEGORIES = ["params", "activations", "optimizer", "kv", "", "weights"]
OP_FAMILIES = [
    ["arith.addf", "arith.mulf", "arith.subf", "arith.divf", "arith.maximumf"],
    ["arith.addi", "arith.muli", "arith.cmpi", "arith.select"],
    ["hyperoffload.prefetch", "hyperoffload.store", "hyperoffload.detach"],
    ["linalg.matmul", "linalg.batch_matmul", "linalg.generic", "linalg.fill"],
    ["tensor.empty", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast"],
    ["func.return", "func.call", "return"],
    ["math.exp", "math.rsqrt", "math.tanh", "math.sqrt"],
]
PUNCTUATION = list("{}()<>[],:=%^#@!\"' \n-x?")

IrMutator = Callable[[str, random.Random, Sequence[str]], str]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _pick_match(
    pattern: re.Pattern[str], text: str, rng: random.Random
) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def _replace_span(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def delete_line(text: str, rng: random.Random, _: Sequence[str]) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def duplicate_line(text: str, rng: random.Random, _: Sequence[str]) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "\n".join(lines)


def swap_lines(text: str, rng: random.Random, _: Sequence[str]) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    j = min(len(lines) - 1, max(0, i + rng.randint(-4, 4)))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def move_line(text: str, rng: random.Random, _: Sequence[str]) -> str:
    lines = _lines(text)
    line = lines.pop(rng.randrange(len(lines)))
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "\n".join(lines)


def replace_ssa_name(text: str, rng: random.Random, _: Sequence[str]) -> str:
    matches = list(_SSA.finditer(text))
    if len(matches) < 2:
        return text
    target = rng.choice(matches)
    other = rng.choice(matches).group()
    if rng.random() < 0.1:
        other = rng.choice(["%undefined", "%0", "%arg99", "%"])
    return _replace_span(text, target.start(), target.end(), other)


def replace_number(text: str, rng: random.Random, _: Sequence[str]) -> str:
    match = _pick_match(_NUMBER, text, rng)
    if match is None:
        return text
    new = rng.choice(INTERESTING_NUMBERS)
    if rng.random() < 0.4 and "." not in match.group():
        value = int(float(match.group()))
        new = str(value + rng.choice([-2, -1, 1, 2]))
    return _replace_span(text, match.start(), match.end(), new)


def replace_dimension(text: str, rng: random.Random, _: Sequence[str]) -> str:
    match = _pick_match(_DIMS, text, rng)
    if match is None:
        return text
    dims = match.group(2).rstrip("x").split("x")
    choice = rng.random()
    if choice < 0.15 and len(dims) > 1:
        dims.pop(rng.randrange(len(dims)))
    elif choice < 0.3:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(["1", "2", "?"]))
    else:
        dims[rng.randrange(len(dims))] = rng.choice(
            ["0", "1", "2", "3", "5", "?", "64", "100000", "-1", "4096"]
        )
    new = f"{match.group(1)}<{''.join(d + 'x' for d in dims)}"
    return _replace_span(text, match.start(), match.end(), new)


def replace_element_type(text: str, rng: random.Random, _: Sequence[str]) -> str:
    matches = list(_ELEMENT.finditer(text))
    if not matches:
        return text
    old = rng.choice(matches).group()
    new = rng.choice(ELEMENT_TYPES)
    if rng.random() < 0.3:  # every occurrence: a consistent change of type
        return re.sub(rf"\b{re.escape(old)}\b", new, text)
    match = rng.choice(matches)
    return _replace_span(text, match.start(), match.end(), new)


def replace_tier(text: str, rng: random.Random, _: Sequence[str]) -> str:
    match = _pick_match(_TIER, text, rng)
    if match is None:
        return add_tier_attribute(text, rng, ())
    new = rng.choice(TIERS)
    if match.group(1) is not None:
        return _replace_span(text, match.start(), match.end(), f"tier<{new}>")
    return _replace_span(text, match.start(), match.end(), f", {new}>")


def replace_category(text: str, rng: random.Random, _: Sequence[str]) -> str:
    match = _pick_match(_CATEGORY, text, rng)
    if match is None:
        return text
    new = f'hyperoffload.category = "{rng.choice(CATEGORIES)}"'
    return _replace_span(text, match.start(), match.end(), new)


def add_tier_attribute(text: str, rng: random.Random, _: Sequence[str]) -> str:
    """Tag a function argument (or a result) with a tier and maybe a category."""
    signatures = [
        m for m in _ARGUMENT.finditer(text) if "func.func" in _line_of(text, m.start())
    ]
    if not signatures:
        return text
    match = rng.choice(signatures)
    attrs = [f"hyperoffload.tier = #hyperoffload.tier<{rng.choice(TIERS[:4])}>"]
    if rng.random() < 0.5:
        attrs.append(f'hyperoffload.category = "{rng.choice(CATEGORIES)}"')
    new = f"{match.group()} {{{', '.join(attrs)}}}"
    return _replace_span(text, match.start(), match.end(), new)


def _line_of(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : end if end >= 0 else len(text)]


def replace_op_name(text: str, rng: random.Random, _: Sequence[str]) -> str:
    family = rng.choice(OP_FAMILIES)
    present = [name for name in family if name in text]
    if not present:
        return text
    old = rng.choice(present)
    positions = [m.start() for m in re.finditer(re.escape(old) + r"\b", text)]
    if not positions:
        return text
    start = rng.choice(positions)
    return _replace_span(text, start, start + len(old), rng.choice(family))


def _body_line_indices(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith("  ") and "=" in line]


def insert_offload_op(text: str, rng: random.Random, _: Sequence[str]) -> str:
    """An offload op on a random value of a random type, at a random line."""
    names = sorted({m.group() for m in _SSA.finditer(text)})
    types = sorted({m.group() for m in _TENSOR_TYPE.finditer(text)})
    lines = _lines(text)
    where = _body_line_indices(lines)
    if not names or not types or not where:
        return text
    value, type_ = rng.choice(names), rng.choice(types)
    tier = rng.choice(["", ", host", ", remote", ", ssd"])
    remote = f"!hyperoffload.remote<{type_}{tier}>"
    op = rng.choice(
        [
            f"  %fz{rng.randrange(100)} = hyperoffload.store {value} : {type_} -> {remote}",
            f"  hyperoffload.detach {value} : {type_}",
            f"  %fz{rng.randrange(100)} = hyperoffload.prefetch {value} : {remote} -> {type_}",
        ]
    )
    lines.insert(rng.choice(where) + rng.randint(0, 1), op)
    return "\n".join(lines)


def remove_offload_op(text: str, rng: random.Random, _: Sequence[str]) -> str:
    lines = _lines(text)
    offload = [
        i
        for i, line in enumerate(lines)
        if "= hyperoffload." in line or "hyperoffload.detach" in line
    ]
    if not offload:
        return text
    del lines[rng.choice(offload)]
    return "\n".join(lines)


def toggle_remote_type(text: str, rng: random.Random, _: Sequence[str]) -> str:
    if rng.random() < 0.5:
        match = _pick_match(_REMOTE_TYPE, text, rng)
        if match is not None:
            return _replace_span(text, match.start(), match.end(), match.group(1))
    match = _pick_match(_TENSOR_TYPE, text, rng)
    if match is None:
        return text
    tier = rng.choice(["", ", host", ", ssd", ", hbm", ", bogus"])
    return _replace_span(
        text, match.start(), match.end(), f"!hyperoffload.remote<{match.group()}{tier}>"
    )


def tweak_structure(text: str, rng: random.Random, _: Sequence[str]) -> str:
    """Iterator kinds, affine dims, permutations, reassociations."""
    swaps = [
        ('"parallel"', '"reduction"'),
        ('"reduction"', '"parallel"'),
        ("d0", "d1"),
        ("d1", "d0"),
        ("d2", "d0"),
        ("[1, 0]", "[0, 1]"),
        ("[[0, 1]]", "[[0], [1]]"),
        ("[0, 1]", "[1]"),
        ("-> ()", "-> (d0)"),
    ]
    present = [(a, b) for a, b in swaps if a in text]
    if not present:
        return text
    old, new = rng.choice(present)
    positions = [m.start() for m in re.finditer(re.escape(old), text)]
    start = rng.choice(positions)
    return _replace_span(text, start, start + len(old), new)


def delete_span(text: str, rng: random.Random, _: Sequence[str]) -> str:
    if not text:
        return text
    start = rng.randrange(len(text))
    return text[:start] + text[start + rng.randint(1, 24) :]


def insert_character(text: str, rng: random.Random, _: Sequence[str]) -> str:
    start = rng.randrange(len(text) + 1)
    return text[:start] + rng.choice(PUNCTUATION) + text[start:]


def replace_character(text: str, rng: random.Random, _: Sequence[str]) -> str:
    if not text:
        return text
    start = rng.randrange(len(text))
    char = rng.choice([*PUNCTUATION, chr(rng.randint(0, 0x2FF))])
    return text[:start] + char + text[start + 1 :]


def truncate(text: str, rng: random.Random, _: Sequence[str]) -> str:
    return text[: rng.randrange(len(text) + 1)]


def splice(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    """A few lines of another input, inserted at a random line."""
    if not donors:
        return text
    donor = _lines(rng.choice(donors))
    start = rng.randrange(len(donor))
    piece = donor[start : start + rng.randint(1, 8)]
    lines = _lines(text)
    at = rng.randrange(len(lines) + 1)
    return "\n".join(lines[:at] + piece + lines[at:])


def write_back_result(text: str, rng: random.Random, _: Sequence[str]) -> str:
    """Tag a function result as written back to a tier."""
    match = re.search(r"\) -> \(?(tensor<[^<>]*>)", text)
    if match is None:
        return text
    tier = rng.choice(TIERS[:4])
    new = f"{match.group(1)} {{hyperoffload.tier = #hyperoffload.tier<{tier}>}}"
    if not match.group().startswith(") -> ("):
        new = f"({new})"
    return _replace_span(text, match.start(1), match.end(1), new)


IR_MUTATORS: list[tuple[IrMutator, float]] = [
    (delete_line, 3),
    (duplicate_line, 2),
    (swap_lines, 3),
    (move_line, 2),
    (replace_ssa_name, 4),
    (replace_number, 4),
    (replace_dimension, 4),
    (replace_element_type, 3),
    (replace_tier, 3),
    (replace_category, 1),
    (add_tier_attribute, 3),
    (replace_op_name, 3),
    (insert_offload_op, 4),
    (remove_offload_op, 3),
    (toggle_remote_type, 3),
    (tweak_structure, 2),
    (write_back_result, 1),
    (delete_span, 1),
    (insert_character, 1),
    (replace_character, 1),
    (truncate, 0.5),
    (splice, 1),
]


def mutate_ir(
    text: str, rng: random.Random, donors: Sequence[str] = ()
) -> tuple[str, list[str]]:
    """`text` after 1 to 4 mutations; also their names."""
    mutators = [m for m, _ in IR_MUTATORS]
    weights = [w for _, w in IR_MUTATORS]
    applied: list[str] = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        mutator = rng.choices(mutators, weights)[0]
        text = mutator(text, rng, donors) if text else text
        applied.append(mutator.__name__)
    return text, applied


# --- data: JSON and TOML ---------------------------------------------------------

Path = tuple[str | int, ...]


def _paths(data: Any, prefix: Path = ()) -> list[Path]:
    """Every path into nested dicts and lists (the root excluded)."""
    found: list[Path] = []
    if isinstance(data, dict):
        for key, value in data.items():  # pyright: ignore[reportUnknownVariableType]
            path = (*prefix, str(key))  # pyright: ignore[reportUnknownArgumentType]
            found.append(path)
            found += _paths(value, path)
    elif isinstance(data, list):
        for index, value in enumerate(data):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            path = (*prefix, index)
            found.append(path)
            found += _paths(value, path)
    return found


def _parent(data: Any, path: Path) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


def _interesting_value(rng: random.Random, old: Any, limit: int) -> Any:
    """A replacement for `old`: near it, out of range, or of another type."""
    if isinstance(old, bool) or rng.random() < 0.25:
        others: list[Any] = [
            None,
            True,
            False,
            "",
            "x",
            [],
            {},
            [1, 2],
            -1,
            0,
            1,
            0.5,
            1e308,
            -1e308,
            2**64,
        ]
        return rng.choice(others)
    if isinstance(old, int):
        return rng.choice(
            [
                old + 1,
                old - 1,
                -old,
                0,
                -1,
                limit,
                limit + 1,
                old * 1000,
                2**63,
                2**31 - 1,
            ]
        )
    if isinstance(old, float):
        return rng.choice([0.0, -old, old * 1e6, old / 1e6, math.inf, math.nan, 1e-300])
    if isinstance(old, str):
        return rng.choice(
            [
                "",
                old + "x",
                old.upper(),
                "hbm",
                "remote",
                "host",
                "ssd",
                "compute",
                "transfer",
                "wait",
                "free",
                "0",
                "-1GB",
                "1e400GB",
                "10 GB/s",
                "1.5TB/s",
                "0us",
                "-5us",
                "nan",
                "inf",
                "fast",
                "1KiB",
                "12",
            ]
        )
    if isinstance(old, list):
        items = cast(list[Any], old)
        lists: list[list[Any]] = [[], [items], items[:1], items * 2]
        return rng.choice(lists)
    anything: list[Any] = [None, [], "x", 0]
    return rng.choice(anything)


def mutate_data(data: Any, rng: random.Random, limit: int = 8) -> list[str]:
    """
    Mutate nested dicts and lists in place, 1 to 4 times; return the
    mutations' names. `limit` is an out-of-range index to try (e.g. the
    number of buffers).
    """
    applied: list[str] = []
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        paths = _paths(data)
        if not paths:
            break
        path = rng.choice(paths)
        parent = _parent(data, path)
        key = path[-1]
        old = parent[key]
        action = rng.random()
        if action < 0.5:
            parent[key] = _interesting_value(rng, old, limit)
            applied.append(f"set {'/'.join(map(str, path))}")
        elif action < 0.65:
            del parent[key]
            applied.append(f"delete {'/'.join(map(str, path))}")
        elif action < 0.8 and isinstance(parent, list):
            parent.insert(rng.randrange(len(parent) + 1), json.loads(json.dumps(old)))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            applied.append(f"duplicate {'/'.join(map(str, path))}")
        elif action < 0.9 and isinstance(parent, list):
            rng.shuffle(parent)  # pyright: ignore[reportUnknownArgumentType]
            applied.append(f"shuffle {'/'.join(map(str, path[:-1]))}")
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "unknown_key", "id", "bytes", "latency"])] = (
                _interesting_value(rng, old, limit)
            )
            applied.append(f"add key in {'/'.join(map(str, path[:-1]))}")
        else:
            parent[key] = _interesting_value(rng, old, limit)
            applied.append(f"set {'/'.join(map(str, path))}")
    return applied


def mutate_json(text: str, rng: random.Random) -> tuple[str, list[str]]:
    """A schedule (or any JSON) mutated as data, sometimes damaged as text."""
    data = json.loads(text)
    limit = len(data.get("buffers", [])) if isinstance(data, dict) else 8  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    applied = mutate_data(data, rng, limit)
    out = json.dumps(data, indent=1, allow_nan=True)
    if rng.random() < 0.08:
        out, more = mutate_text_bytes(out, rng)
        applied += more
    return out, applied


def mutate_text_bytes(text: str, rng: random.Random) -> tuple[str, list[str]]:
    mutator = rng.choice(
        [
            delete_span,
            insert_character,
            replace_character,
            truncate,
            delete_line,
            swap_lines,
        ]
    )
    return mutator(text, rng, ()) if text else text, [mutator.__name__]


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        items = cast(list[Any], value)
        return "[" + ", ".join(_toml_value(v) for v in items) + "]"
    if isinstance(value, dict):
        table = cast(dict[str, Any], value)
        pairs = (f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in table.items())
        return "{" + ", ".join(pairs) + "}"
    return '""'  # None: TOML has no null


def dump_toml(data: dict[str, Any], prefix: str = "") -> str:
    """A minimal TOML writer: scalars and arrays first, then sub-tables."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            tables.append((key, cast(dict[str, Any], value)))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, table in tables:
        name = f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key)
        text += f"\n[{name}]\n" + dump_toml(table, name)
    return text


def mutate_toml(data: dict[str, Any], rng: random.Random) -> tuple[str, list[str]]:
    """A hardware description (parsed TOML) mutated as data, then printed."""
    data = json.loads(json.dumps(data))
    applied = mutate_data(data, rng)
    if not isinstance(data, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
        data = {}
    out = dump_toml(data)
    if rng.random() < 0.1:
        out, more = mutate_text_bytes(out, rng)
        applied += more
    return out, applied
