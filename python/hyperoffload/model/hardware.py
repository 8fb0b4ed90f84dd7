"""
The hardware model: the device (HBM, peak throughput per dtype) and the links
to the other memory tiers. Presets ship as TOML files in `presets/`, each
figure with its source; a user file is given by path.

```python
hw = load_hardware("ascend-910c", hbm_capacity="32GB")
hw.link("remote").transfer_time(1 << 30, to_device=True)  # latency + bytes / bandwidth
hw.interconnect.collective_time(1 << 30, group=8)  # a ring reduce-scatter or all-gather
```

The `[interconnect]` table, where a file has one, is the link between the
devices of a data-parallel group (NVLink, Ascend's unified bus): the
collectives of a sharded training step (`hyperoffload.reduce_scatter`,
`hyperoffload.all_gather`) run on it, on a stream of their own
(`Interconnect`).

A link may be staged through another (`staged_through = "host"`: an NVMe
drive read into host memory and copied from there, as ZeRO-Infinity and
FlexGen do): the loaded link then runs at the lower of its own and the host
link's bandwidth, with both latencies, and the simulator also occupies the
host link while it runs (`hyperoffload.sim.simulator`).

A file is read strictly: an unknown key is an error that names the nearest
known one (`h.toml:7: error: unknown key 'device.peak_flop' (did you mean
'peak_flops'?)`), bandwidths and sizes need their units (`10` what? write
`10GB/s`), and a figure so small that times would overflow is refused.
"""

from __future__ import annotations

import math
import sys
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from hyperoffload.ir.diagnostics import format_diagnostic
from hyperoffload.model.hardware_keys import UnknownKeyError, check_keys
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier
from hyperoffload.support.units import parse_duration, parse_rate, parse_size

PRESET_DIR = Path(__file__).resolve().parent / "presets"

SMALLEST_RATE = 2.0**64 / sys.float_info.max
"""
The least bandwidth or FLOP/s a file may give: below it, the time of 2^64
bytes or FLOPs (more than any program has) would overflow to infinity.
"""


LARGEST_CAPACITY = 2**62
"""An HBM capacity at or above it is an error (a plan writes sizes as i64)."""


class HardwareError(ValueError):
    """An unknown preset or a malformed hardware file (located at `where`, its file)."""

    def __init__(self, message: str, where: str | None = None):
        located = (
            message if where is None else format_diagnostic(where, "error", message)
        )
        super().__init__(located)
        self.where = where


@dataclass(frozen=True)
class Link:
    """The link between HBM and one tier; full duplex, one copy stream each way."""

    tier: Tier
    capacity: int
    bandwidth_to_device: float
    bandwidth_from_device: float
    latency_s: float
    duplex_efficiency: float = 1.0
    """Fraction of each direction's bandwidth left while the other direction is busy."""
    staged_through: Tier | None = None
    """The tier whose link every transfer also crosses (an SSD read through host memory)."""

    def transfer_time(
        self, nbytes: int, to_device: bool, duplex: bool = False
    ) -> float:
        """`latency + bytes / bandwidth`; `duplex`: the other direction is busy."""
        bandwidth = (
            self.bandwidth_to_device if to_device else self.bandwidth_from_device
        )
        if duplex:
            bandwidth *= self.duplex_efficiency
        return self.latency_s + nbytes / bandwidth


@dataclass(frozen=True)
class Interconnect:
    """
    The link from a device to the other devices of its group: each device
    sends and receives `bandwidth` bytes per second at once (per direction,
    what NCCL's tests call bus bandwidth). A reduce-scatter or an all-gather
    of a `whole` tensor over `group` devices runs as a ring: `group - 1`
    steps, each moving `whole / group` bytes each way after `latency_s`
    (NCCL's ring algorithm; its tests derive bus bandwidth with the same
    `(group - 1) / group` factor).
    """

    bandwidth: float
    latency_s: float = 0.0

    def collective_bytes(self, whole: int, group: int) -> int:
        """Bytes each device sends (and receives) in a ring collective."""
        return whole * (group - 1) // group

    def collective_time(self, whole: int, group: int) -> float:
        """
        `(group - 1) · (latency + whole / group / bandwidth)`; 0 for a group
        of one.
        """
        if group <= 1:
            return 0.0
        steps = group - 1
        return steps * self.latency_s + self.collective_bytes(whole, group) / (
            self.bandwidth
        )


@dataclass(frozen=True)
class Hardware:
    name: str
    description: str
    hbm_capacity: int
    hbm_bandwidth: float
    peak_flops: dict[str, float]
    compute_efficiency: float
    """Achievable fraction of peak for dense contractions (GEMMs)."""
    memory_efficiency: float
    """Achievable fraction of the datasheet HBM bandwidth."""
    attention_efficiency: float
    """Achievable fraction of peak for fused attention kernels."""
    op_overhead_s: float
    """Per kernel: launch and scheduling."""
    links: dict[Tier, Link]
    interconnect: Interconnect | None = None
    """The link to the other devices of a data-parallel group, if described."""

    def with_hbm_capacity(self, capacity: int | str | None) -> Hardware:
        """A copy with this HBM capacity: a size, or a whole number of bytes."""
        if capacity is None:
            return self
        size = parse_size(capacity, bare_bytes=True)
        if size >= LARGEST_CAPACITY:
            raise ValueError(
                f"{capacity}: more than 2**62 bytes, beyond any device (and any "
                "size the IR's 64-bit integers hold)"
            )
        return replace(self, hbm_capacity=size)

    def peak(self, dtype: str) -> float:
        """
        Peak FLOP/s for an element type; the `f32` (vector-unit) rate for one
        the file does not list. A `HardwareError` if that rate is needed and
        the file has none.
        """
        if dtype in self.peak_flops:
            return self.peak_flops[dtype]
        if "f32" in self.peak_flops:
            return self.peak_flops["f32"]
        listed = ", ".join(self.peak_flops)
        missing = "f32" if dtype == "f32" else f"{dtype}, nor f32"
        raise HardwareError(
            f"hardware '{self.name}' has no [device.peak_flops] {missing} (the "
            f"vector units' rate, and that of element types not listed), which "
            f"{dtype} work needs; it lists {listed}"
        )

    def compute_s(
        self, flops: float, dtype: str, efficiency: float | None = None
    ) -> float:
        """
        `flops` at `dtype`'s peak times `efficiency` (by default
        `compute_efficiency`): the compute side of the roofline.
        """
        rate = efficiency if efficiency is not None else self.compute_efficiency
        return flops / (self.peak(dtype) * rate)

    def kernel_s(self, compute_s: float, nbytes: float) -> float:
        """
        The roofline, the one rule every kernel is priced by: `max(compute_s,
        nbytes / (HBM bandwidth * memory_efficiency)) + op_overhead`. An
        approximation: efficiencies do not depend on shape.

        ```python
        hw.kernel_s(hw.compute_s(2.0 * 4096, "bf16"), 8192)  # a 64x64 GEMV
        ```
        """
        memory = nbytes / (self.hbm_bandwidth * self.memory_efficiency)
        return max(compute_s, memory) + self.op_overhead_s

    def link(self, tier: str) -> Link:
        link = self.links.get(tier)  # pyright: ignore[reportArgumentType] -- a Tier hashes as its name
        if link is None:
            raise HardwareError(
                f"hardware '{self.name}' has no '{tier}' tier "
                f"(it has: {', '.join(self.links) or 'none'})"
            )
        return link

    @property
    def offload_tier(self) -> Tier:
        """
        Where offloaded data goes by default: `remote` if present, else the
        first tier not staged through another (else the first tier).
        """
        if Tier.REMOTE in self.links:
            return Tier.REMOTE
        direct = [t for t, link in self.links.items() if link.staged_through is None]
        return (direct or list(self.links))[0]


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_hardware(name_or_path: str, hbm_capacity: int | str | None = None) -> Hardware:
    """
    A preset by name, or a TOML file by path (same format as the presets; a
    file with `base = "h200-pcie5"` starts from that preset or file, its own
    tables overriding the base's key by key).
    """
    path, data = _read(name_or_path)
    try:
        hardware = _from_dict(path.stem, data)
    except (KeyError, TypeError, ValueError) as err:
        raise HardwareError(
            f"malformed hardware file: {_describe(err)}", str(path)
        ) from None
    try:
        return hardware.with_hbm_capacity(hbm_capacity)
    except ValueError as err:
        raise HardwareError(f"bad HBM capacity: {err}") from None


def _read(name_or_path: str, depth: int = 0) -> tuple[Path, dict[str, Any]]:
    """The file of a preset or path and its tables, its `base` merged in."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PRESET_DIR / f"{name_or_path}.toml"
        if not path.is_file():
            raise HardwareError(
                f"unknown hardware '{name_or_path}'; presets: {', '.join(preset_names())}"
                " (or give the path of a .toml file)"
            )
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise HardwareError(str(err), str(path)) from None
    try:
        check_keys(data, text)
    except UnknownKeyError as err:
        raise HardwareError(str(err), f"{path}{err.line}") from None
    base = data.pop("base", None)
    if base is None:
        return path, data
    if not isinstance(base, str) or depth >= 4:
        raise HardwareError(
            f"base = {base!r}: expected a preset or a .toml file "
            "(at most four bases deep)",
            str(path),
        )
    if Path(base).suffix and not Path(base).is_absolute():
        base = str(path.parent / base)
    try:
        inherited = _read(base, depth + 1)[1]
    except HardwareError as err:
        if err.where is not None:  # located in the base file
            raise
        raise HardwareError(f"base = {base!r}: {err}", str(path)) from None
    return path, _merged(inherited, data)


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`base` with the keys of `over` replacing its own, table by table."""
    merged = dict(base)
    for key, value in over.items():
        inherited = merged.get(key)
        if isinstance(value, dict) and isinstance(inherited, dict):
            merged[key] = _merged(
                cast(dict[str, Any], inherited), cast(dict[str, Any], value)
            )
        else:
            merged[key] = value
    return merged


def _describe(err: Exception) -> str:
    return f"missing key {err}" if isinstance(err, KeyError) else str(err)


def _table(data: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    """The table `data[key]` (KeyError if it is missing)."""
    value = data[key]
    if not isinstance(value, dict):
        raise ValueError(f"[{name}] must be a table, not {value!r}")
    return cast(dict[str, Any], value)


def _from_dict(name: str, data: dict[str, Any]) -> Hardware:
    device = _table(data, "device", "device")
    tiers = _table(data, "tiers", "tiers") if "tiers" in data else {}
    specs: dict[Tier, dict[str, Any]] = {}
    for tier in tiers:
        if tier not in OFFLOAD_TIERS:
            raise ValueError(
                f"unknown tier '{tier}' (expected one of {', '.join(OFFLOAD_TIERS)})"
            )
        specs[Tier(tier)] = _table(tiers, tier, f"tiers.{tier}")
    links = {
        tier: Link(
            tier=tier,
            capacity=_size(spec, "capacity", f"tiers.{tier}"),
            bandwidth_to_device=_bandwidth(
                spec, "bandwidth_to_device", f"tiers.{tier}"
            ),
            bandwidth_from_device=_bandwidth(
                spec, "bandwidth_from_device", f"tiers.{tier}"
            ),
            latency_s=parse_duration(spec.get("latency", 0)),
            duplex_efficiency=_fraction(spec, "duplex_efficiency"),
        )
        for tier, spec in specs.items()
    }
    if not links:
        raise ValueError("no [tiers.*] table: a device needs a tier to offload to")
    staged = {t: s["staged_through"] for t, s in specs.items() if "staged_through" in s}
    for tier, through in staged.items():
        if through in staged:
            raise ValueError(
                f"[tiers.{tier}] is staged through '{through}', which is staged itself"
            )
        links[tier] = _staged(links[tier], through, links)
    peak: dict[str, float] = {}
    for dtype, flops in _table(device, "peak_flops", "device.peak_flops").items():
        if (
            isinstance(flops, bool)
            or not isinstance(flops, int | float)
            or not 0 < flops < math.inf
        ):
            raise ValueError(
                "[device.peak_flops] needs a positive FLOP/s per dtype "
                f"({dtype} = {flops!r})"
            )
        peak[dtype] = _not_tiny(float(flops), f"[device.peak_flops] {dtype}")
    if not peak:
        raise ValueError("[device.peak_flops] needs a positive FLOP/s per dtype")
    compute_efficiency = _fraction(device, "compute_efficiency")
    return Hardware(
        name=name,
        description=str(data.get("description", "")),
        hbm_capacity=_size(device, "hbm_capacity", "device"),
        hbm_bandwidth=_bandwidth(device, "hbm_bandwidth", "device"),
        peak_flops=peak,
        compute_efficiency=compute_efficiency,
        memory_efficiency=_fraction(device, "memory_efficiency"),
        attention_efficiency=_fraction(
            device, "attention_efficiency", compute_efficiency
        ),
        op_overhead_s=parse_duration(device.get("op_overhead", 0)),
        links=links,
        interconnect=_interconnect(data),
    )


def _interconnect(data: dict[str, Any]) -> Interconnect | None:
    """The `[interconnect]` table, if the file has one."""
    if "interconnect" not in data:
        return None
    table = _table(data, "interconnect", "interconnect")
    return Interconnect(
        bandwidth=_bandwidth(table, "bandwidth", "interconnect"),
        latency_s=parse_duration(table.get("latency", 0)),
    )


def _size(table: dict[str, Any], key: str, name: str) -> int:
    """The size `table[key]` (of the table `[name]`), with its unit."""
    if key not in table:
        raise ValueError(f"missing key '{key}' in [{name}]")
    try:
        return parse_size(table[key])
    except ValueError as err:
        raise ValueError(f"[{name}] {key}: {err}") from None


def _bandwidth(table: dict[str, Any], key: str, name: str) -> float:
    """The rate `table[key]` (of the table `[name]`): with its unit, not tiny."""
    if key not in table:
        raise ValueError(f"missing key '{key}' in [{name}]")
    try:
        rate = parse_rate(table[key])
    except ValueError as err:
        raise ValueError(f"[{name}] {key}: {err}") from None
    return _not_tiny(rate, f"[{name}] {key}")


def _not_tiny(rate: float, what: str) -> float:
    """`rate`, if times computed from it stay finite (`SMALLEST_RATE`)."""
    if rate < SMALLEST_RATE:
        raise ValueError(
            f"{what} = {rate:g} is so small that times would overflow "
            f"(at least {SMALLEST_RATE:.1e} per second)"
        )
    return rate


def _staged(link: Link, through: object, links: dict[Tier, Link]) -> Link:
    """
    `link` staged through the link of tier `through`: at the lower of the
    two bandwidths each way, after both latencies.

    ```python
    _staged(ssd, "host", links).bandwidth_to_device  # min(drive, host link)
    ```
    """
    if through not in links or through == link.tier:
        raise ValueError(
            f"[tiers.{link.tier}] staged_through = {through!r}: expected another "
            f"tier of this file ({', '.join(t for t in links if t != link.tier)})"
        )
    host = links[Tier(cast(str, through))]
    return replace(
        link,
        bandwidth_to_device=min(link.bandwidth_to_device, host.bandwidth_to_device),
        bandwidth_from_device=min(
            link.bandwidth_from_device, host.bandwidth_from_device
        ),
        latency_s=link.latency_s + host.latency_s,
        staged_through=host.tier,
    )


def _fraction(table: dict[str, Any], key: str, default: float = 1.0) -> float:
    raw = table.get(key, default)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ValueError(f"{key} = {raw!r}: expected a fraction in (0, 1]")
    value = float(raw)
    if not 0 < value <= 1:
        raise ValueError(f"{key} = {value}: expected a fraction in (0, 1]")
    return value
