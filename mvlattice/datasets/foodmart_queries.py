"""The FoodMart query set (Maven Central: net.hydromatic:foodmart-queries), a query log.

6,761 queries Mondrian generated against FoodMart (with their results), the log Calcite's
LatticeSuggesterTest replays. The jar is fetched once with Maven into the local Maven
repository; its `queries.json` is extracted next to mvlattice's other caches, and that file
is what `mvlattice suggest --log` reads.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from mvlattice.errors import SetupError
from mvlattice.jars import Say, run_maven, size_of

ARTIFACT = ("net.hydromatic", "foodmart-queries", "0.4.1")
MEMBER = "queries.json"


def artifact_jar() -> Path:
    group, name, version = ARTIFACT
    folder = Path.home() / ".m2" / "repository" / group.replace(".", "/") / name / version
    return folder / f"{name}-{version}.jar"


def cache_dir() -> Path:
    """$MVLATTICE_CACHE, else ~/.cache/mvlattice, then datasets/foodmart-queries-<version>."""
    root = os.environ.get("MVLATTICE_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "mvlattice"
    return base / "datasets" / f"{ARTIFACT[1]}-{ARTIFACT[2]}"


def ensure_queries(say: Say | None = None) -> Path:
    """The local `queries.json`, fetching the jar with Maven and extracting it if needed."""
    say = say or _quiet
    target = cache_dir() / MEMBER
    if target.is_file():
        say(f"already in {target} ({size_of([target])})")
        return target
    jar = ensure_artifact(say)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(MEMBER + ".part")
    try:
        with zipfile.ZipFile(jar) as archive, archive.open(MEMBER) as src, part.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise SetupError(f"cannot extract {MEMBER} from {jar}: {exc}") from None
    part.rename(target)  # a half-written file never looks extracted
    say(f"{MEMBER} extracted, {size_of([target])}, to {target}")
    return target


def ensure_artifact(say: Say | None = None) -> Path:
    say = say or _quiet
    jar = artifact_jar()
    if jar.is_file():
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(f"the FoodMart query set is not in {jar} and Maven ('mvn') is not on PATH")
    coordinates = ":".join(ARTIFACT)
    say(f"fetching {coordinates} from Maven Central with Maven")
    code, output = run_maven([mvn, "-q", "-B", "dependency:get", f"-Dartifact={coordinates}"], say)
    if code != 0 or not jar.is_file():
        tail = " | ".join(output.strip().splitlines()[-3:])
        raise SetupError(f"could not fetch {coordinates} with Maven: {tail}")
    say(f"{size_of([jar])} in {jar}")
    return jar


def _quiet(_line: str) -> None:
    pass
