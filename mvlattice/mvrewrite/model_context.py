"""What rewriting needs from a model, prepared once: its schema, views and keys."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from sqlglot.schema import MappingSchema

from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.prefilter import Summary
from mvlattice.mvrewrite.views import View


@dataclass(frozen=True, slots=True)
class RewriteContext:
    """What rewriting needs from a model, prepared once (see `context.context_for`)."""

    schema: MappingSchema = field(compare=False)
    default_db: str | None
    views: tuple[View, ...]
    keys: Keys
    summaries: tuple[Summary | None, ...] = field(init=False, compare=False, repr=False)
    # Query text -> its output names and qualified tree (or why it cannot be qualified): both
    # depend only on the text and this context's schema, and qualifying costs more than the
    # rest of a rewrite. Used through `qualified_query`.
    qualified: OrderedDict[str, Any] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        found = tuple(Summary.of(v.block) if v.block is not None else None for v in self.views)
        object.__setattr__(self, "summaries", found)
        object.__setattr__(self, "qualified", OrderedDict())
