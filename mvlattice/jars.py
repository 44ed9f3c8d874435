"""Delta Lake's JVM jars: fetched once from Maven Central with Maven, then used offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from mvlattice.errors import SetupError

# Hears one line of what a long step does (the CLI stamps it and prints it on stderr).
Say = Callable[[str], None]
# A Maven run longer than this says it is still going, this often: a first fetch of Delta's
# jars takes minutes, and its own output is hidden (a newcomer needs none of it unless it fails).
HEARTBEAT_S = 15.0

DELTA_VERSION = "4.4.0"
SCALA_VERSION = "2.13"
# Spark already ships these (newer) or does not need them; putting a second copy on the
# classpath only invites version clashes.
_SKIP_PREFIXES = (
    "RoaringBitmap",
    "shims",
    "aircompressor",
    "commons-",
    "hadoop-",
    "jackson-",
    "jsr305",
    "jts-core",
    "log4j-",
    "parquet-",
    "slf4j-",
    "snappy-",
    "zstd-",
)


def jar_dir() -> Path:
    """Where the jars live: $MVLATTICE_JARS, else ~/.cache/mvlattice/jars/delta-<version>."""
    override = os.environ.get("MVLATTICE_JARS")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "mvlattice" / "jars" / f"delta-{DELTA_VERSION}"


def delta_artifact(spark_version: str) -> str:
    major_minor = ".".join(spark_version.split(".")[:2])
    return f"io.delta:delta-spark_{major_minor}_{SCALA_VERSION}:{DELTA_VERSION}"


def installed_jars(directory: Path | None = None) -> tuple[Path, ...]:
    directory = directory or jar_dir()
    if not directory.is_dir():
        return ()
    return tuple(sorted(directory.glob("*.jar")))


def ensure_jars(
    spark_version: str, directory: Path | None = None, say: Say | None = None
) -> tuple[Path, ...]:
    """Return the Delta jars, fetching them with Maven first if they are not there yet."""
    say = say or _quiet
    directory = directory or jar_dir()
    jars = installed_jars(directory)
    if any(j.name.startswith("delta-spark_") for j in jars):
        say(f"already in {directory}: {len(jars)} jars, {size_of(jars)}")
        return jars
    artifact = delta_artifact(spark_version)
    say(f"fetching {artifact} and its dependencies from Maven Central with Maven (output hidden)")
    _fetch(artifact, directory, say)
    jars = installed_jars(directory)
    say(f"{len(jars)} jars, {size_of(jars)}, in {directory}")
    return jars


def run_maven(args: list[str], say: Say, every: float | None = None) -> tuple[int, str]:
    """Run Maven (`args` start with its path) with its output captured, saying every `every`
    seconds (default HEARTBEAT_S) that it is still running; returns its exit code and output."""
    every = every or HEARTBEAT_S
    began = time.monotonic()
    with subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as running:
        while True:
            try:
                output, _ = running.communicate(timeout=every)
                return running.returncode, output
            except subprocess.TimeoutExpired:  # communicate again: nothing read is lost
                say(f"Maven still fetching ({time.monotonic() - began:.0f} s so far)")


def size_of(files: Iterable[Path]) -> str:
    """The files' total size for reading, in decimal kB or MB (as Maven's sizes)."""
    total = sum(f.stat().st_size for f in files)
    return f"{total / 1e6:.1f} MB" if total >= 100_000 else f"{total / 1e3:.1f} kB"


def _quiet(_line: str) -> None:
    pass


def _fetch(artifact: str, directory: Path, say: Say) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(
            f"Delta jars are missing from {directory} and Maven ('mvn') is not on PATH; "
            f"install Maven, or put {artifact} and its dependencies there "
            "(or point MVLATTICE_JARS at a folder that has them)"
        )
    group, name, version = artifact.split(":")
    with tempfile.TemporaryDirectory(prefix="mvlattice-jars-") as tmp:
        pom = Path(tmp) / "pom.xml"
        pom.write_text(_POM.format(group=group, name=name, version=version))
        staging = Path(tmp) / "jars"
        cmd = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
        ]
        code, output = run_maven(cmd, say)
        if code != 0:
            tail = output.strip().splitlines()[-5:]
            raise SetupError(f"could not fetch {artifact} with Maven: " + " | ".join(tail))
        directory.mkdir(parents=True, exist_ok=True)
        for jar in sorted(staging.glob("*.jar")):
            if not jar.name.startswith(_SKIP_PREFIXES):
                # Copy then rename so a half-copied jar never looks installed.
                part = directory / (jar.name + ".part")
                shutil.copyfile(jar, part)
                part.rename(directory / jar.name)


_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>mvlattice</groupId><artifactId>delta-jars</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId><artifactId>{name}</artifactId><version>{version}</version>
      <exclusions><exclusion><groupId>org.scala-lang</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
  </dependencies>
</project>
"""
