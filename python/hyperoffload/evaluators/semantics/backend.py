"""
The array primitives the op semantics are written over. An evaluator
implements them for its arrays (numpy arrays, torch tensors) and its
`Scope` (what an op implementation sees: the numpy `Frame`, the torch
`Scope`); everything else the ops compute is Python's operators (`+`, `&`,
`<`, indexing, item assignment), which the two array types share.

```python
xp = NUMPY                              # or the torch executor's backend
xp.fn("exp")(x)                         # np.exp(x) / torch.exp(x)
xp.fn("maximumf")(a, b)                 # the backend's own IEEE maximum (`OWN`)
xp.astype(x, "uint8")                   # a cast to a dtype both libraries name so
xp.where(cond, a, b)                    # np.where / torch.where on one device
```

Each backend keeps its own rounding and representation: numpy holds `bf16`
in `float32`, torch as `torch.bfloat16`; numpy computes the IEEE `maximumf`
from `where`, torch with `torch.maximum`.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, ClassVar, TypeAlias

from xdsl.ir import Attribute, Operation, SSAValue

Array: TypeAlias = Any
"""A numpy array or a torch tensor (a scalar is a 0-d one)."""

Scope: TypeAlias = Any
"""What an op implementation sees: the numpy `Frame`, the torch `Scope`."""

DTYPES = ("bool", "uint8", "int8", "int64", "float64")
"""The dtypes the semantics name, by the name both libraries give them."""

OWN = (
    "maximumf",  # IEEE maximum: NaN propagates, +0 > -0
    "minimumf",  # IEEE minimum: NaN propagates, -0 < +0
    "floor_div",  # integer division rounding toward minus infinity
    "div_trunc",  # signed integer division rounding toward zero
    "roundeven",  # to the nearest integer, halves to even
    "rsqrt",  # 1 / sqrt(x)
    "cbrt",  # the real cube root
    "erf",  # the error function
)
"""The elementwise functions a backend defines itself (the libraries differ
in name or have none); the others are the library's, by the name numpy and
torch share (`exp`, `asin`, `fmod`, `remainder`, `isnan`, ...)."""


class ArrayBackend(ABC):
    """The primitives of one array library that the op semantics use."""

    # --- dtypes and casts ---------------------------------------------------

    @abstractmethod
    def astype(self, x: Array, dtype: str) -> Array:
        """`x` cast to the dtype named `dtype` (one of `DTYPES`)."""

    @abstractmethod
    def astype_like(self, x: Array, like: Array) -> Array:
        """`x` cast to the dtype of `like`."""

    @abstractmethod
    def kind(self, x: Array) -> str:
        """`x`'s element kind: `b` (bool), `i`, `u` (integers) or `f`."""

    @abstractmethod
    def itemsize(self, x: Array) -> int:
        """Bytes per element of `x`."""

    @abstractmethod
    def cast(self, x: Array, type_: Attribute) -> Array:
        """`x` as the backend holds values of `type_` (its dtype and rounding)."""

    @abstractmethod
    def unsigned(self, x: Array) -> Array:
        """A signed integer array read as unsigned."""

    @abstractmethod
    def float_to_int(self, x: Array, unsigned: bool, type_: Attribute) -> Array:
        """A float array truncated toward zero to integers, for a `type_` result."""

    @abstractmethod
    def bitcast(self, x: Array, source: Attribute, target: Attribute) -> Array:
        """The bits of `x` (of type `source`) read as `target`."""

    # --- elementwise ----------------------------------------------------------

    library: ModuleType
    """The array library (`numpy`, `torch`): its elementwise functions by name."""

    own: ClassVar[Mapping[str, Callable[..., Array]]]
    """The functions of `OWN`, as this backend computes them."""

    def fn(self, name: str) -> Callable[..., Array]:
        """The elementwise function `name`: the backend's own (`OWN`), else the library's."""
        found = self.own.get(name)
        return found if found is not None else getattr(self.library, name)

    @abstractmethod
    def bools(self, a: Array, b: Array, value: bool) -> Array:
        """`value` over the broadcast shape of `a` and `b`, as bools."""

    @abstractmethod
    def where(self, cond: Array, a: Array, b: Array) -> Array:
        """`a` where `cond`, else `b`."""

    @abstractmethod
    def index(self, value: int) -> Array:
        """An `index` scalar."""

    # --- tensors -------------------------------------------------------------

    @abstractmethod
    def empty(self, shape: Sequence[int], type_: Attribute) -> Array:
        """A new tensor of `type_` and `shape` (zeros when read)."""

    @abstractmethod
    def new_zeros(self, like: Array, shape: Sequence[int]) -> Array:
        """A new tensor of zeros of `like`'s dtype (and device)."""

    @abstractmethod
    def readable(self, scope: Scope, x: Array) -> Array:
        """`x` with storage to read (an `empty` one becomes zeros)."""

    @abstractmethod
    def copy(self, x: Array) -> Array:
        """A copy of `x` that a write does not share."""

    @abstractmethod
    def part(self, x: Array) -> Array:
        """A slice of a tensor as the result of an op: a copy or a view."""

    @abstractmethod
    def reshape(self, x: Array, shape: Sequence[int]) -> Array:
        """`x` in `shape` (a view where the backend has them)."""

    @abstractmethod
    def pad(self, x: Array, widths: Sequence[tuple[int, int]], fill: object) -> Array:
        """`x` with (low, high) `widths` of `fill` around each dimension."""

    @abstractmethod
    def concat(self, parts: Sequence[Array], dim: int) -> Array:
        """`parts` joined along `dim`."""

    @abstractmethod
    def stack(self, scope: Scope, elements: Sequence[Array]) -> Array:
        """Scalars as a 1-d tensor."""

    @abstractmethod
    def splat(self, scope: Scope, x: Array, shape: Sequence[int]) -> Array:
        """The scalar `x` over `shape`."""

    @abstractmethod
    def gather(self, scope: Scope, x: Array, indices: Sequence[Array]) -> Array:
        """`x` at `indices` (scalars: one element; tensors that broadcast: a gather)."""

    @abstractmethod
    def outer(
        self, scope: Scope, op: Operation, value: SSAValue, args: Sequence[Array]
    ) -> Array:
        """The value `value`, defined above `op`, that a region of `op` reads."""

    @abstractmethod
    def check(self, scope: Scope, op: Operation, cond: Array, message: str) -> None:
        """Fail with `message` unless every element of `cond` holds."""
