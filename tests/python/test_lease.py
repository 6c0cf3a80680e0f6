"""hwaccel.reserve: the library's leases from Python, on fixture machines,
with real lease files in a temporary folder."""
import os
import subprocess
import sys

import pytest

import hwaccel

from conftest import MACHINES


def test_reserve_sets_the_variables_and_releases(tmp_path):
    busy = MACHINES / "dgx-h100-busy-containers"
    with hwaccel.reserve(1, fixture=busy, lease_dir=tmp_path) as lease:
        assert lease.device_ids == ["cuda:4"]
        assert lease.env["CUDA_VISIBLE_DEVICES"] == "GPU-2c8a5c6d-bf3e-4d9a-ab4c-8e7f6a5b4c32"
        out = subprocess.run([sys.executable, "-c", "import os; print(os.environ['CUDA_VISIBLE_DEVICES'])"],
                             env=lease.env, capture_output=True, text=True, check=True).stdout.strip()
        assert out == lease.environment["CUDA_VISIBLE_DEVICES"]
        held = hwaccel.leases(tmp_path)
        assert [h["device_id"] for h in held] == ["cuda:4"] and held[0]["pid"] == os.getpid()
        # The only free GPU is held: a second lease cannot have it.
        with pytest.raises(hwaccel.Timeout, match="process uses it"):
            hwaccel.reserve(1, fixture=busy, lease_dir=tmp_path)
    assert hwaccel.leases(tmp_path) == []


def test_reserve_refuses_what_it_cannot_give(tmp_path):
    mig = MACHINES / "a100-40gb-mig-enabled"
    with pytest.raises(hwaccel.InvalidInput, match="partitioned"):
        hwaccel.reserve(device_ids=["cuda:0"], fixture=mig, lease_dir=tmp_path)
    with pytest.raises(hwaccel.Timeout, match="GiB asked"):
        hwaccel.reserve(1, min_free_memory="30G", fixture=mig, lease_dir=tmp_path)
    with pytest.raises(hwaccel.InvalidInput, match="not a size"):
        hwaccel.reserve(1, min_free_memory="lots", fixture=mig, lease_dir=tmp_path)
    with pytest.raises(ValueError):
        hwaccel.reserve(0, fixture=mig, lease_dir=tmp_path)
    with hwaccel.reserve(device_ids=["cuda:0/mig:1"], fixture=mig, lease_dir=tmp_path) as lease:
        assert lease.environment["CUDA_VISIBLE_DEVICES"].startswith("MIG-")


def test_an_unsafe_lease_directory_is_refused(tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    with pytest.raises(hwaccel.Unsupported, match="sticky"):
        hwaccel.reserve(1, fixture=MACHINES / "amd-2x-mi210-pcie", lease_dir=loose)
