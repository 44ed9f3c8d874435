"""mvlattice: materialized views and lattices for Apache Spark and Delta Lake."""

from mvlattice.workspace import Workspace, open  # `mvlattice.open` is the API

__all__ = ["Workspace", "open"]
__version__ = "0.1.0"
