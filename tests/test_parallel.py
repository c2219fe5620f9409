"""The suite on several processes: each xdist worker on a Redis database of its own, the tests that
must run alone marked ``serial``, and the launcher's two phases adding up to one verdict."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import worker_redis_url
from launcher.__main__ import NO_TESTS, _step, overall_status

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parent.parent
PROBE = Path(__file__).with_name("parallel_probe.py")


def test_each_worker_takes_the_redis_database_after_the_base_one() -> None:
    assert worker_redis_url("redis://127.0.0.1:6390/9", 0) == "redis://127.0.0.1:6390/10"
    assert worker_redis_url("redis://127.0.0.1:6390/9", 3) == "redis://127.0.0.1:6390/13"
    assert worker_redis_url("redis://:pw@127.0.0.1:6390", 0) == "redis://:pw@127.0.0.1:6390/1"


def test_more_workers_than_redis_has_databases_is_refused_with_what_to_do() -> None:
    with pytest.raises(pytest.UsageError, match="run fewer workers"):
        worker_redis_url("redis://127.0.0.1:6390/9", 6)


def test_two_xdist_workers_read_two_redis_databases_in_their_settings_and_celery_app(tmp_path: Path) -> None:
    env = dict(os.environ, REDIS_URL="redis://127.0.0.1:6390/9", BRAIN_PROBE_DIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "each", str(PROBE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    seen = {path.name: path.read_text().split() for path in tmp_path.iterdir()}
    assert sorted(seen) == ["gw0", "gw1"], run.stdout[-3000:]
    assert seen["gw0"] == ["redis://127.0.0.1:6390/10"] * 3
    assert seen["gw1"] == ["redis://127.0.0.1:6390/11"] * 3


def test_the_tests_that_stop_shared_services_or_drop_connections_are_serial() -> None:
    files = ["tests/test_faults.py", "tests/test_database_outage.py", "tests/test_tiers.py"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "serial", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # With the -q of addopts, -qq: a line per file, "tests/test_faults.py: 3".
    collected = {line.split(":")[0] for line in run.stdout.splitlines() if line.startswith("tests/")}
    assert collected == {"tests/test_faults.py", "tests/test_database_outage.py"}


def test_a_phase_that_collected_nothing_fails_the_run_only_when_no_phase_ran_a_test() -> None:
    assert overall_status([0, NO_TESTS]) == 0
    assert overall_status([NO_TESTS, 0]) == 0
    assert overall_status([NO_TESTS, NO_TESTS]) == NO_TESTS
    assert overall_status([1, 0]) == 1
    assert overall_status([NO_TESTS, 1]) == 1
    assert overall_status([0, 0]) == 0


def test_a_step_adds_up_the_counts_on_pytests_closing_line(capfd: pytest.CaptureFixture[str]) -> None:
    counts: Counter[str] = Counter()
    closing = "print('..F'); print('1 failed, 10 passed, 2 skipped, 1 error in 3.10s'); print()"
    assert _step("a phase", [sys.executable, "-c", closing], dict(os.environ), counts) == 0
    assert _step("another", [sys.executable, "-c", "print('4 passed in 1.00s')"], dict(os.environ), counts) == 0
    assert counts == Counter(passed=14, failed=1, skipped=2, error=1)
    assert "1 failed, 10 passed, 2 skipped, 1 error in 3.10s" in capfd.readouterr().out
