# perftrack: `make demo` runs the main job, `make test` the whole test suite.
VENV      := .venv
PY        := $(VENV)/bin/python
PERFTRACK := $(VENV)/bin/perftrack
STAMP     := $(VENV)/.installed
SHELL_SCRIPTS := scripts/setup-system.sh .ci/run site/vendor.sh scripts/ci-setup.sh scripts/new-tags-pr.sh \
	runners/provision runners/wait-jit runners/accept-jit runners/run-ephemeral runners/job-started.sh \
	runners/docker runners/tune runners/preflight runners/_perftrack.sh runners/reset-job \
	runners/sign-record
# Workflow linters: actionlint from the Go module proxy (its PyPI wrapper downloads from
# GitHub, which fails here), zizmor from PyPI (a dev dependency).
TOOLS     := $(VENV)/tools
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(TOOLS)/actionlint
# act runs the workflows locally in the tests (tests/workflows/, docs/workflows.md).
ACT_VERSION := v0.2.89
ACT       := $(TOOLS)/act
GO        ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

.PHONY: setup demo test lint pytest clean act

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(PERFTRACK) demo

$(ACTIONLINT):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

$(ACT):
	GOBIN=$(abspath $(TOOLS)) $(GO) install github.com/nektos/act@$(ACT_VERSION)

act: $(ACT)

lint: setup $(ACTIONLINT)
	$(VENV)/bin/ruff check scripts tests benchmarks
	$(VENV)/bin/ruff format --check scripts tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) scripts/lint_kwonly.py
	$(PY) scripts/lint_names.py
	$(PY) scripts/lint_edges.py
	shellcheck $(SHELL_SCRIPTS)
	$(ACTIONLINT)
	$(VENV)/bin/zizmor --offline --persona=pedantic .github/workflows

# Two parts (tests/conftest.py): every file in parallel, one worker per core, except those
# that assert what a measurement says (marked `quiet`), which then run one test at a time,
# so no measurement shares the machine. Both always run; either failing fails the target.
# pytest exits 5 when it collected no tests: that must fail, not pass silently.
PYTEST_WORKERS ?= 2
pytest: setup $(ACT)
	$(PY) -m pytest -q -m "not quiet" -n $(PYTEST_WORKERS) --dist loadfile --durations=10; \
	  rc1=$$?; \
	  $(PY) -m pytest -q -m quiet --durations=30; rc2=$$?; \
	  for rc in $$rc1 $$rc2; do \
	    if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	  done; \
	  if [ $$rc1 -ne 0 ]; then exit $$rc1; fi; exit $$rc2

test: lint pytest

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache
