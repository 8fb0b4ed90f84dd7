"""Bandwidths and sizes need units; a bare whole number is bytes only where asked."""

import pytest

from hyperoffload.support.units import parse_rate, parse_size


@pytest.mark.parametrize("text", [10, 10.0, "10", " 10 ", "10/s"])
def test_a_bare_bandwidth_asks_for_its_unit(text: object):
    with pytest.raises(ValueError, match=r"10(\.0)? what\? write 10(\.0)?GB/s or"):
        parse_rate(text)  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("text", [4096, "4096"])
def test_a_bare_size_asks_for_its_unit_unless_it_is_in_bytes(text: int | str):
    with pytest.raises(ValueError, match=r"4096 what\? write 4096GB or 4096B"):
        parse_size(text)
    assert parse_size(text, bare_bytes=True) == 4096


def test_a_fraction_of_a_byte_is_no_size():
    with pytest.raises(ValueError, match=r"1\.5 what\?"):
        parse_size("1.5", bare_bytes=True)


def test_sizes_and_rates_with_units():
    assert parse_size("1.5 KB") == 1500
    assert parse_size("4B") == 4
    assert parse_rate("52GB/s") == pytest.approx(52e9)
    assert parse_rate("10B/s") == 10.0
