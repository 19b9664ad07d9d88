"""The schedule examples in ``config/schedules/`` and the tutorial, as a site copies them: each
run names a mode ``scripts/acceptance.sh`` accepts, finds NPB though cron and systemd start
with a bare environment, and no two runs of one checkout are due on the same day (the
second would be refused by the run lock, with no ACCEPTANCE line)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEDULES = ROOT / "config/schedules"
#: a cron entry (minute hour day month weekday command), as cron and scrontab read it
CRON = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*acceptance\.sh.*)$")


def _entries(text: str) -> list[tuple[str, str, str]]:
    """(hour, weekday, command) of each acceptance entry of a crontab's text."""
    return [(m[2], m[5], m[6]) for m in map(CRON.match, text.splitlines())
            if m and not m[0].startswith("#")]


def _tutorial_crontab() -> str:
    text = (ROOT / "docs/tutorial.md").read_text()
    return text.split("## The weekly schedule", 1)[1].split("```text", 1)[1].split("```", 1)[0]


def _weekdays(field: str) -> set[int]:
    """The days of the week a cron weekday field names (``*``, ``1-6``, ``0``, ``1,3``)."""
    if field == "*":
        return set(range(7))
    days: set[int] = set()
    for part in field.split(","):
        lo, _, hi = part.partition("-")
        days |= {d % 7 for d in range(int(lo), int(hi or lo) + 1)}     # 7 is Sunday too
    return days


SOURCES = {"crontab": lambda: (SCHEDULES / "crontab").read_text(),
           "scrontab": lambda: (SCHEDULES / "scrontab").read_text(),
           "tutorial": _tutorial_crontab}


@pytest.mark.parametrize("name", SOURCES)
def test_each_entry_names_a_mode_and_finds_npb(name):
    text = SOURCES[name]()
    entries = _entries(text)
    assert entries, name
    for _, _, command in entries:
        words = shlex.split(command.split("2>&1")[0])
        assert words[words.index("-m") + 1] in ("quick", "acceptance", "full"), command
        assert "NPB_DIR=" in command or re.search(r"^NPB_DIR=\S+", text, re.M), \
            f"{name}: {command}: NPB_DIR unset in a bare environment"


@pytest.mark.parametrize("name", SOURCES)
def test_no_two_runs_of_one_checkout_are_due_on_the_same_day(name):
    """Two runs due the same night overlap when the first is still in its time box (an
    hour for the quick mode) as the second starts: the second is refused."""
    entries = _entries(SOURCES[name]())
    for i, (h1, d1, c1) in enumerate(entries):
        for h2, d2, c2 in entries[i + 1:]:
            same_day = _weekdays(d1) & _weekdays(d2)
            assert not same_day or abs(int(h1) - int(h2)) >= 2, (c1, c2, same_day)


def test_the_systemd_service_finds_npb():
    service = (SCHEDULES / "placement-acceptance.service").read_text()
    assert re.search(r"^Environment=NPB_DIR=\S+", service, re.M)
    assert "acceptance.sh -m acceptance" in service
