"""Binding, tokens and the SQL gate of the service, and the one error-to-status mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.errors import (
    ConflictError,
    DataError,
    JobError,
    ModelError,
    MvlatticeError,
    NotFoundError,
    Problem,
    SetupError,
    SqlError,
    UnsupportedSqlError,
    UsageError,
)
from mvlattice.http.errors import STATUSES, status_of
from mvlattice.http.security import (
    Authority,
    allowed_hosts,
    authority,
    check_binding,
    check_nesting,
    check_query,
    check_tls,
    host_name,
    is_loopback,
    read_token,
    same_origin,
    token_matches,
)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)
    check_binding(host, None)  # no token needed


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "example.com", "192.168.0.1"])
def test_any_other_address_needs_a_token_and_tls(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(UsageError, match=f"binding to {host} exposes .* --token-file"):
        check_binding(host, None)
    with pytest.raises(UsageError, match=f"binding to {host} needs --tls-cert .* reverse proxy"):
        check_binding(host, "t" * 20)
    check_binding(host, "t" * 20, tls=True)


def test_tls_files_go_together_and_must_be_readable(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("x")
    key.write_text("y")
    assert check_tls(None, None) is None
    assert check_tls(str(cert), str(key)) == (str(cert), str(key))
    with pytest.raises(UsageError, match="go together"):
        check_tls(str(cert), None)
    with pytest.raises(UsageError, match="cannot read .*missing.pem"):
        check_tls(str(cert), str(tmp_path / "missing.pem"))


@pytest.mark.parametrize(
    "header, host",
    [("localhost:8765", "localhost"), ("[::1]:8765", "::1"), ("::1", "::1"),
     ("Example.COM", "example.com"), ("127.0.0.1", "127.0.0.1")],
)  # fmt: skip
def test_host_names_lose_their_port_and_case(header: str, host: str) -> None:
    assert host_name(header) == host


@pytest.mark.parametrize(
    "header, host, port",
    [("localhost", "localhost", None), ("LocalHost:8765", "localhost", 8765),
     ("[::1]:80", "::1", 80), ("127.0.0.1", "127.0.0.1", None),
     ("mv.example.com.", "mv.example.com.", None), ("my_service:65535", "my_service", 65535)],
)  # fmt: skip
def test_a_host_header_is_host_and_port(header: str, host: str, port: int | None) -> None:
    assert authority(header) == Authority(host, port)


@pytest.mark.parametrize(
    "header",
    ["localhost:80@evil.com", "user@localhost", "localhost/x", "localhost:", "localhost:abc",
     "localhost:65536", "localhost:+80", "::1", "[::1", "[::1]x", "[fe80::1%25eth0]", "[nope]",
     "a b", "", ":80", "-a.example", "a..b", "évil.com", "local%68ost", "evil.com#.localhost"],
)  # fmt: skip
def test_anything_else_is_no_host(header: str) -> None:
    assert authority(header) is None


@pytest.mark.parametrize(
    "origin, scheme, host, same",
    [("http://localhost:8765", "http", "localhost:8765", True),
     ("HTTP://LOCALHOST:8765", "http", "localhost:8765", True),
     ("http://localhost", "http", "localhost:80", True),
     ("https://mv.example.com:443", "https", "mv.example.com", True),
     ("http://localhost:8766", "http", "localhost:8765", False),
     ("https://localhost:8765", "http", "localhost:8765", False),
     ("http://127.0.0.1:8765", "http", "localhost:8765", False),
     ("http://localhost:8765@evil.com", "http", "localhost:8765", False),
     ("http://localhost:8765/", "http", "localhost:8765", False),
     ("null", "http", "localhost:8765", False),
     ("ftp://localhost:8765", "ftp", "localhost:8765", False)],
)  # fmt: skip
def test_an_origin_is_the_same_only_in_scheme_host_and_port(
    origin: str, scheme: str, host: str, same: bool
) -> None:
    assert same_origin(origin, scheme, authority(host)) is same
    assert same_origin(origin, scheme, None) is False


def test_the_allowed_hosts_are_loopback_the_given_names_and_a_specific_bind() -> None:
    hosts = allowed_hosts(("Mv.Example.com:443",), "10.0.0.5")
    assert {"localhost", "127.0.0.1", "::1", "mv.example.com", "10.0.0.5"} <= hosts
    assert "0.0.0.0" not in allowed_hosts((), "0.0.0.0")


@pytest.mark.parametrize("depth, ok", [(128, True), (129, False)])
def test_nesting_is_bounded_outside_strings_and_comments(depth: int, ok: bool) -> None:
    sql = "select " + "(" * depth + "1" + ")" * depth
    if ok:
        check_nesting(sql)
    else:
        with pytest.raises(SqlError, match=f"{depth} levels deep"):
            check_nesting(sql)
    check_nesting("select '" + "(" * 500 + "' -- " + "(" * 500 + "\n /* " + "[" * 500 + " */")


def test_token_file(tmp_path: Path) -> None:
    good = tmp_path / "token"
    good.write_text("  abcdefghijklmnop1234\n")
    assert read_token(str(good)) == "abcdefghijklmnop1234"
    assert read_token(None) is None
    short = tmp_path / "short"
    short.write_text("abc\n")
    with pytest.raises(UsageError, match="at least 16 characters"):
        read_token(str(short))
    with pytest.raises(UsageError, match="cannot read token file"):
        read_token(str(tmp_path / "missing"))


def test_token_matching() -> None:
    token = "abcdefghijklmnop1234"
    assert token_matches(f"Bearer {token}", token)
    assert token_matches(f"bearer {token}", token)
    assert not token_matches(f"Bearer {token[:-1]}", token)
    assert not token_matches(f"Bearer {token}5", token)
    assert not token_matches(token, token)
    assert not token_matches(None, token)
    assert not token_matches("Bearer ☃", token)  # non-ASCII does not crash compare_digest


@pytest.mark.parametrize(
    "sql",
    [
        "select 1",
        "SELECT a FROM t WHERE b = 'x; drop table t'",
        "with c as (select 1 as a) select a from c",
        "select 1 union all select 2",
        "(select 1) except (select 2)",
        "select 1;",
    ],
)
def test_queries_pass(sql: str) -> None:
    check_query(sql)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("insert into t values (1)", "not INSERT"),
        ("delete from t where a = 1", "not DELETE"),
        ("update t set a = 1", "not UPDATE"),
        ("create table u as select 1", "not CREATE"),
        ("values (1)", "not VALUES"),
        ("merge into t using s on t.a = s.a when matched then delete", "not MERGE"),
        ("select 1; select 2", "got 2"),
        ("", "got 0"),
        ("select (", "does not parse"),
    ],
)
def test_anything_else_is_a_sql_error(sql: str, message: str) -> None:
    with pytest.raises(SqlError, match=message):
        check_query(sql)


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (NotFoundError("no lattice 'x'"), 404, "not_found"),
        (ConflictError("busy"), 409, "conflict"),
        (SqlError("bad"), 400, "bad_sql"),
        (UnsupportedSqlError("no"), 400, "unsupported_sql"),
        (UsageError("no"), 400, "bad_request"),
        (ModelError([Problem("m.yaml", "a.b", "wrong")]), 400, "bad_model"),
        (DataError("dup key"), 400, "bad_data"),
        (JobError("query failed: division by zero"), 400, "query_failed"),
        (SetupError("no jars"), 503, "unavailable"),
        (MvlatticeError("other"), 400, "error"),
        (KeyError("x"), 500, "internal"),
        (RuntimeError("/secret/path"), 500, "internal"),
    ],
)
def test_errors_map_to_statuses_in_one_place(exc: Exception, status: int, code: str) -> None:
    got_status, got_code, message = status_of(exc)
    assert (got_status, got_code) == (status, code)
    assert "\n" not in message
    if status == 500:
        assert "secret" not in message


def test_every_error_class_has_a_status() -> None:
    classes = {cls for cls, _, _ in STATUSES}
    import mvlattice.errors as errors

    ours = {
        obj for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, MvlatticeError) and obj is not MvlatticeError
    }  # fmt: skip
    assert ours <= classes


def test_a_model_error_is_one_line() -> None:
    problems = [Problem("m.yaml", "a", "first"), Problem("m.yaml", "b", "second")]
    _, _, message = status_of(ModelError(problems))
    assert message == "2 problems in model: m.yaml: a: first; m.yaml: b: second"
