"""The backend over real Workspaces — one per served model, all on one SparkSession.

Requests may name a model; without one, a rewrite tries each model in order and answers with
the first that rewrites (else the first answer), and names of lattices and tiles are looked up
in every model (a name in several models needs `model=`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from mvlattice.engine.acceptance import analyze
from mvlattice.errors import ConflictError, MvlatticeError, NotFoundError, UsageError
from mvlattice.http.backend import Answer, Rewritten, SparkWork
from mvlattice.http.jobs import Scope
from mvlattice.http.plans import Plans
from mvlattice.http.render import (
    answer_of,
    lattice_document,
    plan_summary,
    rewrite_document,
)
from mvlattice.lattice.lattice import Lattice
from mvlattice.mvrewrite.closest import miss_reason
from mvlattice.sandbox.sandbox import Sandbox
from mvlattice.serving.decide import explain_miss
from mvlattice.serving.pipeline import Pending, answer_on_spark, answer_without_spark
from mvlattice.serving.request import Check, Request
from mvlattice.workspace import Workspace

if TYPE_CHECKING:
    from pyspark.sql.types import StructType
    from sqlglot import exp

T = TypeVar("T")


class WorkspaceBackend:
    def __init__(
        self,
        workspaces: Mapping[str, Workspace],
        query_timeout: float = 60.0,
        engine: str = "auto",
        max_bytes: int | None = None,
    ) -> None:
        if not workspaces:
            raise UsageError("no model to serve")
        self.workspaces = dict(workspaces)
        self.query_timeout = query_timeout
        self.engine = engine  # `serve --engine`: auto (the tile engine when it can) | spark
        self.max_bytes = max_bytes  # about the bytes of rows a Spark answer fetches
        self._sandboxes: dict[str, Sandbox] = {}
        self._describers: dict[str, Callable[[str], StructType]] = {}
        self._acceptors: dict[str, Callable[[str], None]] = {}
        self._ready = False
        self._plans = Plans(self._plan_lattice)
        self._readers: dict[int, Any] = {}  # id(workspace) -> TableReader (cached by version)

    def start(self) -> None:
        """Start Spark and register every model's tables and tiles, before serving."""
        for name, ws in self.workspaces.items():
            self._sandboxes[name] = Sandbox(ws.spark, ws.model, self.query_timeout, self.max_bytes)
        self._ready = True

    def models(self) -> tuple[str, ...]:
        return tuple(self.workspaces)

    def ready(self) -> bool:
        return self._ready

    def spark_alive(self) -> bool:
        """Whether the one SparkSession every model shares still answers."""
        return next(iter(self.workspaces.values())).spark_alive()

    # -- rewrite and query ---------------------------------------------------------------------
    def rewrite(self, sql: str, explain: bool, model: str | None) -> Rewritten:
        def one(name: str, ws: Workspace) -> Rewritten:
            started = time.perf_counter()
            result = ws.rewrite(sql, explain=explain, accept=self._acceptor(name, ws))
            seconds = time.perf_counter() - started
            doc = rewrite_document(result, explain)
            views = tuple(doc["materializations"])
            return Rewritten(name, doc, bool(doc["rewritten"]), views, seconds)

        return self._first(model, one, lambda r: r.rewritten)

    def query(
        self,
        sql: str,
        rewrite: bool,
        limit: int,
        model: str | None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        name, ws = self._query_model(sql, rewrite, model)
        return answer_of(
            name, ws.serve(self._request(name, ws, sql, rewrite, limit, cancel)), limit
        )

    def _request(
        self,
        name: str,
        ws: Workspace,
        sql: str,
        rewrite: bool,
        limit: int,
        cancel: threading.Event | None,
        tree: exp.Query | None = None,
        check: Check | None = None,
    ) -> Request:
        """A client's query as the serving pipeline takes it: one row more than `limit` (to
        say whether there were more), run and described in the model's sandbox."""

        def run(text: str, rows: int | None) -> tuple[list[str], list[tuple[Any, ...]]]:
            return self._sandbox(name, ws).run(text, rows, cancel)

        return Request(sql=sql, rewrite=rewrite, limit=limit + 1, tree=tree, engine=self.engine,
                       runner=run, describe=self._describer(name, ws),
                       accept=self._acceptor(name, ws), timeout=self.query_timeout,
                       cancel=cancel, check=check)  # fmt: skip

    def query_local(
        self,
        sql: str,
        rewrite: bool,
        limit: int,
        model: str | None,
        cancel: threading.Event | None = None,
        tree: exp.Query | None = None,
        check: Check | None = None,
    ) -> Answer | SparkWork:
        """The tile engine's answer, else the query decided (rewritten once) as SparkWork for
        one of the service's Spark query slots: answers from tiles never wait behind Spark
        jobs. Nothing runs on Spark here, and no hit is counted for SparkWork until it runs.
        `check`: the service's check of the text, run unless a template answers it."""
        if check is not None and model is None and len(self.workspaces) > 1:
            tree, check = check(sql) or tree, None  # choosing the model rewrites: check first
        name, ws = self._query_model(sql, rewrite, model)
        request = self._request(name, ws, sql, rewrite, limit, cancel, tree, check)
        outcome = answer_without_spark(ws, request)
        if isinstance(outcome, Pending):
            miss = self._miss(name, ws, outcome)

            def run() -> Answer:
                return replace(answer_of(name, answer_on_spark(ws, outcome), limit), miss=miss)

            return SparkWork(run)
        return answer_of(name, outcome, limit)

    def _miss(self, name: str, ws: Workspace, pending: Pending) -> str:
        """Why a query to be rewritten was not: its nearest view's reason. The pipeline decides
        without explaining every view, so a miss (on its way to Spark, which costs far more)
        is rewritten once more, explained; "" for a query rewritten or not to be."""
        request = pending.request
        if not request.rewrite or pending.decision.result.rewritten:
            return ""
        explained = explain_miss(ws, request.sql, request.tree)
        return "" if explained.rewritten else miss_reason(explained)

    def query_kept(self, sql: str, rewrite: bool, limit: int, model: str | None) -> Answer | None:
        """The tile engine's kept answer to the query while freshness, decided from local
        Delta logs alone, still approves every tile it was read from; else None. Cheap and
        free of Spark: the service asks it on its event loop, before any thread. A request
        that names no model among several goes the long way (which model rewrites it is a
        rewrite's to decide)."""
        if not rewrite or self.engine == "spark":
            return None
        if model is None and len(self.workspaces) > 1:
            return None
        name, ws = self._pick(model)[0]
        result = ws.kept_answer(sql, limit + 1, self._describer(name, ws))
        return None if result is None else answer_of(name, result, limit)

    def _query_model(self, sql: str, rewrite: bool, model: str | None) -> tuple[str, Workspace]:
        name = model
        if name is None and len(self.workspaces) > 1:
            # the model that rewrites; without rewriting any will do (one shared SparkSession)
            name = self.rewrite(sql, False, None).model if rewrite else next(iter(self.workspaces))
        return self._pick(name)[0]

    def _describer(self, name: str, ws: Workspace) -> Callable[[str], StructType]:
        """The model's sandbox check, returning Spark's output schema: the tile engine answers
        only SQL the sandbox allows. One function per model, so that the tile engine's plans
        made through it are found again (and never through another describer)."""
        found = self._describers.get(name)
        if found is None:

            def describe(text: str) -> StructType:
                return self._sandbox(name, ws).describe(text)

            found = self._describers.setdefault(name, describe)
        return found

    def _acceptor(self, name: str, ws: Workspace) -> Callable[[str], None]:
        """Spark's parse and analysis of a client's text, in the model's sandbox session (no
        file paths read, even to infer a schema): only what it accepts is rewritten. One
        function per model, so that the texts it accepted are found again."""
        found = self._acceptors.get(name)
        if found is None:

            def accept(text: str) -> None:
                sandbox = self._sandbox(name, ws)
                sandbox.precheck(text)  # a client's text is hostile before it is analyzed
                analyze(sandbox.session, text)

            found = self._acceptors.setdefault(name, accept)
        return found

    def _sandbox(self, name: str, ws: Workspace) -> Sandbox:
        if name not in self._sandboxes:  # a backend used before start()
            self._sandboxes[name] = Sandbox(ws.spark, ws.model, self.query_timeout, self.max_bytes)
        return self._sandboxes[name]

    # -- lattices and tiles --------------------------------------------------------------------
    def lattices(self, model: str | None) -> list[dict[str, Any]]:
        return [
            lattice_document(lat, name)
            for name, ws in self._pick(model)
            for lat in ws.model.lattices
        ]

    def lattice(self, name: str, model: str | None, plan: bool) -> dict[str, Any]:
        owner, lat = self._lattice(name, model)
        doc = lattice_document(lat, owner)
        if plan:
            doc["plan"] = self._plans.plan((owner, lat.name))
        return doc

    def lattice_now(self, name: str, model: str | None, wait: float = 5.0) -> dict[str, Any]:
        """`lattice` with its plan when it is ready within `wait` seconds, else with
        `planning`: what the planner, busy in a thread of its own, does now."""
        owner, lat = self._lattice(name, model)
        doc = lattice_document(lat, owner)
        found = self._plans.plan_or_progress((owner, lat.name), wait)
        doc["planning" if isinstance(found, str) else "plan"] = found
        return doc

    def tiles(self, model: str | None, lattice: str | None) -> list[dict[str, Any]]:
        if lattice is not None:
            model = self._lattice(lattice, model)[0]
        return [
            {**entry.to_json(), "model": name, "build_seconds": self._took(ws, entry)}
            for name, ws in self._pick(model)
            for entry in ws.tiles(lattice)
        ]

    def advice(
        self, model: str | None, since: str | None, stop: Callable[[], bool] = lambda: False
    ) -> list[dict[str, Any]]:
        from mvlattice.advise.advisor import advise
        from mvlattice.querylog.log import parse_since

        start = parse_since(since)
        return [
            {"model": name, **advise(ws, start, stop).to_json()} for name, ws in self._pick(model)
        ]

    def log_versions(self, model: str | None) -> tuple[int | None, ...]:
        """The Delta version of each picked model's query log (None: no log yet)."""
        from mvlattice.delta.log import latest_version
        from mvlattice.querylog.log import log_location

        return tuple(
            latest_version(ws.spark, log_location(ws.warehouse)) for _, ws in self._pick(model)
        )

    def _took(self, ws: Workspace, entry: Any) -> float | None:
        """How long the last build of a catalog entry's table took (its record says)."""
        from mvlattice.jobs.tables import TableReader

        location = getattr(entry, "location", "")
        if not location:
            return None
        try:
            reader = self._readers.get(id(ws))
            if reader is None:
                reader = self._readers[id(ws)] = TableReader(ws.spark)
            state = reader.state(location)
        except Exception:  # noqa: BLE001 - a duration is a nicety: never fail the catalog
            return None
        record = state.record if state is not None else None
        return round(record.build_seconds, 3) if record is not None else None

    def refresh_scope(self, tile: str, model: str | None) -> Scope:
        found = [
            (name, entry)
            for name, ws in self._pick(model)
            for entry in ws.tiles()
            if entry.name.lower() == tile.lower()
        ]
        if not found:
            raise NotFoundError(f"no tile or materialization '{tile}' (see GET /v1/tiles)")
        if len(found) > 1:
            raise UsageError(f"'{tile}' is in models {_names(n for n, _ in found)}; add ?model=")
        name, entry = found[0]
        if entry.status == "building":
            raise ConflictError(f"{entry.name} is being built right now; try again later")
        return Scope(name, entry.lattice, entry.name)

    def materialize_scope(self, lattice: str, model: str | None) -> Scope:
        owner, lat = self._lattice(lattice, model)
        return Scope(owner, lat.name)

    def run(self, kind: str, scope: Scope) -> tuple[bool, dict[str, Any]]:
        ws = self.workspaces[scope.model]
        try:
            if kind == "refresh":
                result = ws.refresh(tile=scope.target)
            else:
                result = ws.materialize(scope.lattice)
        finally:
            self._plans.forget()  # a build may have changed statistics and the stored plan
        return bool(result.ok), result.to_json()

    # -- lookup --------------------------------------------------------------------------------
    def _pick(self, model: str | None) -> list[tuple[str, Workspace]]:
        if model is None:
            return list(self.workspaces.items())
        if model not in self.workspaces:
            raise NotFoundError(f"no model '{model}' is served; models: {_names(self.workspaces)}")
        return [(model, self.workspaces[model])]

    def _lattice(self, name: str, model: str | None) -> tuple[str, Lattice]:
        found = [
            (owner, lat) for owner, ws in self._pick(model) for lat in ws.model.lattices
            if lat.name == name
        ]  # fmt: skip
        if not found:
            known = sorted({lat.name for _, ws in self._pick(model) for lat in ws.model.lattices})
            raise NotFoundError(f"no lattice '{name}'; lattices: {', '.join(known) or 'none'}")
        if len(found) > 1:
            raise UsageError(f"lattice '{name}' is in models {_names(o for o, _ in found)}; "
                             "add ?model=")  # fmt: skip
        return found[0]

    def _plan_lattice(self, key: tuple[str, str], say: Callable[[str], None]) -> dict[str, Any]:
        owner, lattice = key
        return plan_summary(self.workspaces[owner].plan(lattice=lattice, progress=say))

    def _first(
        self,
        model: str | None,
        attempt: Callable[[str, Workspace], T],
        good: Callable[[T], bool],
    ) -> T:
        """The first model's answer that is `good`, else the first answer; errors only when
        every model fails (then the first error)."""
        answers: list[T] = []
        errors: list[MvlatticeError] = []
        for name, ws in self._pick(model):
            try:
                answer = attempt(name, ws)
            except MvlatticeError as exc:
                errors.append(exc)
                continue
            if good(answer):
                return answer
            answers.append(answer)
        if answers:
            return answers[0]
        raise errors[0]


def _names(names: Any) -> str:
    return ", ".join(sorted(set(names)))
