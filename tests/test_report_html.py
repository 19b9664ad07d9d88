"""The report opened in headless Chromium: it renders, its images load, no console errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from placement import cli

FIX = Path(__file__).parent / "fixtures" / "runreports" / "generic-with-baseline.json"
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
