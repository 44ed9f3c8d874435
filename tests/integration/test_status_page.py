"""The status page in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright)
against ONE real `mvlattice serve` on loopback over the tiny shop star: every page loads with no
console error, a tile goes stale after an append and fresh after pressing its refresh button,
the playground shows a rewrite, and the token form works. Screenshots of every page go to
`<repo>/.artifacts/screenshots/` (git-ignored)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_service_support import (
    SALES_DDL,
    TOKEN,
    Server,
    make_shop,
    sales,
    start,
    wait_for_job,
)

pytestmark = pytest.mark.spark

CHROMIUM = "/usr/bin/chromium"  # Debian's, installed by scripts/bootstrap.sh; never downloaded
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking"]  # fmt: skip
SHOTS = Path(__file__).resolve().parents[2] / ".artifacts" / "screenshots"
WAIT_MS = 180_000  # a refresh on two shared cores; the page polls every 2 s
BY_CATEGORY = (
    "select p.category, sum(s.units) as units from shop.sales s "
    "join shop.product p on s.product_id = p.product_id group by p.category"
)
DETAIL = "select sale_id, units from shop.sales where units = 3"


@pytest.fixture(scope="module")
def server(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("status_page")
    running = start(make_shop(spark, root), root / "warehouse", root / "server.log")
    status, job = running.call("POST", "/v1/lattices/star/materialize")
    assert status == 202, job
    assert wait_for_job(running, job["id"])["status"] == "succeeded"
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


class Console:
    """Every console error and uncaught page error, as text."""

    def __init__(self, page: object) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _console(self, message: object) -> None:
        if message.type in ("error", "assert"):
            self.errors.append(f"console.{message.type}: {message.text}")


@pytest.fixture
def page(browser, server: Server) -> Iterator[tuple[object, Console]]:
    """A tab whose sessionStorage already holds the token, as after pasting it once."""
    context = browser.new_context(base_url=server.url, viewport={"width": 1400, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('mvlattice.token', {TOKEN!r});")
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    yield tab, Console(tab)
    context.close()


def shoot(tab: object, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
    return path


def tile_row(tab: object) -> object:
    return tab.locator("tr[data-tile^='mvlattice.']")


# -- every page ------------------------------------------------------------------------------------
def test_the_tiles_page_lists_the_built_tile_fresh(page) -> None:
    tab, console = page
    tab.goto("/")  # lands on the tiles page
    assert tab.url.endswith("/ui/")
    row = tile_row(tab)
    row.wait_for()
    assert row.get_attribute("data-status") == "fresh"
    assert row.locator(".badge").inner_text() == "fresh"
    assert "6" in row.locator("td").nth(3).inner_text()  # rows
    view = tab.locator("tr[data-tile='shop.units_by_year']")
    assert view.count() == 1
    assert tab.locator("table.schedule code", has_text="shop.units_by_year").count() == 1
    shoot(tab, "tiles")
    assert console.errors == []


def test_the_lattices_page_draws_the_star_and_the_tile_lattice(page) -> None:
    tab, console = page
    tab.goto("/ui/lattices")
    section = tab.locator("section[data-lattice='star']")
    section.wait_for()
    star = section.locator("svg.star")
    assert star.locator("g.table.fact").count() == 1 and star.locator("g.table.dim").count() == 1
    assert star.locator("line.join").count() == 1
    tiles = section.locator("svg.tiles")
    assert tiles.locator("g.view").count() == 2 and tiles.locator("line.edge").count() == 1
    assert "category, year" in tiles.locator("g[data-view='t1']").text_content()
    assert star.bounding_box()["width"] > 100 and tiles.bounding_box()["height"] > 100
    shoot(tab, "lattices")
    assert console.errors == []


def test_the_playground_shows_a_rewrite(page, server: Server) -> None:
    tab, console = page
    tab.goto("/ui/playground")
    tab.fill("#sql", BY_CATEGORY)
    tab.click("#rewrite")
    verdict = tab.locator("#verdict")
    verdict.wait_for()
    assert verdict.inner_text().startswith("Rewritten onto mvlattice.")
    sql = tab.locator("#rewritten-sql").inner_text()
    assert "mvlattice." in sql and "shop.sales" not in sql
    used = tab.locator("table.explain tr[data-outcome='used']")
    assert used.count() == 1
    shoot(tab, "playground")

    tab.fill("#sql", "select '<b id=\"injected\">x</b>' as t, count(*) from shop.sales")
    tab.click("#rewrite")
    tab.locator("#rewritten-sql", has_text="injected").wait_for()
    assert tab.locator("#injected").count() == 0  # SQL text is shown as text, not markup
    assert '<b id="injected">' in tab.locator("#rewritten-sql").inner_text()
    assert console.errors == []

    tab.fill("#sql", "drop table shop.sales")
    tab.click("#rewrite")
    tab.locator("#rewrite-result .error", has_text="bad_sql").wait_for()
    # Chromium reports the refused request itself; nothing else may appear
    assert console.errors and all("status of 400" in e for e in console.errors), console.errors


def test_the_queries_page_explains_a_miss(page, server: Server) -> None:
    tab, console = page
    assert server.call("POST", "/v1/query", {"sql": DETAIL})[0] == 200
    tab.goto("/ui/queries")
    miss = tab.locator("tr[data-rewritten='no']", has_text="units = 3").first
    miss.wait_for()
    miss.locator(".why", has_text="nearest:").wait_for()  # explained on the page's next poll
    assert "mvlattice." in miss.locator(".why code").first.inner_text()
    hit = tab.locator("tr[data-rewritten='yes']", has_text="p.category").first
    assert "mvlattice." in hit.locator("td").nth(4).inner_text()  # the tile it read
    shoot(tab, "queries")
    assert console.errors == []


# -- stale after an append, fresh after pressing refresh -------------------------------------------
def test_a_tile_goes_stale_after_an_append_and_fresh_after_pressing_refresh(
    spark,
    page,
    server: Server,
) -> None:
    tab, console = page
    tab.goto("/ui/tiles")
    row = tile_row(tab)
    row.wait_for()
    assert row.get_attribute("data-status") == "fresh"
    tab.evaluate("window.notReloaded = true")

    data = server.model.parent / "data" / "sales"
    spark.createDataFrame(sales(200, 40), SALES_DDL).write.format("delta").mode("append").save(
        str(data)
    )
    started = time.monotonic()
    tab.wait_for_selector("tr[data-tile^='mvlattice.'][data-status='stale']")
    print(f"stale shown {time.monotonic() - started:.1f} s after the append")
    assert row.locator("li.moved", has_text="shop.sales").count() == 1
    shoot(tab, "tiles-stale")

    row.locator("button.refresh").click()
    started = time.monotonic()
    tab.wait_for_selector("tr[data-tile^='mvlattice.'][data-status='fresh']")
    print(f"fresh shown {time.monotonic() - started:.1f} s after pressing refresh")
    assert tab.evaluate("window.notReloaded") is True  # updated in place, no reload
    assert row.locator("li.moved").count() == 0
    # the tile commits before the job is marked done: the page reports the job within a second
    tab.locator("#job", has_text=": succeeded").wait_for(timeout=30_000)
    shoot(tab, "tiles-refreshed")
    assert console.errors == []


# -- the token -------------------------------------------------------------------------------------
def test_without_a_kept_token_the_page_asks_for_it_and_then_loads(
    browser,
    server: Server,
) -> None:
    context = browser.new_context(base_url=server.url)
    try:
        tab = context.new_page()
        tab.set_default_timeout(WAIT_MS)
        console = Console(tab)
        tab.goto("/ui/tiles")
        form = tab.locator("#token-form")
        form.wait_for(state="visible")
        assert tile_row(tab).count() == 0
        shoot(tab, "token-form")
        tab.fill("#token", TOKEN)
        tab.click("#token-form button[type=submit]")
        tile_row(tab).wait_for()
        assert form.is_hidden()
        assert tab.evaluate("sessionStorage.getItem('mvlattice.token')") == TOKEN
        assert console.errors == []  # the page asked before sending anything: no 401
    finally:
        context.close()
