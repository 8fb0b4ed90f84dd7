"""
The hardware model: presets by name, a TOML file by path, the errors for an
unknown name or a malformed file, the HBM capacity override, and link
transfer times (latency + bytes / bandwidth, slowed by a busy other
direction).
"""

import re
from pathlib import Path

import pytest

from hyperoffload.model.hardware import (
    Hardware,
    HardwareError,
    Link,
    load_hardware,
    preset_names,
)
from hyperoffload.support.tiers import Tier

PRESETS = [
    "a100-pcie4",
    "ascend-910b",
    "ascend-910c",
    "gh200-c2c",
    "h100-pcie5",
    "h200-pcie5",
    "h200-pcie5-host4gib",
]

DEVICE = """
description = "a test device"

[device]
hbm_capacity = "2GiB"
hbm_bandwidth = "1.5TB/s"
compute_efficiency = 0.5
memory_efficiency = 0.8
op_overhead = "2us"

[device.peak_flops]
bf16 = 4e12
f32 = 1e12
"""

HOST = """
[tiers.host]
capacity = "1TB"
bandwidth_to_device = "50GB/s"
bandwidth_from_device = "25GB/s"
latency = "5us"
duplex_efficiency = 0.5
"""


SSD = """
[tiers.ssd]
capacity = "4TB"
bandwidth_to_device = "80GB/s"
bandwidth_from_device = "5GB/s"
latency = "20us"
staged_through = "host"
"""


def write(tmp_path: Path, text: str, name: str = "device.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_presets_the_readme_names_ship():
    assert preset_names() == PRESETS


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_loads(name: str):
    hardware = load_hardware(name)
    assert hardware.name == name
    assert hardware.hbm_capacity > 0
    assert hardware.links
    assert hardware.offload_tier in hardware.links
    for link in hardware.links.values():
        assert link.transfer_time(0, True) == link.latency_s


def test_a_preset_by_name():
    # ascend-910c.toml: 64 GB of HBM at 1.6 TB/s; bf16 376 TFLOP/s; a remote
    # pool at 33.6 GB/s each way and 10 us, host memory and an NVMe drive.
    hardware = load_hardware("ascend-910c")
    assert hardware.hbm_capacity == 64 * 10**9
    assert hardware.hbm_bandwidth == pytest.approx(1.6e12)
    assert hardware.peak("bf16") == pytest.approx(376e12)
    assert sorted(hardware.links) == ["host", "remote", "ssd"]
    assert hardware.offload_tier == "remote"
    remote = hardware.link("remote")
    assert remote.bandwidth_to_device == pytest.approx(33.6e9)
    assert remote.latency_s == pytest.approx(10e-6)


def test_a_gpu_preset_offloads_to_host_memory():
    # h100-pcie5.toml has no remote pool: [tiers.host], and an NVMe drive
    # staged through it (never the default tier)
    hardware = load_hardware("h100-pcie5")
    assert list(hardware.links) == ["host", "ssd"]
    assert hardware.offload_tier == "host"


def test_a_file_by_path(tmp_path: Path):
    # Units: 2 GiB = 2 x 2^30 B, 1.5 TB/s = 1.5e12 B/s, 2 us, 1 TB = 1e12 B.
    # The file's stem names the device; attention efficiency defaults to the
    # compute efficiency.
    hardware = load_hardware(write(tmp_path, DEVICE + HOST, "my-device.toml"))
    assert hardware.name == "my-device"
    assert hardware.description == "a test device"
    assert hardware.hbm_capacity == 2 * 2**30
    assert hardware.hbm_bandwidth == pytest.approx(1.5e12)
    assert hardware.peak_flops == {"bf16": 4e12, "f32": 1e12}
    assert (hardware.compute_efficiency, hardware.memory_efficiency) == (0.5, 0.8)
    assert hardware.attention_efficiency == 0.5
    assert hardware.op_overhead_s == pytest.approx(2e-6)
    assert list(hardware.links) == ["host"]
    host = hardware.link("host")
    assert (host.capacity, host.bandwidth_to_device, host.bandwidth_from_device) == (
        10**12,
        50e9,
        25e9,
    )
    assert host.latency_s == pytest.approx(5e-6)
    assert host.duplex_efficiency == 0.5
    assert hardware.offload_tier == "host"


def test_latency_and_duplex_default(tmp_path: Path):
    tier = """
[tiers.remote]
capacity = "1GB"
bandwidth_to_device = "1GB/s"
bandwidth_from_device = "1GB/s"
"""
    link = load_hardware(write(tmp_path, DEVICE + tier)).link("remote")
    assert (link.latency_s, link.duplex_efficiency) == (0.0, 1.0)


def test_an_unknown_name_lists_the_presets():
    expected = (
        "unknown hardware 'tpu-v9'; presets: " + ", ".join(PRESETS) + " (or give "
        "the path of a .toml file)"
    )
    with pytest.raises(HardwareError) as raised:
        load_hardware("tpu-v9")
    assert str(raised.value) == expected


def test_a_missing_file_names_its_path(tmp_path: Path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(HardwareError, match=r"missing\.toml: .*No such file"):
        load_hardware(str(missing))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DEVICE, r"no \[tiers\.\*\] table"),
        (
            DEVICE + HOST.replace("tiers.host", "tiers.hots"),
            r":\d+: error: unknown key 'tiers\.hots' \(did you mean 'host'\?\)",
        ),
        (
            DEVICE + HOST.replace("duplex_efficiency = 0.5", "duplex_efficiency = 1.5"),
            r"duplex_efficiency = 1\.5: expected a fraction in \(0, 1\]",
        ),
        (
            DEVICE.replace("f32 = 1e12", "f32 = 0") + HOST,
            r"\[device\.peak_flops\] needs a positive FLOP/s",
        ),
        (
            DEVICE.replace('"1.5TB/s"', '"1.5TB"') + HOST,
            r"invalid rate '1\.5TB'",
        ),
        ("[device", r"device\.toml: "),
        (
            DEVICE + HOST + SSD.replace('"host"', '"remote"'),
            r"\[tiers\.ssd\] staged_through = 'remote': expected another tier",
        ),
        (
            DEVICE
            + HOST.replace("[tiers.host]", '[tiers.host]\nstaged_through = "ssd"')
            + SSD,
            r"\[tiers\.(host|ssd)\] is staged through '(ssd|host)', which is staged",
        ),
    ],
    ids=[
        "no-tier",
        "unknown-tier",
        "fraction",
        "peak",
        "rate",
        "syntax",
        "staged-nowhere",
        "staged-twice",
    ],
)
def test_a_malformed_file_is_a_located_error(tmp_path: Path, text: str, message: str):
    path = write(tmp_path, text)
    with pytest.raises(HardwareError, match=message) as raised:
        load_hardware(path)
    assert re.match(rf"{re.escape(path)}(:\d+)?: error: ", str(raised.value))


@pytest.mark.parametrize(
    ("capacity", "expected"),
    [
        ("32GB", 32 * 10**9),
        ("512MiB", 512 * 2**20),
        ("1.5 KB", 1500),
        (4096, 4096),
        # none: the preset's 64 GB
        (None, 64 * 10**9),
    ],
)
def test_the_hbm_capacity_override(capacity: str | int | None, expected: int):
    hardware = load_hardware("ascend-910c", hbm_capacity=capacity)
    assert hardware.hbm_capacity == expected
    # nothing else changes
    preset = load_hardware("ascend-910c")
    assert hardware.links == preset.links
    assert hardware.peak_flops == preset.peak_flops


def test_a_malformed_capacity_is_an_error():
    with pytest.raises(ValueError, match=r"invalid size 'lots'"):
        load_hardware("ascend-910c", hbm_capacity="lots")


LINK = Link(
    tier=Tier.REMOTE,
    capacity=10**12,
    bandwidth_to_device=100e6,
    bandwidth_from_device=50e6,
    latency_s=10e-6,
    duplex_efficiency=0.5,
)


def test_transfer_time_is_latency_plus_bytes_over_bandwidth():
    # 1 MB: 10 us + 1e6 / 100e6 s = 10.01 ms in, 10 us + 1e6 / 50e6 s =
    # 20.01 ms out; nothing to move still pays the latency.
    assert LINK.transfer_time(10**6, to_device=True) == pytest.approx(10.01e-3)
    assert LINK.transfer_time(10**6, to_device=False) == pytest.approx(20.01e-3)
    assert LINK.transfer_time(0, to_device=True) == pytest.approx(10e-6)


def test_a_busy_other_direction_slows_a_transfer_by_the_duplex_efficiency():
    # Half of each direction's bandwidth: 50 MB/s in, 25 MB/s out.
    assert LINK.transfer_time(10**6, True, duplex=True) == pytest.approx(20.01e-3)
    assert LINK.transfer_time(10**6, False, duplex=True) == pytest.approx(40.01e-3)


def test_an_unknown_tier_names_the_tiers_there_are():
    hardware = load_hardware("ascend-910b")
    with pytest.raises(
        HardwareError,
        match=r"hardware 'ascend-910b' has no 'ssd' tier \(it has: host\)",
    ):
        hardware.link("ssd")


def test_peak_falls_back_to_f32_and_is_an_error_without_it(tmp_path: Path):
    hardware: Hardware = load_hardware(write(tmp_path, DEVICE + HOST))
    assert hardware.peak("f16") == 1e12  # no f16 figure: the f32 one
    no_f32 = DEVICE.replace("f32 = 1e12", "f8E4M3FN = 16e12") + HOST
    hardware = load_hardware(write(tmp_path, no_f32))
    assert hardware.peak("bf16") == 4e12
    with pytest.raises(
        HardwareError,
        match=r"no \[device\.peak_flops\] f16, nor f32 .* it lists bf16, f8E4M3FN",
    ):
        hardware.peak("f16")


def test_a_staged_link_runs_at_the_slower_of_its_legs(tmp_path: Path):
    # The drive reads at 80 GB/s and writes at 5 GB/s; the host link it is
    # staged through runs 50 GB/s in, 25 GB/s out. In: min(80, 50) = 50 GB/s;
    # out: min(5, 25) = 5 GB/s; latency 20 us + the host link's 5 us.
    hardware = load_hardware(write(tmp_path, DEVICE + HOST + SSD))
    ssd = hardware.link("ssd")
    assert ssd.staged_through == "host"
    assert ssd.bandwidth_to_device == pytest.approx(50e9)
    assert ssd.bandwidth_from_device == pytest.approx(5e9)
    assert ssd.latency_s == pytest.approx(25e-6)
    assert hardware.offload_tier == "host"  # a staged tier is never the default


@pytest.mark.parametrize(
    "name", ["a100-pcie4", "ascend-910c", "gh200-c2c", "h100-pcie5", "h200-pcie5"]
)
def test_the_presets_offer_an_nvme_drive_through_host_memory(name: str):
    # Samsung 990 PRO: 7.45 GB/s read, 6.9 GB/s write, below every host link
    ssd = load_hardware(name).link("ssd")
    assert ssd.staged_through == "host"
    assert ssd.bandwidth_to_device == pytest.approx(7.45e9)
    assert ssd.bandwidth_from_device == pytest.approx(6.9e9)
    assert ssd.capacity == 4 * 10**12


def test_a_file_with_a_base_overrides_its_keys(tmp_path: Path):
    base = write(tmp_path, DEVICE + HOST, "base.toml")
    text = f'base = "{Path(base).name}"\n[tiers.host]\ncapacity = "4GiB"\n'
    hardware = load_hardware(write(tmp_path, text, "small.toml"))
    assert hardware.name == "small"
    host = hardware.link("host")
    assert host.capacity == 4 * 2**30  # its own
    assert host.bandwidth_to_device == pytest.approx(50e9)  # the base's
    assert hardware.hbm_capacity == 2 * 2**30


def test_the_small_host_preset_is_h200_with_vllms_swap_space():
    small, h200 = load_hardware("h200-pcie5-host4gib"), load_hardware("h200-pcie5")
    assert small.link("host").capacity == 4 * 2**30
    assert small.link("ssd") == h200.link("ssd")
    assert small.hbm_capacity == h200.hbm_capacity
    assert small.peak_flops == h200.peak_flops


def test_a_missing_base_is_an_error(tmp_path: Path):
    path = write(tmp_path, 'base = "no-such-preset"\n')
    with pytest.raises(HardwareError, match="unknown hardware 'no-such-preset'"):
        load_hardware(path)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "op_overhead",
            "op_overhed",
            9,
            r"'device\.op_overhed' \(did you mean 'op_overhead'\?\)",
        ),
        (
            "f32 = 1e12",
            "fp32 = 1e12",
            13,
            r"'device\.peak_flops\.fp32' \(did you mean 'f32'\?\)",
        ),
        (
            "[tiers.host]",
            "[tiers.host]\nlatncy = 1",
            16,
            r"'tiers\.host\.latncy' \(did you mean 'latency'\?\)",
        ),
        (
            'description = "a test device"',
            'descripton = "x"',
            2,
            r"'descripton' \(did you mean 'description'\?\)",
        ),
        (
            "[device]",
            "[devices.x]\n[device]",
            4,
            r"'devices' \(did you mean 'device'\?\)",
        ),
    ],
)
def test_an_unknown_key_names_the_nearest_known_one_and_its_line(
    tmp_path: Path, old: str, new: str, line: int, message: str
):
    text = (DEVICE + HOST).replace(old, new, 1)
    assert text != DEVICE + HOST
    path = write(tmp_path, text)
    with pytest.raises(HardwareError, match=message) as raised:
        load_hardware(path)
    assert str(raised.value).startswith(f"{path}:{line}: error: unknown key ")


def test_an_unknown_key_in_a_base_file_names_that_file(tmp_path: Path):
    base = write(tmp_path, (DEVICE + HOST).replace("latency", "latence"), "base.toml")
    over = write(tmp_path, 'base = "base.toml"\n', "over.toml")
    with pytest.raises(HardwareError, match=r"did you mean 'latency'") as raised:
        load_hardware(over)
    assert str(raised.value).startswith(f"{base}:")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'hbm_bandwidth = "1.5TB/s"',
            "hbm_bandwidth = 10",
            r"\[device\] hbm_bandwidth: invalid rate 10: 10 what\? write 10GB/s",
        ),
        (
            'hbm_bandwidth = "1.5TB/s"',
            'hbm_bandwidth = "10"',
            r"10 what\? write 10GB/s",
        ),
        (
            'hbm_capacity = "2GiB"',
            "hbm_capacity = 2147483648",
            r"\[device\] hbm_capacity: invalid size 2147483648: 2147483648 what\?",
        ),
        (
            'bandwidth_to_device = "50GB/s"',
            "bandwidth_to_device = 50e9",
            r"\[tiers\.host\] bandwidth_to_device: invalid rate 50000000000\.0",
        ),
    ],
)
def test_bandwidths_and_sizes_need_units(
    tmp_path: Path, old: str, new: str, message: str
):
    text = (DEVICE + HOST).replace(old, new)
    assert text != DEVICE + HOST
    with pytest.raises(HardwareError, match=message):
        load_hardware(write(tmp_path, text))


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        ("f32 = 1e12", "f32 = 5e-324", r"\[device\.peak_flops\] f32 = 4\.94066e-324"),
        (
            'hbm_bandwidth = "1.5TB/s"',
            'hbm_bandwidth = "1e-300B/s"',
            r"\[device\] hbm_bandwidth = 1e-300",
        ),
    ],
)
def test_a_figure_so_small_that_times_overflow_is_refused(
    tmp_path: Path, old: str, new: str, what: str
):
    text = (DEVICE + HOST).replace(old, new)
    assert text != DEVICE + HOST
    with pytest.raises(
        HardwareError, match=what + " is so small that times would overflow"
    ):
        load_hardware(write(tmp_path, text))


def test_every_preset_reads_strictly():
    for name in preset_names():
        load_hardware(name)
