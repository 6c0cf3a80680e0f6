"""The settings tables as the front ends read them: for every key of the
inference and training tables, and the planning keys with bounds, the
Python package and the command accept the same in-range value and refuse a
value past the bounds (or not one of the names) with the same message, the
library's. tests/unit/settings_test.cpp holds the C API to the same
tables and the same messages."""

from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Tuple

import pytest

import hwaccel
from hwaccel import _native
from conftest import run_cli

KEYS: List[Dict[str, Any]] = [k for k in _native.setting_keys() if k["table"] in ("inference", "training", "planning")]

# What a request needs besides the key tried.
COMPANIONS: Dict[str, Dict[str, str]] = {
    "input-len": {"output-len": "16"},
    "output-len": {"input-len": "16"},
    "sequence-parallel": {"tp": "2", "devices": "2xH100-SXM-80GB"},
    "adapter": {"method": "dpo"},
    "qlora-bits": {"method": "qlora"},
    "base-quant": {"method": "lora"},
}
SAMPLES = {
    "quant": "bf16",
    "kv-dtype": "fp8_e4m3",
    "formats": "gguf",
    "runtime": "vllm",
    "adapter": "lora",
    "lora-targets": "q,v",
    "base-quant": "int8",
    "frozen-quant": "fp8_e4m3",
    "qlora-bits": "4",
    "fabric": "ib-400g",
    "input-len": "16",
    "output-len": "16",
}
# Planning inputs the calls below fill themselves, or that name a file.
SKIPPED = {"model", "params", "devices", "device-specs", "runtime-profiles"}
# Planning inputs of inference alone: training has no speed model.
PLAN_ONLY = {"runtime-profiles"}


def accepted(key: Dict[str, Any]) -> str:
    if key["name"] in SAMPLES:
        return SAMPLES[key["name"]]
    if key["type"] == "whole number":
        return str(int(key["low"]))
    if key["type"] == "number":
        return repr(float(key["low"]))
    if key["type"] == "boolean":
        return key["default"] or "true"
    return str(key["default"])


def refused(key: Dict[str, Any]) -> List[str]:
    if key["type"] == "whole number":
        values = [str(int(key["high"]) + 1), "many"]
        if key["low"] >= 1:
            values.append(str(int(key["low"]) - 1))
        return values
    if key["type"] == "number":
        return ["0.96" if key["high"] == 0.95 else repr(key["high"] + 1), "-0.5", "half"]
    if key["type"] == "boolean":
        return ["sometimes"]
    return ["no-such-value"]


def settings_for(key: Dict[str, Any], value: str) -> Dict[str, str]:
    settings = {"devices": "1xH100-SXM-80GB", **COMPANIONS.get(key["name"], {})}
    settings[key["name"]] = value
    return settings


def training(key: Dict[str, Any]) -> bool:
    return key["table"] == "training"


def key_named(name: str, train: bool) -> Optional[Dict[str, Any]]:
    """The key a call reads for `name`: training and inference both have an
    "offload", of different types, so the call's own table comes first."""
    tables = ("training", "inference", "planning") if train else ("inference", "planning")
    for table in tables:
        match = next((k for k in KEYS if k["name"] == name and k["table"] == table), None)
        if match is not None:
            return match
    return None


def python_answer(train: bool, settings: Dict[str, str]) -> Optional[str]:
    """None when the package planned; else the InvalidInput's message. Values
    go as the text a user would write for a str keyword, as int or float for
    a number, as bool for a boolean written true/false."""
    kwargs: Dict[str, Any] = {}
    for name, text in settings.items():
        key = key_named(name, train)
        value: Any = text
        if key is not None and key["type"] == "whole number" and text.lstrip("-").isdigit():
            value = int(text)
        elif key is not None and key["type"] == "number":
            try:
                value = float(text)
            except ValueError:
                pass
        elif key is not None and key["type"] == "boolean" and text in ("true", "false"):
            value = text == "true"
        kwargs[name.replace("-", "_")] = value
    try:
        if train:
            kwargs.setdefault("method", "full")
            hwaccel.train("7B", **kwargs)
        else:
            hwaccel.plan("7B", **kwargs)
    except hwaccel.InvalidInput as error:
        return str(error)
    return None


def cli_args(key: Dict[str, Any], settings: Dict[str, str]) -> Optional[List[str]]:
    """The command line for these settings, or None where a flag cannot say the value."""
    args: List[str] = []
    for name, value in settings.items():
        match = key_named(name, training(key))
        if match is not None and match["type"] == "boolean" and match["default"] in ("true", "false"):
            if value == match["default"]:
                continue
            if value == ("false" if match["default"] == "true" else "true"):
                args.append(f"--no-{name}" if match["default"] == "true" else f"--{name}")
                continue
            return None  # --no-offload sometimes: no such command line
        args += [f"--{name}", value]
    return args


def cli_answer(train: bool, args: List[str]) -> Tuple[int, str]:
    command = "train" if train else "plan"
    extra = ["--method", "full"] if train and "--method" not in args else []
    done = run_cli(command, "--params", "7B", "--json", *extra, *args)
    return done.returncode, done.stderr


@pytest.mark.parametrize("key", KEYS, ids=lambda k: f"{k['table']}:{k['name']}")
def test_every_front_end_reads_a_key_alike(key: Dict[str, Any]) -> None:
    if key["name"] in SKIPPED:
        pytest.skip("filled by the calls themselves, or a file")
    train = training(key)
    command = "train" if train else "plan"
    good = settings_for(key, accepted(key))
    assert python_answer(train, good) is None, good
    args = cli_args(key, good)
    assert args is not None
    code, stderr = cli_answer(train, args)
    assert code == 0, (args, stderr)
    for value in refused(key):
        bad = settings_for(key, value)
        message = python_answer(train, bad)
        assert message is not None, f"{key['name']}={value} was accepted"
        assert message.startswith(f"{key['name']} '{value}': "), message
        args = cli_args(key, bad)
        if args is None:
            continue
        code, stderr = cli_answer(train, args)
        assert code == 2, (args, stderr)
        assert stderr == f"hwaccel {command}: {message}\n"


def test_the_package_takes_every_key_of_its_tables() -> None:
    plan = inspect.signature(hwaccel.plan).parameters
    train = inspect.signature(hwaccel.train).parameters
    for key in KEYS:
        name = key["name"].replace("-", "_")
        if key["table"] == "inference":
            assert name in plan, name
        if key["table"] == "training":
            assert name in train, name
        if key["table"] == "planning" and key["name"] in PLAN_ONLY:
            assert name in plan and name not in train, name
            assert name in inspect.signature(hwaccel.recommend).parameters, name
        elif key["table"] == "planning" and key["name"] not in ("model", "params"):
            assert name in plan and name in train, name


def test_the_message_names_the_setting_and_its_bounds() -> None:
    with pytest.raises(hwaccel.InvalidInput) as error:
        hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB", batch=65537)
    assert str(error.value) == "batch '65537': not a whole number from 1 to 65536"
    done = run_cli("plan", "--model", "llama-3.1-8b", "--devices", "1xH100-SXM-80GB", "--batch", "65537")
    assert (done.returncode, done.stderr) == (2, "hwaccel plan: batch '65537': not a whole number from 1 to 65536\n")
    with pytest.raises(hwaccel.InvalidInput, match="^timeout-ms '0': not a whole number from 1 to 600000$"):
        hwaccel.detect(timeout_ms=0)
    done = run_cli("detect", "--timeout-ms", "0")
    assert (done.returncode, done.stderr) == (2, "hwaccel detect: timeout-ms '0': not a whole number from 1 to 600000\n")


def test_defaults_are_the_tables() -> None:
    keys = {(k["table"], k["name"]): k for k in _native.setting_keys()}
    assert keys[("inference", "batch")]["default"] == "1"
    assert keys[("inference", "context")]["default"] == "4096"
    assert keys[("training", "optimizer")]["default"] == "adamw"
    assert keys[("detect", "backends")]["env"] == "HWACCEL_BACKENDS"
    assert keys[("planning", "device-specs")]["env"] == "HWACCEL_DEVICE_SPECS"
    assert keys[("recommend", "catalogue")]["env"] == "HWACCEL_INSTANCE_CATALOGUE"
    # None in the package means the table's default: the same plan either way.
    assert hwaccel.plan("llama-3.1-8b", devices="1xH100-SXM-80GB").to_dict() == hwaccel.plan(
        "llama-3.1-8b", devices="1xH100-SXM-80GB", batch=1, context=4096, reserve=0.1
    ).to_dict()
