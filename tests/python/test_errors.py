"""Bad input raises the documented exception with a message naming the input;
nothing crashes the interpreter."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

import hwaccel
from conftest import EIGHT_GPU


def test_missing_fixture_is_not_found(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "no-such-machine"
    with pytest.raises(hwaccel.NotFound) as e:
        hwaccel.detect(fixture=missing)
    assert isinstance(e.value, FileNotFoundError)
    assert isinstance(e.value, hwaccel.Error)
    assert "no-such-machine" in str(e.value)


def test_hostile_fixture_manifest_is_a_parse_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "fixture.json").write_text('{"format": 1, "identity": {"gid": 0}}')
    with pytest.raises(hwaccel.ParseError) as e:
        hwaccel.detect(fixture=tmp_path)
    assert isinstance(e.value, ValueError)
    assert "fixture.json" in str(e.value)


def test_malformed_config_json_names_the_file(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"hidden_size": 4096, "num_hidden_layers": ')
    with pytest.raises(hwaccel.Error) as e:
        hwaccel.plan(config, devices="1xH100-SXM-80GB")
    assert "config.json" in str(e.value)


def test_unknown_quantization_is_invalid_input() -> None:
    with pytest.raises(hwaccel.InvalidInput) as e:
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", quant="q3_banana")
    assert isinstance(e.value, ValueError)
    assert "quant" in str(e.value) and "q3_banana" in str(e.value)


@pytest.mark.parametrize("size", [-7, 0])
def test_non_positive_size_is_invalid_input(size: int) -> None:
    with pytest.raises(hwaccel.InvalidInput) as e:
        hwaccel.plan(size, devices="1xH100-SXM-80GB")
    assert str(size) in str(e.value)


def test_out_of_range_settings() -> None:
    with pytest.raises(hwaccel.InvalidInput, match="context"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", context=0)
    with pytest.raises(hwaccel.InvalidInput, match="batch"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", batch=-1)
    with pytest.raises(hwaccel.InvalidInput, match="reserve"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", reserve=2.0)
    with pytest.raises(hwaccel.InvalidInput, match="objective"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", objective="fastest")
    # A setting is named as the library's tables name it (the CLI's option,
    # the C API's key): timeout-ms for timeout_ms.
    with pytest.raises(hwaccel.InvalidInput, match="timeout-ms"):
        hwaccel.detect(fixture=EIGHT_GPU, timeout_ms=0)


def test_unknown_names() -> None:
    with pytest.raises(hwaccel.InvalidInput, match="H900"):
        hwaccel.hypothetical("2xH900")
    with pytest.raises(hwaccel.InvalidInput, match="backends"):
        hwaccel.detect(fixture=EIGHT_GPU, backends=["cuda", "warp-drive"])
    with pytest.raises(hwaccel.InvalidInput, match="method"):
        hwaccel.train("llama-3.1-8b", method="telepathy", devices="1xH100-SXM-80GB")
    with pytest.raises(hwaccel.InvalidInput, match="provider"):
        hwaccel.recommend("llama-3.1-8b", quant="bf16", providers=["moon"])
    with pytest.raises(hwaccel.Error, match="no-such-model"):
        hwaccel.plan("no-such-model", devices="1xH100-SXM-80GB")
    registry = hwaccel.detect(fixture=EIGHT_GPU)
    with pytest.raises(hwaccel.InvalidInput, match="family"):
        registry.by_family("quantum")
    with pytest.raises(hwaccel.InvalidInput, match="cuda:99"):
        registry.what_if_remove("cuda:99")
    with pytest.raises(hwaccel.InvalidInput, match="device_class"):
        registry.satisfying(device_class="fpga")


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        hwaccel.plan(3.5, devices="1xH100-SXM-80GB")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        hwaccel.detect(fixture=42)  # type: ignore[arg-type]
    with pytest.raises(hwaccel.InvalidInput):
        hwaccel.plan(True, devices="1xH100-SXM-80GB")
    with pytest.raises(hwaccel.InvalidInput, match="at most one"):
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", fixture=EIGHT_GPU)


@pytest.mark.parametrize(
    "text",
    ["", "{", "[]", '{"schema_version": "one"}', '{"schema_version": 1, "devices": [{"id": 5}]}', "\x00\xff"],
)
def test_corrupt_registry_json_is_a_parse_error(text: str) -> None:
    with pytest.raises(hwaccel.ParseError):
        hwaccel.Registry.from_json(text)


def test_bad_devices_for_what_if_add() -> None:
    registry = hwaccel.detect(fixture=EIGHT_GPU)
    with pytest.raises(TypeError):
        registry.what_if_add([1, 2])  # type: ignore[list-item]
    with pytest.raises(hwaccel.InvalidInput):
        registry.what_if_add(registry.devices[1])  # duplicate id


def test_errors_keep_the_interpreter_alive() -> None:
    # A child interpreter meets every error path at once and still exits normally.
    code = (
        "import hwaccel\n"
        "for call in (lambda: hwaccel.detect(fixture='/nonexistent'), lambda: hwaccel.plan(-1),"
        " lambda: hwaccel.Registry.from_json('{'), lambda: hwaccel.hypothetical('')):\n"
        "    try:\n        call()\n    except hwaccel.Error:\n        pass\n"
        "print('alive')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alive"
