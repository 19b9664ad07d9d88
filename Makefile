# The two commands of the README:
#   make run    set up, run the quick suite on this machine, write a report under reports/
#   make test   set up, then run every test (pytest, which also drives ReFrame)
#   make check  the tests that need no live cluster, emulated node or ReFrame run (minutes)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
REFRAME := $(VENV)/bin/reframe
REFRAME_VERSION := 4.10.4
RFM := $(REFRAME) -C config/settings.py -c reframe_tests -R
# With Spack on PATH (and PLACEMENT_SPACK unset or 1), tools come from the Spack environment.
USE_SPACK := $(shell command -v spack >/dev/null 2>&1 && [ "$${PLACEMENT_SPACK:-1}" = 1 ] && echo yes)
SYSTEM_TOOLS := $(if $(USE_SPACK),spack -e . install && echo "using the Spack view: .spack-env/view",scripts/ensure-system-tools.sh)
export PATH := $(CURDIR)/.spack-env/view/bin:$(PATH)
# ReFrame's job scripts cannot run from a path with a blank (scripts/ensure-system-tools.sh)
ifneq ($(word 2,$(CURDIR)),)
$(error the checkout path '$(CURDIR)' contains a blank, which ReFrame's job scripts cannot run from: move or clone the checkout to a path without blanks)
endif

.PHONY: setup setup-test venv run check test spack-npb spack-site test-numa test-numa-npb test-seed-nodes test-nodes docs quick reframe-list bench acceptance clean

setup: venv
	@$(SYSTEM_TOOLS) run
	@$(MAKE) -s -C src all

setup-test: venv
	@$(SYSTEM_TOOLS) test
	@$(MAKE) -s -C src all

# A venv made in another place (a moved or copied checkout) has scripts whose first line
# names the old path, so they no longer start: it is made afresh
venv:
	@if [ -e $(VENV)/bin/reframe ] && ! head -n 2 $(VENV)/bin/reframe | grep -qF "$(CURDIR)/$(VENV)/bin/python"; then \
	  echo "$(VENV) was made for another path ($$(head -n 1 $(VENV)/bin/reframe | cut -c 3-)): making it afresh"; \
	  rm -rf $(VENV); fi
	@$(MAKE) -s $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "reframe-hpc==$(REFRAME_VERSION)" -e ".[test]"
	touch $@

# The quick suite here, then its report; exits with the run's outcome (its verdict record's
# status: 0 PASS, 1 FAIL, 4 INCOMPLETE), or ReFrame's failure when the report has none
run: setup
	@rc=0; $(RFM) --mode quick -r $(RFM_ARGS) || rc=$$?; \
	$(VENV)/bin/placement report --latest --output reports --exit-status || rc=$$?; \
	exit $$rc

# NPB for the tests: built once from the shared source tarball into a cache outside the
# checkout (placement npb build; reused across runs and clones), unless NPB_DIR is set;
# without the tarball the NPB tests skip with their reason
NPB_TARBALL ?= ../shared/npb/NPB3.4.1.tar.gz
WITH_NPB = if [ -z "$${NPB_DIR:-}" ] && [ -f "$(NPB_TARBALL)" ]; then \
	  NPB_DIR=$$($(VENV)/bin/placement npb build --tarball "$(NPB_TARBALL)" --print-dir) || exit 2; \
	  export NPB_DIR; echo "make $@: NPB binaries from $(NPB_TARBALL) in $$NPB_DIR"; \
	elif [ -z "$${NPB_DIR:-}" ]; then \
	  echo "make $@: no $(NPB_TARBALL) and no NPB_DIR: the NPB runs are skipped"; fi

# A pytest run's failure kept in rc, unless it selected no test (exit 5: a PYTEST_ARGS -k that
# matches only the other half of make test)
NONE_SELECTED = { r=$$?; [ $$r = 5 ] || rc=$$r; }

# Every test that needs no live cluster, emulated node or ReFrame run (tests/conftest.py marks
# the others `live`), on two workers: a few minutes, the check to run after every change
NOT_LIVE = $(PY) -m pytest -m "not live" -n 2 -p no:cacheprovider
check: setup
	@scripts/ensure-system-tools.sh docs
	$(NOT_LIVE) $(PYTEST_ARGS)

# Every test but those on the emulated NUMA node and the live partitions (make test-numa,
# make test-nodes; .ci/run runs all three): those of make check on two workers, then the live
# ones one at a time (they share the test Slurm and time their jobs on this host's cores)
test: setup-test docs
	@$(WITH_NPB); rc=0; \
	$(NOT_LIVE) $(PYTEST_ARGS) || $(NONE_SELECTED); \
	$(PY) -m pytest -m "live and not numa and not nodes" $(PYTEST_ARGS) || $(NONE_SELECTED); \
	exit $$rc

# The live checks on the emulated two-socket NUMA node (tests/numa_node.py boots it once):
# placement, memory policies, hybrid jobs under mpirun and a real Slurm there, `placement site
# new` over ssh to it; the seed guests' and NPB's acceptance tests skip naming their targets
test-numa: setup-test
	@$(WITH_NPB); $(PY) -m pytest -m numa $(PYTEST_ARGS)

# The acceptance-mode NPB cases that fit the emulated two-socket node (CG class A at the full
# count, IS class A at 1, full and 2xfull, pinned and not, first-touch and interleave, budgets
# scaled for TCG)
test-numa-npb: setup-test
	PLACEMENT_TEST_NUMA_NPB=1 $(PY) -m pytest tests/test_numa_npb_acceptance.py $(PYTEST_ARGS)

# A partition at a time, live: the 4-node Slurm of tests/slurm_nodes.py (one node CPU-capped,
# one left 1 PU) FAILs naming both; the README's first week runs there, command by command,
# its unchanged partition PASSing (tests/test_first_week.py); a 16-node Slurm, one job per
# node, names no node but its capped one, then none of 16 unchanged ones (.ci/run runs it)
test-nodes: setup-test
	@$(WITH_NPB); PLACEMENT_TEST_PARTITION_PASS=1 $(PY) -m pytest -m nodes $(PYTEST_ARGS)

# The seed studies' nodes live: the Xeon guest (8 PUs), the Comet Lake guest (16 PUs) and the 64-PU
# Bulldozer guest (minutes each under TCG on 2 cores: never part of make test)
test-seed-nodes: setup-test
	PLACEMENT_TEST_BIG_NODES=1 $(PY) -m pytest tests/test_seed_nodes.py $(PYTEST_ARGS)

# The Spack path with NPB end to end, never part of `make test` (hours on a small node):
# a source mirror with the NPB tarball, the full environment's install, its view, the NPB
# quick family from the view (scripts/spack-npb.sh; says what it skipped where Spack is absent)
SPACK_MIRROR ?= $(HOME)/placement-mirror
spack-npb: venv
	scripts/spack-npb.sh $(SPACK_MIRROR)

# A site's workflow from the same install's view, no .venv on PATH (scripts/spack-site.sh):
# placement site new, two quick acceptance runs around a baseline record, the report
spack-site:
	scripts/spack-site.sh $(SPACK_MIRROR)

# The Sphinx site (docs/_build/html), every warning an error; the test extra brings Sphinx,
# scripts/ensure-system-tools.sh graphviz (installed as root, else named with its package)
docs: venv
	@scripts/ensure-system-tools.sh docs
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

quick: setup
	$(RFM) --mode quick -r

reframe-list: venv
	$(RFM) -l

bench: setup
	$(PY) benchmarks/run_all.py

acceptance: setup
	scripts/acceptance.sh -m $(or $(MODE),acceptance) $(if $(SYSTEM),-s $(SYSTEM)) -- $(RFM_ARGS)

# results/ (run reports, ReFrame's results database, perflogs) is kept: baselines and the
# comparison with the previous run read it
clean:
	rm -rf $(VENV) output stage
	$(MAKE) -s -C src clean
