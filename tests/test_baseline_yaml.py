"""The reader of reference files' YAML (placement.util.safe_yaml): what PyYAML's safe loader
reads, built from libyaml's events, with anchors, aliases, a key given twice and tags of no
plain type refused in one line at the event, however large the file."""

from __future__ import annotations

import datetime

import pytest
import yaml

from placement import cli
from placement.util import PlacementError, safe_yaml

#: documents of every form a hand edit can give a scalar or a collection
DOCUMENTS = [
    "",
    "# only a comment\n",
    "---\n",
    "--- 7\n...\n",
    "a: 1\nb: -0\nc: +12\nd: 0o17\ne: 017\nf: 0x1F\ng: 0b101\nh: 1_000\ni: 1:20\n",
    "a: 1.5\nb: -.5\nc: 1.\nd: 1.0e+5\ne: 6.8523015e-3\nf: 1_0.5\ng: 190:20:30.15\n"
    "h: .inf\ni: -.Inf\nj: 1e5\nk: +2.5E-3\n",
    "a: true\nb: False\nc: yes\nd: off\ne: ON\nf: n\n",
    "a: ~\nb: null\nc:\nd: Null\n? e\n",
    "a: '16'\nb: \"1.5\"\nc: !!str 17\nd: !!int '18'\ne: !!float '1'\nf: ! 19\ng: |\n  x\n  y\n"
    "h: >-\n  folded\n  text\ni: 'it''s'\nj: \"\\u00e9\\t\"\nk: é\n",
    "2026-01-02: d\nt: 2001-12-14t21:59:43.10-05:00\nb: !!binary aGVsbG8=\n",
    "16: [1.5, -0.1, 0.1, s]\n1.5: {x: [], y: {}}\ntrue: [[1, [2, {z: 3}]]]\n~: x\n",
    "- a\n- - b\n  - c\n- {d: e, f: [g, h]}\n- x: 1\n  y: 2\n",
    "!!map {a: !!seq [1, 2]}\n",
    "plain text\n",
]


@pytest.mark.parametrize("text", DOCUMENTS, ids=range(len(DOCUMENTS)))
@pytest.mark.parametrize("parser", ["libyaml", "python"])
def test_it_reads_what_the_safe_loader_reads(text, parser, monkeypatch):
    if parser == "python":
        monkeypatch.setattr(safe_yaml, "_Parser", safe_yaml._PyParser)
    got, want = safe_yaml.loads(text, "x.yaml"), yaml.safe_load(text)
    assert repr(got) == repr(want)      # types too: 16 an int key, 1.5 a float, True a bool


def test_nan_reads_as_the_safe_loader_reads_it():
    got = safe_yaml.loads("a: .nan\nb: [.NaN]\n", "x.yaml")
    assert got["a"] != got["a"] and got["b"][0] != got["b"][0]


def test_libyaml_s_parser_is_the_one_used():
    """The speed of a 100k-entry baseline rests on it (benchmarks/baseline_load.py)."""
    assert yaml.__with_libyaml__ and safe_yaml._Parser is yaml._yaml.CParser


def _refused(text: str) -> str:
    with pytest.raises(PlacementError) as exc:
        safe_yaml.loads(text, "x.yaml", "reference file")
    line = str(exc.value)
    assert "\n" not in line and line.startswith("x.yaml: ")
    return line


@pytest.mark.parametrize("text, says", [
    ("a: &x [1]\nb: *x\n", "YAML anchor &x at line 1"),
    ("a: [1]\nb: *x\n", "YAML alias *x at line 2"),
    ("a: &k 1\n", "YAML anchor &k at line 1"),
    ("a:\n  b: &m {c: 1}\n", "YAML anchor &m at line 2"),
    ("- &s [1]\n", "YAML anchor &s at line 1"),
    ("? *k\n: 1\n", "YAML alias *k at line 1"),
    ("&top\na: 1\n", "YAML anchor &top at line"),
])
def test_anchors_and_aliases_are_refused_at_their_line(text, says):
    line = _refused(text)
    assert says in line and "anchors and aliases are not accepted in a reference file" in line


def test_a_long_anchor_name_is_cut_short():
    line = _refused(f"a: &{'n' * 5000} 1\n")
    assert "n" * 41 not in line and len(line) < 400


@pytest.mark.parametrize("text, lines", [
    ("a: 1\na: 2\n", (2, 1)),
    ("x:\n  1: a\n  2: b\n  1.0: c\n", (4, 2)),        # 1 and 1.0 are one key
    ("true: a\n1: b\n", (2, 1)),                        # as True and 1 are in Python
    ("{a: 1, b: 2, a: 3}\n", (1, 1)),
    ("- {s: 1}\n- k: 1\n  v: 2\n  k: 3\n", (4, 2)),
    ("'a': 1\n\"a\": 2\n", (2, 1)),
])
def test_a_key_given_twice_is_refused_with_both_lines(text, lines):
    line = _refused(text)
    assert f"a key given twice in one mapping (line {lines[0]}, first at line {lines[1]})" in line


def test_a_key_given_twice_at_the_end_of_a_large_file_is_refused_at_once():
    body = "".join(f"k{i}: [{i}.5, -0.1, 0.1, s]\n" for i in range(20000))
    line = _refused(body + "k7: 1\n")
    assert "(line 20001, first at line 8)" in line


@pytest.mark.parametrize("text", [
    "a: !!set {x: null}\n", "a: !!omap [{x: 1}]\n", "a: !!pairs [{x: 1}]\n",
    "a: !!python/object:os.system {}\n", "a: !!python/name:os.system ''\n", "a: !foo 1\n",
    "a: {<<: {b: 1}, c: 2}\n", "a: =\n", "a: !!str [1]\n", "a: !!seq {b: 1}\n",
    "a: !!int x\n", "a: 2001-13-45\n", "? [1, 2]\n: x\n", "? {a: 1}\n: x\n",
    "a: 1\n---\nb: 2\n", "a: [1\n",
])
def test_what_is_no_plain_yaml_value_is_one_line_quoting_none_of_it(text):
    line = _refused(text)
    assert "not valid YAML" in line and "nothing was written" in line
    assert "os.system" not in line


def test_a_duplicate_key_in_a_baseline_is_exit_2_in_one_line(tmp_path, capsys):
    target = tmp_path / "generic.yaml"
    target.write_text("_provenance: {system: generic}\nT:\n  a:\n    t: [1.0, -0.1, 0.1, s]\n"
                      "  a:\n    t: [2.0, -0.1, 0.1, s]\n")
    assert cli.main(["baseline", "control", "--system", "generic", "--baselines",
                     str(target)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"placement: error: {target}: a key given twice in one mapping (line 5, "
                   "first at line 3): YAML keeps only the last, the other's values would be "
                   "lost; remove one, nothing was written"]


def test_dates_and_binary_keep_the_safe_loader_s_types():
    got = safe_yaml.loads("d: 2001-12-14\nb: !!binary aGVsbG8=\n", "x.yaml")
    assert got == {"d": datetime.date(2001, 12, 14), "b": b"hello"}


_SECRET = "root:$6$saltsalt$SECRETHASH:19000:0:99999:7:::"
_LONG = "S" * 1_000_000


@pytest.mark.parametrize("text", [
    f"{_SECRET}\ndaemon:*:19000:0:99999:7:::\n",                # a password file copied in
    f'? "{_LONG}"\n: 5\n',                                        # a test name of 1 MB
    f'T:\n  $index: [a]\n  ? "{_LONG}"\n  : {{t: [.nan, -1, 1, s]}}\n',   # an index value
    f'T:\n  $index: [a]\n  x:\n    ? "{_LONG}"\n    : [.nan, -1, 1, s]\n',   # a variable
    f'_samples:\n  ? "{_LONG}"\n  : 5\n',                         # a test under _samples
    f'_samples:\n  T:\n    $index: [a]\n    ? "{_LONG}"\n    : 5\n',
])
def test_a_malformed_baseline_s_error_quotes_no_line_or_long_key_of_it(tmp_path, capsys, text):
    """The line names where the shape breaks, never what the file holds there: a key that is
    no test class name is not quoted (a password line was), a long one is cut short."""
    target = tmp_path / "generic.yaml"
    target.write_text(text)
    assert cli.main(["baseline", "control", "--system", "generic", "--baselines",
                     str(target)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and len(err) < 600, err[:300]
    assert "SECRETHASH" not in err and err.startswith(f"placement: error: {target}: ")
