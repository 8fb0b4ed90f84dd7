"""
The device interconnect: its `[interconnect]` table (cited in the presets,
read strictly), a ring collective's time, and the collectives' own stream in
the simulator, overlapping compute but not one another, in a schedule that
survives JSON.
"""

from pathlib import Path

import pytest

from hyperoffload.model.hardware import HardwareError, Interconnect, load_hardware
from hyperoffload.model.schedule import Buffer, Compute, Schedule
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.tiers import Tier

FILE = """
base = "ascend-910c"

[interconnect]
bandwidth = "100GB/s"
latency = "1us"
"""


def test_presets_cite_the_device_links() -> None:
    for preset, bandwidth in (("ascend-910c", 196e9), ("h200-pcie5", 450e9)):
        link = load_hardware(preset).interconnect
        assert link is not None
        assert link.bandwidth == bandwidth
        assert link.latency_s == pytest.approx(5e-6)
    assert load_hardware("gh200-c2c").interconnect is None


def test_a_ring_collective() -> None:
    link = Interconnect(100e9, 1e-6)
    assert link.collective_bytes(800, 8) == 700
    assert link.collective_time(8 * 10**9, 8) == pytest.approx(7e-6 + 7e9 / 100e9)
    assert link.collective_time(10**9, 1) == 0.0


def test_the_table_is_read_strictly(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(FILE)
    assert load_hardware(str(good)).interconnect == Interconnect(100e9, 1e-6)
    bad = tmp_path / "bad.toml"
    bad.write_text(FILE.replace("bandwidth =", "bandwith ="))
    with pytest.raises(
        HardwareError,
        match=r"bad.toml:5: .*'interconnect.bandwith' \(did you mean 'bandwidth'\?\)",
    ):
        load_hardware(str(bad))
    bare = tmp_path / "bare.toml"
    bare.write_text(FILE.replace('"100GB/s"', "100"))
    with pytest.raises(
        HardwareError, match=r"\[interconnect\] bandwidth: .*needs a unit"
    ):
        load_hardware(str(bare))


def _schedule() -> Schedule:
    """grad -> reduce-scatter (100 us) beside a 60 us op, then update, then all-gather."""
    buffers = [
        Buffer(i, name, 1000, Tier.HBM, "activation")
        for i, name in enumerate(["g", "gs", "x", "m", "w"])
    ]
    return Schedule(
        "step",
        buffers,
        [
            Compute("grad", "l1", 10e-6, 0.0, 0, allocs=[0]),
            Compute("rs", "l2", 100e-6, 0.0, 875, [0], [1], [0], stream="interconnect"),
            Compute("other", "l3", 60e-6, 0.0, 0, allocs=[2]),
            Compute("update", "l4", 20e-6, 0.0, 0, [1], [3], [1]),
            Compute("ag", "l5", 50e-6, 0.0, 875, [3], [4], [3], stream="interconnect"),
            Compute("ag2", "l6", 50e-6, 0.0, 875, [2], [], [], stream="interconnect"),
        ],
    )


def test_collectives_overlap_compute_not_one_another() -> None:
    result = simulate(_schedule(), load_hardware("ascend-910c"))
    spans = {i.name: (i.start, i.end) for i in result.intervals}
    assert spans["rs"] == pytest.approx((10e-6, 110e-6))
    assert spans["other"] == pytest.approx((10e-6, 70e-6))  # beside the reduce-scatter
    assert spans["update"] == pytest.approx((110e-6, 130e-6))  # waits for it
    assert spans["ag"] == pytest.approx((130e-6, 180e-6))
    assert spans["ag2"] == pytest.approx((180e-6, 230e-6))  # after the other collective
    assert result.makespan_s == pytest.approx(230e-6)
    assert result.compute_s == pytest.approx(90e-6)
    assert result.interconnect_s == pytest.approx(200e-6)
    assert result.interconnect_bytes == 3 * 875
    assert result.bound_time_s == pytest.approx(200e-6)
    # the gradient's buffer is freed once the reduce-scatter reading it ends
    assert result.peak_hbm_bytes == 4000


def test_the_stream_survives_json() -> None:
    schedule = _schedule()
    data = schedule.to_json()
    assert data["version"] == 4
    assert "stream" not in data["steps"][0]
    assert data["steps"][1]["stream"] == "interconnect"
    assert Schedule.from_json(data) == schedule
    data["steps"][1]["stream"] = "nvlink"
    with pytest.raises(
        ValueError,
        match=r"steps\[1\]: 'stream' must be \"compute\", \"interconnect\", not \"nvlink\"",
    ):
        Schedule.from_json(data)
