"""The checked copy of a large reference file (placement.judgement.baseline_cache): used only
for the very text it was read from, as private as the file, and ignored when it is damaged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from placement.judgement import baseline_cache, baselines
from placement.util import PlacementError, safe_yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import baseline_load  # noqa: E402


@pytest.fixture
def big(tmp_path, monkeypatch):
    """A 50-entry reference file, taken for a large one."""
    monkeypatch.setattr(baseline_cache, "MIN_BYTES", 0)
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(baseline_load.baseline(50), sort_keys=False))
    path.chmod(0o600)
    return path


def test_a_checked_file_loads_from_its_copy_with_its_key_types(big):
    first = baselines.load(big)
    copy = baseline_cache.copy_path(big)
    assert copy.is_file() and copy.stat().st_mode & 0o777 == 0o600
    text = copy.read_text()
    copy.write_text(text.replace('"srate"', '"sRATE"', 1))    # the copy is what is read
    again = baselines.load(big)
    assert "RATE" in str(again) and again != first
    copy.write_text(text)
    assert baselines.load(big) == first
    assert isinstance(first["_provenance"], dict) and all(
        isinstance(k, str) for k in first["PartitionCase"])


@pytest.mark.parametrize("damage", [
    lambda t: t.replace("sha256:", "sha256:0", 1),      # another text's copy
    lambda t: t[:len(t) // 2],                          # cut short
    lambda t: t.replace('"s', '"x', 1),                 # a key in no known type
])
def test_a_copy_not_of_this_text_or_damaged_is_ignored(big, damage):
    first = baselines.load(big)
    copy = baseline_cache.copy_path(big)
    copy.write_text(damage(copy.read_text()))
    assert baseline_cache.read(big, big.read_text()) is None
    assert baselines.load(big) == first


def test_an_edited_file_is_read_and_checked_again(big):
    baselines.load(big)
    big.write_text(big.read_text() + "PartitionCase: {}\n")
    with pytest.raises(PlacementError, match="a key given twice"):
        baselines.load(big)


def test_the_fast_loader_keeps_the_refusals():
    with pytest.raises(PlacementError, match="a key given twice"):
        safe_yaml.loads("a: 1\na: 2\n", "x.yaml")
    with pytest.raises(PlacementError, match="anchors and aliases"):
        safe_yaml.loads("a: &x [1]\nb: *x\n", "x.yaml")
    assert safe_yaml.loads("16: [1.5, -0.1, 0.1, s]\n", "x.yaml") == {16: [1.5, -0.1, 0.1, "s"]}
