"""Spark's side of the sandbox: parse and analyze a query without running anything, read the
analyzed plan as a tree, and make a DataFrame of exactly the plan that was checked.

`SparkSession.sql` runs commands (SET, ADD JAR, CACHE …) the moment it is called, so it is never
given client text: the parser's plan is refused when it is a command, and the analyzer runs with
commands skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvlattice.errors import RefusedSqlError, SqlError
from mvlattice.sandbox.plan_tree import PlanNode, build_forest

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

COMMAND = "org.apache.spark.sql.catalyst.plans.logical.Command"
# Statements that are not `Command`s before analysis (they become commands later).
_STATEMENT_WORDS = ("Insert", "Create", "Drop", "Alter", "Replace", "Delete", "Update", "Merge",
                    "Cache", "Uncache", "Refresh", "Set", "Reset", "Use", "Show", "Describe",
                    "Explain", "Analyze", "Truncate", "Comment", "Repair", "Add", "List",
                    "Load", "Call")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Analyzed:
    plan: Any  # the JVM's analyzed LogicalPlan
    roots: tuple[PlanNode, ...]


Check = Callable[[tuple[PlanNode, ...]], None]


def analyze(session: SparkSession, sql: str, check_parsed: Check | None = None) -> Analyzed:
    """The analyzed plan of one query; SqlError when it does not parse or resolve,
    RefusedSqlError when it is a statement rather than a query. `check_parsed` sees the
    parser's plan first: what the analyzer does with it (a time travel resolved, a type string
    parsed) no longer shows in the analyzed plan, or happens while analyzing."""
    state = session._jsparkSession.sessionState()  # no public parser API
    jvm: Any = session._jvm
    # The parser reads its settings (variable substitution among them) from the thread's
    # active session, and a thread without one gets Spark's defaults: `${env:…}` expanded.
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    parsed = _call(lambda: state.sqlParser().parsePlan(sql), "SQL does not parse")
    _refuse_statement(jvm, parsed)
    if check_parsed is not None:
        check_parsed(_tree(parsed))
    skip = jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    plan = _call(lambda: state.executePlan(parsed, skip).analyzed(),
                 "SQL is not valid for this model")  # fmt: skip
    return Analyzed(plan, _tree(plan))


def check_parsed_only(session: SparkSession, sql: str, check: Check) -> None:
    """`check` over the parser's plan of `sql`, nothing analyzed: what must be refused before
    any analysis of the text (a type string Spark would parse recursively). Text that does not
    parse, or a statement, is left to whoever analyzes it next to report."""
    state = session._jsparkSession.sessionState()
    jvm: Any = session._jvm
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    try:
        parsed = _call(lambda: state.sqlParser().parsePlan(sql), "SQL does not parse")
        _refuse_statement(jvm, parsed)
    except SqlError:
        return
    check(_tree(parsed))


def _tree(plan: Any) -> tuple[PlanNode, ...]:
    try:
        return tuple(build_forest(json.loads(plan.toJSON())))
    except Exception:  # noqa: BLE001 - a plan Spark cannot write as JSON is not checked: refused
        raise RefusedSqlError("refused: the query's plan could not be inspected") from None


def _refuse_statement(jvm: Any, parsed: Any) -> None:
    name = parsed.getClass().getSimpleName()
    command = jvm.java.lang.Class.forName(COMMAND).isInstance(parsed)
    if command or name.endswith(("Statement", "Command")) or name.startswith(_STATEMENT_WORDS):
        raise RefusedSqlError(
            f"refused: only queries (SELECT or WITH) are accepted, not {_statement_name(name)}"
        )


def _statement_name(name: str) -> str:
    for suffix in ("Command", "Statement"):
        name = name.removesuffix(suffix)
    return name or "a command"


def _call(action: Any, what: str) -> Any:
    from py4j.protocol import Py4JError, Py4JJavaError
    from pyspark.errors.exceptions.base import PySparkException

    try:
        return action()
    except Py4JJavaError as exc:
        raise SqlError(f"{what}: {_first_line(_java_message(exc))}") from None
    except PySparkException as exc:  # Spark's errors, converted by PySpark
        raise SqlError(f"{what}: {_first_line(str(exc))}") from None
    except (Py4JError, RecursionError):
        raise SqlError(f"{what}: the query is too deeply nested") from None


def _java_message(exc: Any) -> str:
    try:
        return str(exc.java_exception.getMessage() or "")
    except Exception:  # noqa: BLE001 - the gateway may be gone
        return ""


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "rejected by Spark"


def dataframe(session: SparkSession, analyzed: Analyzed) -> DataFrame:
    """A DataFrame of the checked plan itself (never the text parsed again)."""
    from pyspark.sql.classic.dataframe import DataFrame

    jvm: Any = session._jvm
    dataset = jvm.org.apache.spark.sql.classic.Dataset.ofRows(
        session._jsparkSession,
        analyzed.plan,
    )
    return DataFrame(dataset, session)


def builtin_functions(session: SparkSession) -> dict[str, str]:
    """Spark's built-in functions (never temporary or persistent ones): name -> class."""
    jvm: Any = session._jvm
    registry = jvm.org.apache.spark.sql.catalyst.analysis.FunctionRegistry.builtin()
    found: dict[str, str] = {}
    names = registry.listFunction().iterator()
    while names.hasNext():
        ident = names.next()
        info = registry.lookupFunction(ident)
        if info.isDefined():
            found[str(ident.funcName())] = str(info.get().getClassName())
    return found
