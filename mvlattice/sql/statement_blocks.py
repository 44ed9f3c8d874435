"""Finding query blocks anywhere in a statement and splicing rewritten ones back.

A block is one SELECT. For each, in this order: the subqueries inside its expressions (IN,
EXISTS, scalar) are rewritten on their own; then the whole block is tried (with simple FROM
subqueries and CTE references merged into it); if it is not rewritten, its FROM subqueries are
tried one by one. CTE bodies and both sides of UNION / INTERSECT / EXCEPT are blocks too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlglot import exp

# (block, label) -> its replacement, or None to keep it
RewriteBlock = Callable[[exp.Select, str], exp.Query | None]
CLAUSES_WITH_SUBQUERIES = ("expressions", "where", "having", "group", "order", "qualify")


def rewrite_tree(tree: exp.Query, rewrite_block: RewriteBlock) -> exp.Query:
    """The statement with rewritable blocks replaced (mutates and returns `tree`)."""
    return _visit(tree, "query", rewrite_block)  # type: ignore[return-value]


def _visit(node: exp.Expr, label: str, rewrite_block: RewriteBlock) -> exp.Expr:
    if isinstance(node, exp.Subquery):
        _replace(node.this, _visit(node.this, label, rewrite_block))
        return node
    if isinstance(node, exp.SetOperation):
        for side, name in (("this", "first"), ("expression", "second")):
            child = node.args[side]
            _replace(child, _visit(child, f"{label}, {name} branch", rewrite_block))
        _visit_ctes(node, rewrite_block)
        return node
    if not isinstance(node, exp.Select):
        return node
    for sub in expression_subqueries(node):
        _replace(sub, _visit(sub, f"subquery in {label}", rewrite_block))
    replacement = rewrite_block(node, label)
    if replacement is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            replacement.set("with_", with_)
        _visit_ctes(replacement, rewrite_block)
        return replacement
    for derived in _from_subqueries(node):
        _replace(derived.this, _visit(derived.this, f"subquery {derived.alias}", rewrite_block))
    _visit_ctes(node, rewrite_block)
    return node


def _visit_ctes(node: exp.Expr, rewrite_block: RewriteBlock) -> None:
    with_ = node.args.get("with_")
    for cte in with_.expressions if with_ is not None else ():
        _replace(cte.this, _visit(cte.this, f"CTE {cte.alias}", rewrite_block))


def _replace(old: exp.Expr, new: exp.Expr) -> None:
    if new is not old:
        old.replace(new)


def expression_subqueries(select: exp.Select) -> Iterator[exp.Query]:
    """Queries nested in the block's expressions (not in FROM), outermost only."""
    for clause in CLAUSES_WITH_SUBQUERIES:
        value = select.args.get(clause)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, exp.Expr):
                yield from _queries_in(item)


def _queries_in(node: exp.Expr) -> Iterator[exp.Query]:
    if isinstance(node, exp.Query):
        yield node
        return
    for child in node.iter_expressions():
        yield from _queries_in(child)


def _from_subqueries(select: exp.Select) -> Iterator[exp.Subquery]:
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    sources += [j.this for j in select.args.get("joins") or ()]
    yield from (s for s in sources if isinstance(s, exp.Subquery))


def visible_ctes(node: exp.Expr) -> dict[str, exp.Expr]:
    """CTE name -> body, for every WITH enclosing `node` (inner ones shadow outer ones)."""
    chain = []
    current: exp.Expr | None = node
    while current is not None:
        chain.append(current)
        current = current.parent
    out: dict[str, exp.Expr] = {}
    for ancestor in reversed(chain):
        with_ = ancestor.args.get("with_")
        for cte in with_.expressions if with_ is not None else ():
            out[cte.alias_or_name.lower()] = cte.this
    return out
