"""HTML building blocks of the status page: escaping, the page shell with its nav, tables.

A shell holds no data: it names the fragment its script fetches (with the bearer token, when
the service has one) and how often. Fragments are rendered in Python, so every user or SQL text
is escaped in one place (`esc`), and the script only swaps them in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mvlattice.http.ui.svg import esc

ASSET_VERSION = "2"  # bump when app.js or style.css change, so browsers fetch them again


@dataclass(frozen=True, slots=True)
class Page:
    slug: str  # /ui/<slug>
    title: str
    part: str | None  # the fragment the page shows, polled every `poll_ms`
    poll_ms: int = 2000


PAGES = (
    Page("tiles", "Tiles", "/ui/part/tiles"),
    Page("lattices", "Lattices", "/ui/part/lattices", 10_000),  # plans change only on builds
    Page("queries", "Queries", "/ui/part/queries"),
    Page("advice", "Advice", "/ui/part/advice", 60_000),  # re-explains the log's misses
    Page("playground", "Rewrite playground", None),
)
LANDING = PAGES[0]
CURRENT = ' aria-current="page"'


def shell(page: Page, needs_token: bool = False) -> str:
    """The whole document of one page: nav, token box, the (empty) content and the script.
    `needs_token` lets the script ask for the token before its first request (no 401s)."""
    nav = "".join(
        f'<a href="/ui/{p.slug}"{CURRENT if p is page else ""}>{esc(p.title)}</a>' for p in PAGES
    )
    auth = "bearer" if needs_token else "none"
    body = PLAYGROUND if page.part is None else (
        f'<div id="content" data-part="{esc(page.part)}" data-poll-ms="{page.poll_ms}">'
        '<p class="empty">loading…</p></div>'
    )  # fmt: skip
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mvlattice · {esc(page.title)}</title>"
        f'<link rel="stylesheet" href="/ui/static/style.css?v={ASSET_VERSION}">'
        f'<link rel="icon" href="/ui/static/favicon.svg?v={ASSET_VERSION}">'
        f'<script src="/ui/static/app.js?v={ASSET_VERSION}" defer></script></head>'
        f'<body data-page="{esc(page.slug)}" data-auth="{auth}">'
        f"<header><strong>mvlattice</strong><nav>{nav}</nav>"
        '<span id="job" role="status"></span><span id="status" role="status"></span></header>'
        f"{TOKEN_FORM}<main><h1>{esc(page.title)}</h1>{body}</main></body></html>\n"
    )


# Shown by the script when the service answers 401: the token is kept in sessionStorage (this
# tab only, gone when it closes; never a cookie, so no other site can make the browser send it).
TOKEN_FORM = (
    '<form id="token-form" hidden><label for="token">This service needs its bearer token '
    '(kept in this tab only):</label> <input id="token" type="password" autocomplete="off" '
    'size="40"> <button type="submit">Use token</button> '
    '<button type="button" id="token-forget">Forget</button></form>'
)

# The script fills the box with an example from the served models (`/ui/part/example`) and says
# what answers it in #example-note; Run answers the query (`/v1/query`), Rewrite only rewrites.
PLAYGROUND = (
    '<form id="playground"><label for="sql">SQL (SELECT or WITH)</label>'
    '<p id="example-note" class="meta"></p>'
    '<textarea id="sql" name="sql" rows="8" spellcheck="false"></textarea>'
    '<button type="button" id="run">Run</button> '
    '<button type="submit" id="rewrite">Rewrite</button></form>'
    '<div id="rewrite-result" aria-live="polite"></div>'
)


# -- fragments' helpers ------------------------------------------------------------------------
def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "", empty: str = ""
) -> str:
    """A table of cells that are ALREADY HTML (callers escape what they put in)."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        return f'<p class="empty">{esc(empty or "nothing yet")}</p>'
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    return f'<table class="{esc(css)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def when(iso: str | None) -> str:
    """An ISO time as `2026-11-02 03:51:07 UTC` in a <time> element; a dash when unknown."""
    if not iso:
        return "—"
    try:
        moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return esc(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return f'<time datetime="{esc(iso)}">{moment:%Y-%m-%d %H:%M:%S} UTC</time>'


def count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int | float) else "—"


def size(value: object) -> str:
    """Bytes in KiB/MiB/GiB."""
    if not isinstance(value, int | float):
        return "—"
    amount, unit = float(value), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if amount < 1024 or unit == "TiB":
            break
        amount /= 1024
    return f"{amount:,.0f} {unit}" if unit == "B" else f"{amount:,.1f} {unit}"


def seconds(value: object) -> str:
    if not isinstance(value, int | float):
        return "—"
    return f"{value * 1000:,.0f} ms" if value < 1 else f"{value:,.1f} s"


def code(text: object) -> str:
    return f"<code>{esc(text)}</code>"


def sql_block(text: object) -> str:
    return f'<pre class="sql">{esc(text)}</pre>'
