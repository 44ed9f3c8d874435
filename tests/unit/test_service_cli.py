"""`mvlattice serve` and `mvlattice log` refuse bad input in a second, before Spark starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from tests.conftest import FOODMART_MODEL


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def test_serving_beyond_loopback_needs_a_token(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "serve", str(FOODMART_MODEL), "--host", "0.0.0.0")
    assert code == 2
    assert err.strip().splitlines() == [
        "mvlattice: error: binding to 0.0.0.0 exposes the service beyond this machine; give "
        "--token-file (a file holding a bearer token) or bind to 127.0.0.1"
    ]


def test_a_short_token_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("short\n")
    code, err = run(capsys, "serve", str(FOODMART_MODEL), "--token-file", str(token))
    assert code == 2 and "at least 16 characters" in err


def test_a_taken_port_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run(capsys, "serve", str(FOODMART_MODEL), "--port", str(port))
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in err


def test_a_missing_model_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run(capsys, "serve", str(tmp_path / "none.yaml"), "--port", "1")
    assert code == 2 and "none.yaml" in err and "Traceback" not in err


@pytest.mark.parametrize("port", ["0", "70000", "http"])
def test_bad_ports(capsys: pytest.CaptureFixture[str], port: str) -> None:
    code, err = run(capsys, "serve", str(FOODMART_MODEL), "--port", port)
    assert code == 2 and "--port" in err


def test_log_refuses_a_bad_since(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "log", str(FOODMART_MODEL), "--since", "last tuesday")
    assert code == 2 and "--since 'last tuesday'" in err


@pytest.mark.parametrize(("extra", "engine"), [((), "auto"), (("--engine", "spark"), "spark")])
def test_serve_engine_reaches_the_settings_and_the_backend(
    monkeypatch: pytest.MonkeyPatch, extra: tuple[str, ...], engine: str
) -> None:
    from mvlattice.cli import cmd_serve
    from mvlattice.http import server

    served: dict = {}
    monkeypatch.setattr(server, "serve", lambda workspaces, **options: served.update(options))
    monkeypatch.setattr(cmd_serve, "_workspace", lambda *_args: object())  # no data needed
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert main(["serve", str(FOODMART_MODEL), "--port", str(port), *extra]) == 0
    assert served["settings"].engine == engine
    # Spark starts later (Runtime.start): the backend is made with the engine, nothing runs
    runtime = server.Runtime({"foodmart": object()}, print, engine=served["settings"].engine)  # type: ignore[dict-item]
    assert runtime.backend.engine == engine


@pytest.mark.parametrize("command", ["tiles", "refresh", "gc", "advise"])
def test_a_warehouse_that_does_not_exist_is_one_line_before_spark(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wrong = tmp_path / "wherehouse"
    code, err = run(capsys, command, str(FOODMART_MODEL), "--warehouse", str(wrong))
    assert code == 2
    assert err.strip().splitlines() == [
        f"mvlattice: error: warehouse {wrong} does not exist: nothing was built there (check "
        "--warehouse or $MVLATTICE_WAREHOUSE; `mvlattice materialize` builds one)"
    ]
    assert not wrong.exists()  # no Spark started there (it would leave _logs/spark.log)


@pytest.mark.parametrize("command", ["plan", "materialize", "tiles", "profile"])
def test_a_misspelt_lattice_is_one_line_before_spark(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.unit.test_model_loader import LATTICE, SCHEMA, write

    model = write(tmp_path, SCHEMA + LATTICE)  # columns declared: it loads with no data
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    code, err = run(capsys, command, str(model), "--lattice", "sale",
                    "--warehouse", str(warehouse))  # fmt: skip
    assert code != 0
    (line,) = err.strip().splitlines()
    assert "no lattice 'sale'" in line and "did you mean 'sales'?" in line, line
    assert list(warehouse.iterdir()) == []  # Spark never started
