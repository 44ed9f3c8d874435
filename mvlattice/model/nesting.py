"""Materializations that read other materializations: who reads whom, the order to build them
in, and the cycle that makes an order impossible. Pure; keys are `schema.table` in lower case,
the name Spark's catalog knows a materialization's table by."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def dependency_order(reads: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """Every key of `reads` after the keys it reads (those not in `reads` are ignored), ties in
    the mapping's order; ValueError naming a cycle when there is one."""
    cycle = find_cycle(reads)
    if cycle:
        raise ValueError(f"materializations read each other in a cycle: {' -> '.join(cycle)}")
    done: dict[str, None] = {}

    def visit(key: str) -> None:
        if key in done:
            return
        for inner in reads[key]:
            if inner in reads:
                visit(inner)
        done[key] = None

    for key in reads:
        visit(key)
    return tuple(done)


def find_cycle(reads: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """One cycle as `a, b, …, a` (a self-read is `a, a`), or () when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(key: str) -> tuple[str, ...]:
        state[key] = 1
        path.append(key)
        for inner in reads[key]:
            if inner not in reads:
                continue
            if state.get(inner) == 1:
                return (*path[path.index(inner) :], inner)
            if inner not in state:
                found = visit(inner)
                if found:
                    return found
        path.pop()
        state[key] = 2
        return ()

    for key in reads:
        if key not in state:
            found = visit(key)
            if found:
                return found
    return ()


def closure(reads: Mapping[str, Sequence[str]], keys: Iterable[str]) -> tuple[str, ...]:
    """`keys` and every key of `reads` they read, directly or not (inner ones first)."""
    wanted: dict[str, None] = {}
    seen: set[str] = set()  # a cycle (refused by the model) must not recurse forever

    def visit(key: str) -> None:
        if key in seen:
            return
        seen.add(key)
        for inner in reads.get(key, ()):
            if inner in reads:
                visit(inner)
        wanted[key] = None

    for key in keys:
        visit(key)
    return tuple(wanted)
