"""The status page in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright)
against ONE real `mvlattice serve` on loopback over the tiny shop star: every page loads with no
console error, a tile goes stale after an append and fresh after pressing its refresh button,
the playground opens with a query that runs and shows a rewrite, the token form works, and
every page fits 1,280x800 and 1,920x1,080 windows with long names and SQL. Screenshots of every
page go to `<repo>/.artifacts/screenshots/` (git-ignored)."""

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
# Names and SQL as long as real ones (issue 36): a ~100-character materialization (its name in
# tables, schedules and explanations) and a query whose text runs to several lines.
LONG = (
    "foodmart_sales__time_by_day_the_year__product_class_product_family__store_"
    + "country_store_city__a1b2c3"
)
LONG_SQL = (
    f"select year, sum(units) as {LONG}, count(*) as number_of_sales_in_the_year_over_every_product"
    " from shop.sales where units in (1, 2, 3, 4, 5, 6) and product_id between 0 and 9 "
    "and sale_id >= 0 group by year having count(*) > 0 order by year"
)
SIZES = ((1280, 800), (1920, 1080))


@pytest.fixture(scope="module")
def server(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("status_page")
    model = make_shop(spark, root)
    with model.open("a") as text:  # a second materialization, never built, with a long name
        text.write(f"      - view: {LONG}\n        table: {LONG}\n")
        text.write("        sql: select year, sum(units) as units from shop.sales group by year\n")
    running = start(model, root / "warehouse", root / "server.log")
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
    tiles.wait_for()  # once planned: until then the section says what planning does
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


# -- common window sizes (issue 36) ------------------------------------------------------------
LOADED = {  # what shows once a page has its content
    "tiles": "tr[data-tile]",
    "lattices": "section.lattice",
    "queries": "table.queries",
    "advice": "section.advice",
    "playground": "#playground",
}
OVERFLOW = """() => {
  const spilling = [...document.querySelectorAll("main *")]
    .filter((e) => e instanceof HTMLElement && e.clientWidth > 0)
    .filter((e) => e.scrollWidth > e.clientWidth + 1)
    .map((e) => e.tagName.toLowerCase() + (e.className ? "." + e.className : ""));
  const overlapping = [];  // two texts of one picture drawn over each other
  for (const svg of document.querySelectorAll("main svg")) {
    const texts = [...svg.querySelectorAll("text")];
    const boxes = texts.map((t) => [t.textContent, t.getBoundingClientRect()]);
    boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
      const wide = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const high = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (wide > 1 && high > 3) overlapping.push(a + " / " + b);
    }));
  }
  return {page: document.documentElement.scrollWidth, window: window.innerWidth, spilling,
          overlapping};
}"""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_page_overflows_the_window_even_with_long_names_and_sql(
    browser, server: Server, size: tuple[int, int]
) -> None:
    """Every page fits its window (the document never scrolls sideways) and nothing in it
    spills out of its box or needs a scroll bar of its own: long text wraps."""
    assert server.call("POST", "/v1/query", {"sql": LONG_SQL})[0] == 200
    width, height = size
    context = browser.new_context(base_url=server.url, viewport={"width": width, "height": height})
    context.add_init_script(f"sessionStorage.setItem('mvlattice.token', {TOKEN!r});")
    try:
        tab = context.new_page()
        tab.set_default_timeout(WAIT_MS)
        console = Console(tab)
        problems = {}  # every page's, not only the first's
        for slug, loaded in LOADED.items():
            tab.goto(f"/ui/{slug}")
            tab.locator(loaded).first.wait_for()
            if slug == "queries":
                tab.locator("table.queries pre.sql", has_text=LONG[:40]).first.wait_for()
            shoot(tab, f"{slug}-{width}x{height}")
            fit = tab.evaluate(OVERFLOW)
            if fit["page"] > fit["window"] or fit["spilling"] or fit["overlapping"]:
                problems[slug] = fit
            if slug == "queries":  # the SQL column is readable: at least ~40 characters wide
                cell = tab.locator("table.queries pre.sql", has_text=LONG[:40]).first
                if cell.bounding_box()["width"] < 280:
                    problems["queries' SQL"] = cell.bounding_box()
        assert problems == {}
        assert console.errors == []
    finally:
        context.close()


def test_the_playground_opens_with_an_example_that_runs(page) -> None:
    """A new user's first click answers a query: the box holds one a built tile answers."""
    tab, console = page
    tab.goto("/ui/playground")
    note = tab.locator("#example-note", has_text="answers")
    note.wait_for()
    sql = tab.input_value("#sql")
    assert sql.lower().startswith("select") and "shop.sales" in sql
    assert "mvlattice." in note.inner_text()  # the tile that answers it
    tab.click("#run")
    tab.locator("#answer tbody tr").first.wait_for()
    assert tab.locator("#verdict").inner_text().startswith("Answered from mvlattice.")
    assert tab.locator("#answer tbody tr").count() >= 1
    shoot(tab, "playground-example")
    tab.click("#rewrite")  # the same query, rewritten onto the tile
    tab.locator("#verdict", has_text="Rewritten onto mvlattice.").wait_for()
    assert console.errors == []
