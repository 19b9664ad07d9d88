"""The report opened in headless Chromium as a person reads it: the answer in the first
screen (the status banner, the NODE line, the first failed row, in that order, no raw
Markdown), its images load, no console errors; the history page draws a year of sessions.

Real run reports: the two-hour A/A sessions of this suite (``fixtures/aa-sessions-2h``,
the first five as the baseline) and the session run beside busy loops (``hog/``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from load_probe import with_load
from placement import cli

FIX = Path(__file__).parent / "fixtures" / "runreports" / "generic-with-baseline.json"
TWO_HOURS = Path(__file__).parent / "fixtures" / "aa-sessions-2h"
SESSIONS = sorted(TWO_HOURS.glob("run-*.json"))
HOG = sorted((TWO_HOURS / "hog").glob("run-*.json"))[0]
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
#: the first screen of a laptop
SCREEN = (1280, 800)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed "
                                "(scripts/ensure-system-tools.sh test installs it)")


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr",
           "--v=0", "--allow-file-access-from-files", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html")
    assert cli.main(["report", "--run", str(FIX), "--output", str(out), "--no-compare"]) == 0
    (d,) = [p for p in out.iterdir() if p.is_dir()]
    return d / "index.html"


def test_dom_renders_and_images_exist(page: Path, tmp_path):
    r = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "<h1>Placement report: generic</h1>" in dom and "<table" in dom
    srcs = re.findall(r'<img src="([^"]+)"', dom)
    assert srcs
    for src in srcs:
        f = page.parent / src
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src
    # console errors and failed loads are logged on stderr with --enable-logging
    bad = [ln for ln in r.stderr.splitlines()
           if "CONSOLE" in ln or "Uncaught" in ln or "ERR_FILE_NOT_FOUND" in ln
           or "Failed to load resource" in ln]
    assert not bad, bad


def test_screenshot_is_not_blank(page: Path, tmp_path):
    shot = tmp_path / "shot.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri())
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    import matplotlib.image as mpimg
    img = mpimg.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    flat = img[..., :3].reshape(-1, 3)
    # a page with text, tables and plots has many distinct colours, not one background
    assert len({tuple(px) for px in flat[::97].round(2).tolist()}) > 20


#: measures where the lead's elements are laid out: added to a copy of the page only
_MEASURE = """<script>
const at = el => el ? [el.getBoundingClientRect().top, el.getBoundingClientRect().bottom] : null;
const node = [...document.querySelectorAll('#verdict p')]
  .find(p => p.textContent.startsWith('NODE '));
document.body.setAttribute('data-layout', JSON.stringify({screen: innerHeight,
  status: at(document.querySelector('#status')), node: at(node),
  row: at(document.querySelector('#failed tbody tr'))}));
</script>"""


def _layout(page: Path, tmp: Path) -> tuple[dict, str]:
    """Where Chromium lays out the banner, the NODE line and the first failed row in a
    first screen, and the page's text as a person reads it."""
    probe = page.with_name("measured.html")
    probe.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))
    r = _chromium(tmp, "--dump-dom", f"--window-size={SCREEN[0]},{SCREEN[1]}", probe.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'data-layout="([^"]+)"', r.stdout)
    assert m, r.stdout[-2000:]
    text = re.sub(r"<[^>]+>", "", r.stdout.split("<body", 1)[1])
    return json.loads(m.group(1).replace("&quot;", '"')), text


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The system's baseline of the first five A/A sessions."""
    where = tmp_path_factory.mktemp("baselines")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLACEMENT_BASELINES", str(where))
        froms = [a for p in SESSIONS[:5] for a in ("--from", str(p))]
        assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
        yield mp


def _report(tmp: Path, data: dict) -> Path:
    run = tmp / "run.json"
    run.write_text(json.dumps(data))
    assert cli.main(["report", "--run", str(run), "--output", str(tmp / "out"),
                     "--no-compare"]) == 0
    (d,) = (tmp / "out").iterdir()
    return d / "index.html"


def test_a_failed_run_shows_its_answer_in_the_first_screen(baseline, tmp_path):
    """The session beside busy loops: FAIL, the NODE line, then the worst regressed value,
    all in the first screen and in that order; no Markdown shows raw."""
    page = _report(tmp_path, with_load(json.loads(HOG.read_text()), 85.0))
    at, text = _layout(page, tmp_path)
    assert 0 < at["screen"] <= SCREEN[1]      # the window's inner height: the first screen
    assert at["status"] and at["node"] and at["row"], at
    assert at["status"][1] <= at["node"][0] and at["node"][1] <= at["row"][0], at
    assert at["row"][1] <= at["screen"], f"the first failed row is below the first screen: {at}"
    assert "**" not in text
    status = text[text.index("FAIL"):]
    assert status.startswith("FAIL: 17 case(s) passed, 0 failed; verdict: ")
    assert re.search(r"NODE generic: node under a competing load: tasks waited for a CPU 85%",
                     text)
    # the first row is the worst value and links to its strip plot, drawn in the page
    dom = page.read_text()
    row = re.search(r'<table id="failed">.*?<tbody><tr class="bad">(.*?)</tr>', dom).group(1)
    assert "PthreadOpsCheck[gnu,small,none,0].chain" in row
    assert '<a href="#fig-regressed-1">strip plot</a>' in row
    assert '<figure id="fig-regressed-1"><img src="regressed-1.png"' in dom


def test_a_passed_run_says_pass_first(baseline, tmp_path):
    """A later A/A session of the same node: PASS in the banner, no failed table."""
    page = _report(tmp_path, json.loads(SESSIONS[7].read_text()))
    at, text = _layout(page, tmp_path)
    assert at["status"] and at["status"][1] <= at["screen"] and at["row"] is None, at
    assert "**" not in text
    assert 'class="status status-pass"' in page.read_text()
    assert "PASS: 17 case(s) passed, 0 failed; verdict: 0 regressed" in text


def test_the_history_page_draws_a_year_of_sessions(baseline, tmp_path):
    """A year of weekly sessions (the benchmark's): a row per session from the first week
    to the last, the NODE week marked, the figure drawn and the page not blank."""
    sys.path.insert(0, str(BENCHMARKS))
    import history_page as bench
    from placement.judgement import reading
    from placement.report import history_page
    sessions, confirmations, _ = bench.year_of_sessions()
    reports = [reading.run_report.from_data(d, Path("stored")) for d in sessions]
    out = history_page.write("generic", reports,
                             [reading.run_report.from_data(d, Path("stored")) for d in confirmations],
                             tmp_path / "generic-history", "../run/index.html")
    page = out / "index.html"
    r = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    table = re.search(r'<table id="sessions">.*?</table>', r.stdout, re.S).group(0)
    dates = re.findall(r"<tr[^>]*><td>(\d{4}-\d\d-\d\d) ", table)
    assert len(dates) == 52
    span = dt.date.fromisoformat(dates[-1]) - dt.date.fromisoformat(dates[0])
    assert span == dt.timedelta(weeks=51)
    node = re.findall(r'<tr class="bad"><td>(\d{4}-\d\d-\d\d)', table)
    week = bench.START + dt.timedelta(weeks=bench.NODE_WEEK)
    assert week.strftime("%Y-%m-%d") in node
    (src,) = re.findall(r'<img src="([^"]+)"', r.stdout)
    png = out / src
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg
    img = mpimg.imread(png)
    # a panel per judged value under the node's: taller than wide, and not blank
    assert img.shape[0] > 2 * img.shape[1] and img[..., :3].std() > 0.05
    shot = tmp_path / "history.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1000", page.as_uri())
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
