"""Building a SparkSession with Delta enabled and the model's tables registered."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvlattice.errors import SetupError
from mvlattice.jars import ensure_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"

# Defaults for the embedded (local) mode only; on a cluster the cluster's settings rule.
_LOCAL_DEFAULTS = {
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "4g",
}
_ALWAYS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.databricks.delta.snapshotPartitions": "2",
    # `${env:…}` and `${system:…}` in SQL text would read the environment and the JVM's
    # settings into a query: never for the service's clients (see sandbox.Sandbox).
    "spark.sql.variable.substitute": "false",
}


def resolve_master(explicit: str | None, model_master: str | None = None) -> str:
    """--master, else $MVLATTICE_MASTER or $SPARK_MASTER, else the model's, else local[*]."""
    return (
        explicit
        or os.environ.get("MVLATTICE_MASTER")
        or os.environ.get("SPARK_MASTER")
        or model_master
        or DEFAULT_MASTER
    )


def spark_conf(master: str, warehouse: str, layers: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """The effective conf: our defaults, then each layer (model, then command line) on top."""
    conf: dict[str, str] = {}
    if master.startswith("local"):
        conf.update(_LOCAL_DEFAULTS)
    conf["spark.sql.warehouse.dir"] = _join(warehouse, "_spark_catalog")
    log4j = Path(__file__).resolve().parent / "data" / "log4j2.properties"
    conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log4j}"
    for layer in layers:
        conf.update(layer)
    for key, value in _ALWAYS.items():
        conf.setdefault(key, value)
    return conf


def build_session(
    master: str, warehouse: str, conf: Mapping[str, str], app_name: str = "mvlattice"
) -> SparkSession:
    """Start (or reuse) the SparkSession; Delta's jars come from the local jar folder."""
    try:
        import pyspark
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - packaging problem
        raise SetupError(f"pyspark is not installed: {exc}") from None
    settings = dict(conf)
    if "spark.jars.packages" not in settings:
        jars = ensure_jars(pyspark.__version__)
        existing = [j for j in settings.get("spark.jars", "").split(",") if j]
        settings["spark.jars"] = ",".join(existing + [str(j) for j in jars])
    if _on_this_machine(master):
        # The profiler's sketches run in Python workers (mapInArrow), which must import
        # mvlattice, numpy and pandas: on this machine that is this interpreter, not whatever
        # `python3` is first on PATH. On a remote cluster PYSPARK_PYTHON is the user's to set.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with _jvm_stderr_to(log_file(warehouse)):
            spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - the JVM's failures arrive as many types
        raise SetupError(
            f"could not start Spark (master {master}): {str(exc).strip().splitlines()[0]}"
        ) from None
    spark.sparkContext.setLogLevel("ERROR")
    _jvm_stdout_to(spark, log_file(warehouse))
    quiet_python_loggers()
    interrupt_without_reentry(spark)
    return spark


def interrupt_without_reentry(spark: SparkSession) -> None:
    """Ctrl-C cancels Spark's jobs from a thread of its own, then interrupts the main thread as
    Python does by default. PySpark's own handler cancels through py4j inside the signal
    handler, on the main thread, which is usually itself waiting in a py4j call: py4j then
    fails ("reentrant call") and logs two tracebacks. A handler that is not PySpark's (a
    server's, the user's) is left alone."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread
    if getattr(signal.getsignal(signal.SIGINT), "__module__", None) != "pyspark.core.context":
        return
    context = spark.sparkContext

    def on_interrupt(signum: int, frame: Any) -> None:
        threading.Thread(target=_cancel_all, args=(context,), daemon=True).start()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)


def _cancel_all(context: Any) -> None:
    try:
        context.cancelAllJobs()
    except Exception:  # noqa: BLE001 - the process is stopping; a JVM already gone is fine
        return


def _on_this_machine(master: str) -> bool:
    """Local mode, or a standalone master on loopback (its workers share this machine)."""
    if master.startswith("local"):
        return True
    host = master.removeprefix("spark://").split(":")[0]
    return master.startswith("spark://") and host in ("localhost", "127.0.0.1", "[::1]")


def _jvm_stdout_to(spark: SparkSession, path: Path) -> None:
    """What the JVM prints to System.out (Delta's VACUUM reports deleted files there) goes to
    the Spark log, never into a command's output (`--json` must stay one document)."""
    jvm: Any = spark._jvm  # no public way to reach System.out
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = jvm.java.io.FileOutputStream(str(path), True)
        jvm.java.lang.System.setOut(jvm.java.io.PrintStream(stream, True, "UTF-8"))
    except Exception:  # noqa: BLE001 - a remote log location: leave System.out as it is
        return


def quiet_python_loggers() -> None:
    """PySpark logs every failed query to stderr as JSON; mvlattice reports errors itself."""
    import logging

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger", "py4j"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL + 1)
        # py4j logs a lost gateway with a traceback; a logging set-up applied later (uvicorn's)
        # must not bring it back to the root handlers.
        logger.propagate = False
    # py4j also logs through the root logger (`logging.exception(...)`, e.g. a call cut short
    # by Ctrl-C), with a traceback: those records are dropped too.
    root = logging.getLogger()
    if not any(isinstance(f, _NotFromPy4j) for f in root.filters):
        root.addFilter(_NotFromPy4j())


class _NotFromPy4j:
    """A logging filter: records logged by py4j's own modules are dropped."""

    def filter(self, record: Any) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname


def log_file(warehouse: str) -> Path:
    """Where the JVM's own console output goes: <warehouse>/_logs/spark.log when local."""
    base = Path(warehouse) if "://" not in warehouse else Path.home() / ".cache" / "mvlattice"
    return base / "_logs" / "spark.log"


@contextlib.contextmanager
def _jvm_stderr_to(path: Path) -> Iterator[None]:
    """The JVM inherits file descriptor 2 when it starts; hand it a log file instead, so its
    start-up chatter never reaches the user's terminal. Python's own stderr is restored."""
    if _jvm_running():
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(2)
    try:
        with path.open("ab") as log:
            sys.stderr.flush()
            os.dup2(log.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def jvm_running() -> bool:
    """Whether this process already runs Spark's JVM (a session is then quick to get)."""
    return _jvm_running()


def _jvm_running() -> bool:
    from pyspark import SparkContext

    return SparkContext._jvm is not None  # no public way to ask


def _join(base: str, part: str) -> str:
    return base.rstrip("/") + "/" + part
