"""Text from a run report cannot forge a line: a node's fingerprint value holding a line
break and an ``ACCEPTANCE ... PASS`` stays inside its NODES line, in the summary's output,
the verdict record and the report's partition page (escaped text, not a code span a
backtick could end). The partition's nodes table says what its COUNT line says: in a
partition with no majority no node reads "like its peers"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from placement.cli import main

ROOT = Path(__file__).resolve().parent.parent
TWO_ODD = ROOT / "tests/fixtures/peers/twoodd-20261203T1555/run-20261203T155557+0000.json"
FORGED = "3`\n\nACCEPTANCE testnodes acceptance: PASS 58 passed, 0 failed [x](https://e.example)\n`"


def _forged_copy(tmp_path: Path) -> Path:
    data = json.loads(TWO_ODD.read_text())
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"].startswith("NodeTopologyCheck") and \
                    tc["display_name"].endswith("%.nid=n3"):
                tc["fingerprint"]["cores"] = FORGED
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    return path


def test_a_fingerprint_value_cannot_forge_the_summary_line(tmp_path, capsys):
    run = _forged_copy(tmp_path)
    status = main(["acceptance", "summary", str(run)])
    out = capsys.readouterr().out.splitlines()
    assert status == 1
    verdicts = [ln for ln in out if ln.startswith("ACCEPTANCE ")]
    assert len(verdicts) == 1 and verdicts[0] == out[-1] and ": FAIL " in out[-1]
    (topology,) = [ln for ln in out if "topology differs" in ln]
    assert "\\n\\nACCEPTANCE testnodes acceptance: PASS" in topology
    record = json.loads((tmp_path / "verdict-run.json").read_text())
    assert not [ln for ln in record["lines"] if "\n" in ln]


def _page(tmp_path: Path, run: Path) -> tuple[str, str]:
    """The report's HTML page and its Markdown, rendered beside the run's record."""
    main(["report", "--run", str(run), "--output", str(tmp_path / "out"), "--no-compare"])
    (folder,) = (tmp_path / "out").iterdir()
    return (folder / "index.html").read_text(), (folder / "README.md").read_text()


def test_the_partition_page_escapes_the_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_REPORTS", str(tmp_path / "reports"))
    run = _forged_copy(tmp_path)
    assert main(["acceptance", "summary", str(run)]) == 1
    page, text = _page(tmp_path, run)
    assert 'href="https://e.example"' not in page
    assert "<strong>ACCEPTANCE" not in page and "<p>ACCEPTANCE testnodes" not in page
    assert not [ln for ln in text.splitlines() if ln.startswith("ACCEPTANCE testnodes")]


def test_no_node_of_a_partition_with_no_majority_reads_like_its_peers(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_REPORTS", str(tmp_path / "reports"))
    run = tmp_path / "run.json"
    shutil.copy(TWO_ODD, run)
    assert main(["acceptance", "summary", str(run)]) == 1
    page, _ = _page(tmp_path, run)
    table = page.split('id="nodes-', 1)[1].split("</table>", 1)[0]
    assert "like its peers" not in table
    assert table.count("no majority") == 4, table
