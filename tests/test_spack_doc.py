"""docs/howto/spack.md's commands exist, with the options it gives them; the README names its path.

The page's ```bash block is the path a site runs; its indented blocks show how the project's
scripts are called (`$ scripts/...`, `make spack-npb ...`). Every project command named there
(a script, a make target and its variables, a `placement` subcommand, a file copied) must exist
and accept each option the page gives it, so the page cannot drift from the scripts. Spack's
own commands are checked against `spack ... --help` where Spack is on PATH. The README's Spack
sentence must name the block's commands in the block's order.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "howto" / "spack.md"
README = ROOT / "README.md"
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def path_block() -> list[str]:
    """The commands of the page's ```bash block(s), comments dropped, `&&` chains split."""
    blocks = re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(), re.M | re.S)
    cmds: list[str] = []
    for block in blocks:
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                cmds.extend(part.strip() for part in line.split("&&"))
    return cmds


def usage_lines() -> list[str]:
    """`$ scripts/...` and `make ...` lines of the page's indented blocks, continuations joined."""
    text = re.sub(r"\\\n\s*", " ", PAGE.read_text())
    out = []
    for line in text.splitlines():
        m = re.match(r"^    (?:\$ )?((?:[A-Z_]+=\S+ )*(?:scripts/|make )\S.*)$", line)
        if m:
            out.append(re.sub(r"\s+#.*$", "", m.group(1)).strip())
    return out


def words(cmd: str) -> list[str]:
    """The command's words without leading VAR=value assignments or [optional] markers."""
    w = shlex.split(cmd.replace("[", " ").replace("]", " "))
    while w and ASSIGNMENT.match(w[0]):
        w.pop(0)
    return w


def options(w: list[str]) -> list[str]:
    return [x.split("=")[0] for x in w if x.startswith("-")]


def help_text(argv: list[str]) -> str:
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
    return res.stdout + res.stderr


def check_project_command(cmd: str) -> None:
    w = words(cmd)
    if not w:
        return
    prog = w[0]
    if prog.startswith("scripts/"):
        script = ROOT / prog
        assert script.is_file() and os.access(script, os.X_OK), f"`{cmd}`: no {prog}"
        text = script.read_text() + help_text([str(script), "--help"])
        for opt in options(w[1:]):
            assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text), \
                f"`{cmd}`: {prog} has no option {opt}"
    elif prog == "make":
        makefile = (ROOT / "Makefile").read_text()
        for arg in w[1:]:
            if "=" in arg:
                var = arg.split("=")[0]
                assert re.search(rf"^{var}\s*\??=|\$\({var}\)", makefile, re.M), \
                    f"`{cmd}`: the Makefile has no variable {var}"
            else:
                assert re.search(rf"^{re.escape(arg)}:", makefile, re.M), \
                    f"`{cmd}`: the Makefile has no target {arg}"
    elif prog == "placement":
        subs = [x for x in w[1:] if not x.startswith("-")][:2]
        text = help_text([sys.executable, "-m", "placement", *subs, "--help"])
        assert "usage: placement " + " ".join(subs) in text, f"`{cmd}`: {text[-300:]}"
        for opt in options(w[1:]):
            assert opt in text, f"`{cmd}`: placement {' '.join(subs)} has no option {opt}"
    elif prog == "cp":
        assert (ROOT / w[1]).is_file(), f"`{cmd}`: no {w[1]} in the checkout"


def test_the_page_has_a_path_block_in_a_sites_order():
    cmds = path_block()
    order = ["export PATH=$HOME/spack/bin", "repos.yaml", "SPACK_PYTHON",
             "cp config/spack-site/", "spack -e . concretize", "scripts/spack-mirror.py",
             "spack mirror add", "spack -e . install", ".spack-env/view/bin", "placement site new"]
    at = [next((i for i, c in enumerate(cmds) if key in c), -1) for key in order]
    assert -1 not in at, dict(zip(order, at))
    assert at == sorted(at), f"out of order: {dict(zip(order, at))}"
    assert not any("--no-checksum" in c for c in cmds)


@pytest.mark.parametrize("cmd", path_block() + usage_lines())
def test_every_project_command_and_option_exists(cmd):
    check_project_command(cmd)


def test_the_usage_lines_cover_the_scripts():
    named = {words(c)[0] for c in usage_lines()}
    for prog in ("scripts/spack-mirror.py", "scripts/spack-check.sh", "scripts/spack-lock.sh",
                 "make"):
        assert prog in named, prog


@pytest.mark.skipif(shutil.which("spack") is None,
                    reason="spack is not on PATH: Spack's own subcommands and options unchecked")
def test_spack_commands_exist_in_the_spack_on_path():
    for cmd in path_block():
        w = words(cmd)
        if not w or w[0] != "spack":
            continue
        args = [x for x in w[1:] if x not in ("-e", ".")]
        subs = [x for x in args if not x.startswith("-")][:2]
        text = help_text(["spack", *subs[:1], "--help"])
        if len(subs) > 1 and f" {subs[1]} " in text:
            text = help_text(["spack", *subs, "--help"])
        for opt in options(args):
            assert opt in text, f"`{cmd}`: spack {' '.join(subs)} has no option {opt}"


def apt_packages(lines: list[str]) -> set[str]:
    """The packages of the `apt-get install` lines among LINES (comment marks dropped)."""
    out: set[str] = set()
    for line in lines:
        w = line.lstrip("# ").split()
        if "apt-get" in w and "install" in w:
            out.update(x for x in w[w.index("install") + 1:] if not x.startswith("-"))
    return out


def test_the_block_installs_the_debian_packages_the_template_declares():
    template = ROOT / "config" / "spack-site" / "debian.yaml.example"
    header = re.sub(r"\\\n#\s*", " ", template.read_text()).splitlines()
    want = apt_packages([x for x in header if x.startswith("#")])
    got = apt_packages(path_block())
    assert want and got == want, (sorted(want - got), sorted(got - want))


def test_the_readme_names_the_pages_path_in_its_order():
    text = README.read_text()
    start = text.index("**With Spack**")
    sentence = " ".join(text[start:text.index("**NPB**", start)].split())
    named = [c for c in re.findall(r"`([^`]+)`", sentence)
             if c.split()[0] in ("cp", "spack", "scripts/spack-mirror.py")]
    assert len(named) >= 5, named
    block = [" ".join(c.split()) for c in path_block()]
    at = [block.index(c) if c in block else -1 for c in named]
    assert -1 not in at, f"the README names commands the page's block lacks: {named}"
    assert at == sorted(at)
    assert "docs/howto/spack.md" in sentence
