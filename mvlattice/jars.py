"""Delta Lake's JVM jars: fetched once from Maven Central with Maven, then used offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from mvlattice.errors import SetupError

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


def ensure_jars(spark_version: str, directory: Path | None = None) -> tuple[Path, ...]:
    """Return the Delta jars, fetching them with Maven first if they are not there yet."""
    directory = directory or jar_dir()
    jars = installed_jars(directory)
    if any(j.name.startswith("delta-spark_") for j in jars):
        return jars
    _fetch(delta_artifact(spark_version), directory)
    return installed_jars(directory)


def _fetch(artifact: str, directory: Path) -> None:
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
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
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
