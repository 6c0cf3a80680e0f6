"""The package gives what the command gives: plans and training estimates
equal the CLI's JSON for the same arguments, and `python -m hwaccel` is the
command."""

from __future__ import annotations

import json

import hwaccel
from conftest import EIGHT_GPU, MACHINES, run_cli


def cli_json(*args: str) -> object:
    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_plan_matches_cli() -> None:
    cases = [
        (("--model", "llama-3.1-70b", "--devices", "8xH100-SXM-80GB"), dict(devices="8xH100-SXM-80GB")),
        (
            ("--model", "llama-3.1-8b", "--fixture", str(EIGHT_GPU), "--quant", "fp8", "--context", "32768",
             "--batch", "8", "--objective", "latency"),
            dict(fixture=EIGHT_GPU, quant="fp8", context=32768, batch=8, objective="latency"),
        ),
        (("--params", "13B", "--devices", "2xRTX-4090", "--formats", "gguf", "--kv-dtype", "q8_0", "--no-offload"),
         dict(devices="2xRTX-4090", formats="gguf", kv_dtype="q8_0", offload=False)),
    ]
    for args, kwargs in cases:
        model = args[1]
        assert hwaccel.plan(model, **kwargs).to_dict() == cli_json("plan", *args)  # type: ignore[arg-type]


def test_train_matches_cli() -> None:
    args = ("--model", "llama-3.1-8b", "--method", "qlora", "--devices", "1xRTX-4090", "--seq", "4096",
            "--recompute", "full", "--lora-targets", "all")
    estimate = hwaccel.train("llama-3.1-8b", method="qlora", devices="1xRTX-4090", seq=4096, recompute="full",
                             lora_targets=["all"])
    assert estimate.to_dict() == cli_json("train", *args)
    args = ("--params", "70B", "--method", "full", "--zero", "3", "--dp", "8", "--fixture", str(EIGHT_GPU),
            "--optimizer", "adamw-8bit", "--micro-batch", "2")
    estimate = hwaccel.train("70B", method="full", zero=3, dp=8, fixture=EIGHT_GPU, optimizer="adamw-8bit",
                             micro_batch=2)
    assert estimate.to_dict() == cli_json("train", *args)


def test_recommend_matches_cli() -> None:
    rec = hwaccel.recommend("llama-3.1-70b", quant="fp8", providers=["aws", "gcp"])
    assert rec.to_dict() == cli_json("recommend", "--model", "llama-3.1-70b", "--quant", "fp8", "--provider", "aws,gcp")


def test_specs_and_models_match_cli() -> None:
    assert [s.to_dict() for s in hwaccel.specs()] == cli_json("specs")
    assert [m.to_dict() for m in hwaccel.models()] == cli_json("models")


def test_detect_matches_cli() -> None:
    machine = MACHINES / "amd-2x-mi210-pcie"
    done = run_cli("detect", "--fixture", str(machine), "--no-timings", "--pretty")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n") == hwaccel.detect(fixture=machine).to_json(pretty=True, timings=False).rstrip("\n")


def test_python_m_hwaccel_is_the_command() -> None:
    done = run_cli("--version")
    assert done.returncode == 0 and hwaccel.__version__ in done.stdout
    bad = run_cli("plan", "--no-such-flag")
    assert bad.returncode == 2 and bad.stderr


def test_telemetry_matches_cli() -> None:
    done = run_cli("metrics", "--json", "--fixture", str(EIGHT_GPU))
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    mine = hwaccel.telemetry(fixture=EIGHT_GPU).to_dict()
    for varying in ("taken_at", "elapsed_us"):
        cli.pop(varying)
        mine.pop(varying)
    assert mine == cli
    text = run_cli("metrics", "--fixture", str(EIGHT_GPU)).stdout
    stable = lambda t: [l for l in t.splitlines() if "sample_duration" not in l]
    assert stable(hwaccel.metrics(fixture=EIGHT_GPU)) == stable(text)
    assert hwaccel.metrics(fixture=EIGHT_GPU, openmetrics=True).endswith("# EOF\n")
