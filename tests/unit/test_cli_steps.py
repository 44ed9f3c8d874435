"""Progress lines for long CLI steps (issue 36): the timed-step helper, Maven's heartbeat, and
`mvlattice setup` against a stand-in `mvn` on PATH (no network): what is fetched and when each
part is done go to stderr, stamped; Maven's own output stays hidden; stdout keeps its lines."""

from __future__ import annotations

import doctest
import io
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from mvlattice import jars
from mvlattice.cli import steps as steps_module
from mvlattice.cli.main import main
from mvlattice.cli.steps import Steps
from mvlattice.errors import MvlatticeError

STAMP = re.compile(r"^\[\s*\d+\.\ds\] ", re.M)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_step_says_what_it_does_its_lines_and_its_wall_time() -> None:
    out, clock = io.StringIO(), Clock()
    steps = Steps(out, clock)
    clock.now = 101.5
    with steps.step("loading FoodMart") as say:
        clock.now = 104.0
        say("customer 10,281 rows")
        clock.now = 108.25
    steps.done("datasets foodmart")
    assert out.getvalue().splitlines() == [
        "[   1.5s] loading FoodMart …",
        "[   4.0s]   customer 10,281 rows",
        "[   8.2s] loading FoodMart: done in 6.8 s",
        "[   8.2s] datasets foodmart: done in 8.2 s",
    ]


def test_a_failing_step_says_so_and_the_error_goes_on() -> None:
    out, clock = io.StringIO(), Clock()
    steps = Steps(out, clock)
    with pytest.raises(MvlatticeError, match="no Maven"), steps.step("Delta's jars"):
        clock.now = 103.0
        raise MvlatticeError("no Maven")
    assert out.getvalue().splitlines()[-1] == "[   3.0s] Delta's jars: failed after 3.0 s"
    assert "done" not in out.getvalue()


def test_lines_go_to_stderr_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    Steps().say("hello")
    out, err = capsys.readouterr()
    assert out == "" and STAMP.match(err) and err.endswith("hello\n")


def test_doctests() -> None:
    assert doctest.testmod(steps_module).failed == 0


def test_run_maven_says_it_is_still_running_and_keeps_the_output() -> None:
    heard: list[str] = []
    script = "import time; print('[INFO] noise'); time.sleep(0.7); print('end')"
    code, output = jars.run_maven([sys.executable, "-c", script], heard.append, every=0.2)
    assert code == 0 and output == "[INFO] noise\nend\n"
    assert len(heard) >= 2 and all(h.startswith("Maven still fetching (") for h in heard), heard


FAKE_MVN = """\
    #!{python}
    # A stand-in for Maven: chatters, waits, then does what mvlattice asks of the real one.
    import os, pathlib, sys, time, zipfile
    print("[INFO] Downloading from central: https://repo.maven.apache.org/... (noise)")
    if os.environ.get("FAKE_MVN_FAIL"):
        print("[ERROR] Could not resolve dependencies")
        sys.exit(1)
    time.sleep(float(os.environ.get("FAKE_MVN_SLEEP", "0")))
    for arg in sys.argv[1:]:
        if arg.startswith("-DoutputDirectory="):
            out = pathlib.Path(arg.split("=", 1)[1])
            out.mkdir(parents=True)
            (out / "delta-spark_2.13-4.4.0.jar").write_bytes(b"x" * 150_000)
            (out / "delta-storage-4.4.0.jar").write_bytes(b"x" * 50_000)
            (out / "slf4j-api-2.0.jar").write_bytes(b"x")  # Spark has it: not copied
        if arg.startswith("-Dartifact="):
            group, name, version = arg.split("=", 1)[1].split(":")
            folder = pathlib.Path.home() / ".m2" / "repository" / group.replace(".", "/")
            jar = folder / name / version / f"{{name}}-{{version}}.jar"
            jar.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(jar, "w") as archive:
                archive.writestr("queries.json", "[]")
"""


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME, the jar folder and the cache under tmp_path, and the stand-in mvn first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(textwrap.dedent(FAKE_MVN).format(python=sys.executable))
    mvn.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MVLATTICE_JARS", str(tmp_path / "jars"))
    monkeypatch.setenv("MVLATTICE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(jars, "HEARTBEAT_S", 0.2)
    return tmp_path


def test_setup_says_what_it_fetches_and_when_each_part_is_done(
    fake_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_MVN_SLEEP", "0.5")
    assert main(["setup"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"Delta jars: 2 in {fake_home / 'jars'}",
        f"FoodMart data: {fake_home}/home/.m2/repository/net/hydromatic/foodmart-data-json/0.4/"
        "foodmart-data-json-0.4.jar",
        f"FoodMart query set: {fake_home}/cache/datasets/foodmart-queries-0.4.1/queries.json",
    ]
    lines = err.splitlines()
    assert all(STAMP.match(line) for line in lines), err
    assert "noise" not in err  # Maven's own output stays hidden
    for what in ("Delta's jars", "FoodMart data", "FoodMart query set"):
        assert any(re.search(rf"\] {what} …$", line) for line in lines), err
        assert any(re.search(rf"\] {what}: done in \d+\.\d s$", line) for line in lines), err
    assert re.search(r"fetching io\.delta:delta-spark_[\d.]+_2\.13:4\.4\.0 and its dep", err)
    assert re.search(r"  2 jars, 0\.2 MB, in ", err), err
    assert re.search(r"fetching net\.hydromatic:foodmart-queries:0\.4\.1 from Maven Central", err)
    assert "Maven still fetching (" in err  # each fetch took longer than the heartbeat
    assert re.search(r"\] setup: done in \d+\.\d s$", lines[-1]), err

    assert main(["setup"]) == 0  # a second run fetches nothing and says where everything is
    out, err = capsys.readouterr()
    assert "fetching" not in err and err.count("already in ") == 3, err


def test_setup_when_maven_fails_says_which_part_failed_in_one_line(
    fake_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_MVN_FAIL", "1")
    assert main(["setup", "--no-data"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert re.search(r"\] Delta's jars: failed after \d+\.\d s$", err, re.M), err
    last = err.splitlines()[-1]
    assert last.startswith("mvlattice: error: could not fetch io.delta:delta-spark_")
    assert last.endswith("[ERROR] Could not resolve dependencies")
