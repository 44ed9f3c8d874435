"""Every error mvlattice raises on purpose; messages are written for users."""

from __future__ import annotations

from dataclasses import dataclass


class MvlatticeError(Exception):
    """Root of mvlattice's own errors. `exit_code` is what the CLI exits with."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a model document, located by file and path inside it."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        return f"{where}: {self.message}"


class ModelError(MvlatticeError):
    """A model file is malformed; carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in model"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in self.problems))


class UnsupportedSqlError(MvlatticeError):
    """SQL that parses but uses a construct mvlattice cannot handle."""

    exit_code = 2


class SqlError(MvlatticeError):
    """SQL that does not parse or does not run (bad column, bad table, syntax)."""

    exit_code = 2


class NotFoundError(MvlatticeError):
    """An unknown name: lattice, tile, table, column, data set."""

    exit_code = 2


class UsageError(MvlatticeError):
    """Bad command-line or API arguments."""

    exit_code = 2


class SetupError(MvlatticeError):
    """The environment lacks something mvlattice needs (jars, Java, data)."""

    exit_code = 1


class JobError(MvlatticeError):
    """A Spark job (load, profile, build, refresh) failed."""

    exit_code = 1


class DataError(MvlatticeError):
    """Data violates the constraints a model declares or implies."""

    exit_code = 1
