"""Plugins seen from Python: the template plugin (examples/plugins/template)
compiled here, its device found through hwaccel.detect() on a fixture, in
the wheel's own hwaccel-plugin-host (docs/plugins.md)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

import hwaccel

from conftest import SOURCE_DIR, run_cli

CC = shutil.which("gcc") or shutil.which("cc")


@pytest.fixture(scope="module")
def plugin_folder(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    if CC is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("plugins")
    folder.chmod(0o755)
    subprocess.run(
        [CC, "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", f"-I{SOURCE_DIR / 'include'}",
         str(SOURCE_DIR / "examples" / "plugins" / "template" / "template.c"), "-o", str(folder / "my_accel.so")],
        check=True,
    )
    (folder / "my_accel.so").chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("machine")
    device = root / "root" / "sys" / "class" / "my_accel" / "my_accel0"
    device.mkdir(parents=True)
    (device / "name").write_text("My NPU 1\n")
    (device / "mem_bytes").write_text("8589934592\n")
    (root / "fixture.json").write_text(json.dumps({
        "format": 1, "machine": "one my_accel device", "source": "hand-written for test_plugins.py",
        "synthetic": True, "env": {}, "tools": [], "commands": []}))
    return root


def test_the_wheel_names_its_plugin_host() -> None:
    host = os.environ.get("HWACCEL_PLUGIN_HOST", "")
    assert host == os.path.join(os.path.dirname(hwaccel.__file__), "bin", "hwaccel-plugin-host"), host
    assert os.access(host, os.X_OK), host


def test_detect_sees_a_plugin_device(plugin_folder: pathlib.Path, machine: pathlib.Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWACCEL_PLUGIN_PATH", str(plugin_folder))
    registry = hwaccel.detect(fixture=machine)
    device = next(d for d in registry.devices if d.id == "my_accel:0")
    assert device.name == "My NPU 1"
    assert device.memory_bytes == 8 * 2**30
    assert device.backend == "plugin"
    assert device.properties["plugin"] == "my_accel"
    assert not [w for w in registry.warnings if w.backend in ("plugin", "my_accel")]


def test_the_command_lists_it(plugin_folder: pathlib.Path) -> None:
    os.environ["HWACCEL_PLUGIN_PATH"] = str(plugin_folder)
    try:
        listing = run_cli("backends")
    finally:
        del os.environ["HWACCEL_PLUGIN_PATH"]
    assert listing.returncode == 0, listing.stderr
    assert "my_accel (plugin " in listing.stdout


def test_an_unsafe_folder_is_refused(plugin_folder: pathlib.Path, machine: pathlib.Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWACCEL_PLUGIN_PATH", str(plugin_folder))
    plugin_folder.chmod(0o777)
    try:
        registry = hwaccel.detect(fixture=machine)
    finally:
        plugin_folder.chmod(0o755)
    assert not [d for d in registry.devices if d.backend == "plugin"]
    assert any("writable by every user" in w.message for w in registry.warnings)
