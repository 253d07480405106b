# Two commands do all the set-up: `make book` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(abspath $(VENV))/bin
STAMP  := $(VENV)/.installed
# the notebooks' kernel must be the environment's Python, not whatever is first on PATH
export PATH := $(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Python caches the bytecode of what it imports (the install skips compiling, --no-compile below): where
# PYTHONDONTWRITEBYTECODE is set, every process (each notebook kernel, nbgrader, Sphinx) would compile
# torch and the rest again from source: `import torch` took 3.4 s instead of 1.9 s
unexport PYTHONDONTWRITEBYTECODE

REQUIREMENTS := requirements.txt requirements-test.txt constraints.txt pyproject.toml
# the Python code that `make lint` checks
LINTED := posenc_lib tools bench experiments tests

.PHONY: help prerequisites prerequisites-python venv assets book test test-lint test-units test-explorables test-controls test-nbval test-book test-site test-nbgrader test-fast test-portability test-retrain screenshots lint audit refresh-notebooks \
	experiments student bench constraints clean

help:
	@echo "make help      - this list"
	@echo "make book      - set up .venv if needed, execute every notebook, build the website into _build/html"
	@echo "make test      - everything: lint, unit tests, nbval on every notebook, a strict book build, nbgrader on"
	@echo "                 every chapter, the browser checks and page budgets of the website, Lighthouse's"
	@echo "                 non-timing checks on two pages"
	@echo "  its steps, each runnable alone, in order:"
	@echo "  make test-lint   - ruff and mypy (make lint)"
	@echo "  make test-units  - every test that needs no notebook kernel, website, nbgrader or npm"
	@echo "  make test-explorables - every explorable against posenc_lib, in a scratch book of its own at every setting"
	@echo "  make test-nbval  - every chapter under nbval; keeps the runs in test-artifacts/executed"
	@echo "  make test-book   - the strict website build, from nbval's runs where there are any"
	@echo "  make test-nbgrader - generate_assignment and autograde on every chapter"
	@echo "  make test-site   - the website's checks (builds it first if no test-book build is there)"
	@echo "make test-fast - the library's unit tests only (no kernel, build, browser, npm or nbgrader): under a minute"
	@echo "make test-controls - the builds that must fail (a failing notebook, diagram or formula; CI runs it after make test)"
	@echo "make test-portability - nbval on every chapter on the other numeric code paths a CPU can take (CI runs it too)"
	@echo "make screenshots - build the website and write a screenshot of every page at 1366 and 390 px to test-artifacts/screenshots"
	@echo "make lint      - ruff (lint and format check) and mypy over $(LINTED)"
	@echo "make audit     - build the website and run Lighthouse on every page, desktop and phone; reports performance"
	@echo "                 against its targets, fails on the assertions of lighthouserc.yml (Lighthouse CI)"
	@echo "make test-retrain - re-train whole stored experiment runs and compare them with the results file (CI runs it too)"
	@echo "make refresh-notebooks - re-execute the notebooks in book/ and store their outputs"
	@echo "make experiments - re-train chapters 12 and 13's models; rewrites book/data/experiments.json and real_text.json"
	@echo "make student   - write the student edition (solutions replaced by stubs) to student/ and student.zip, and an nbgrader course to nbgrader_course/"
	@echo "make bench     - time posenc_lib against HF transformers, torchtune, rotary-embedding-torch; writes book/data/bench.*"
	@echo "make venv      - set up .venv (torch and the pinned packages of requirements*.txt and constraints.txt)"
	@echo "make assets    - install the website's build tools from npm (package-lock.json) into node_modules/"
	@echo "make prerequisites - check for Python 3.11+, venv, Node.js 18+, npm and Chromium; prerequisites-python: Python only"
	@echo "make constraints - re-pin constraints.txt from the installed environment (pip freeze)"
	@echo "make clean     - remove build outputs and caches: _build, student/, student.zip, nbgrader_course/, test-artifacts/"

# What `make book` and `make test` need from the system, checked before anything is installed: one line
# naming what is missing and how to get it (README.md, "Quick start").
APT_HINT := on Debian/Ubuntu: apt-get install
prerequisites-python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	  || { echo "missing: Python 3.11 or newer as '$(PYTHON)' ($(APT_HINT) python3 python3-venv, or make PYTHON=python3.11 ...)"; exit 1; }
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null \
	  || { echo "missing: Python's venv module ($(APT_HINT) python3-venv)"; exit 1; }

prerequisites: prerequisites-python
	@missing=""; packages=""; \
	  command -v node >/dev/null 2>&1 && node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 18 ? 1 : 0)' 2>/dev/null \
	    || { missing="$$missing Node.js>=18"; packages="$$packages nodejs"; }; \
	  command -v npm >/dev/null 2>&1 || { missing="$$missing npm"; packages="$$packages npm"; }; \
	  { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } \
	    || { missing="$$missing Chromium"; packages="$$packages chromium"; }; \
	  if [ -n "$$missing" ]; then echo "missing:$$missing ($(APT_HINT)$$packages)"; exit 1; fi

# uv (pinned in constraints.txt, installed by pip) installs the ~190 pinned packages in about 10 s, where
# pip took about 45 s, most of it in its resolver. torch alone comes from pip: pip reads the machine's
# pip configuration (here a CPU wheel on disk), uv does not and would fetch PyPI's CUDA build; uv then
# finds torch==2.13.0 installed. --no-compile (uv's default too): no bytecode for the thousands of
# modules never imported; Python compiles what is imported on first use
$(STAMP): $(REQUIREMENTS) | prerequisites-python
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt uv torch
	$(BIN)/uv pip install --quiet --python $(BIN)/python -c constraints.txt -r requirements.txt -r requirements-test.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	@touch $@

venv: $(STAMP)

# the website's build tools from npm at the versions in package-lock.json (runs `npm ci` only when
# node_modules does not hold them): mermaid-cli, KaTeX, Font Awesome's SVGs, Lighthouse
assets: prerequisites
	$(PYTHON) tools/offline_site.py install

# executes every notebook (_config.yml: execute_notebooks: force); a notebook that raises fails the build
book: prerequisites $(STAMP) assets
	rm -f _build/build-info.json
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo
	@echo "The website is in $(abspath _build/html); open $(abspath _build/html/index.html)"

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

# `make test` is six steps, each a target of its own that can be run, timed and debugged alone: lint, unit
# tests, nbval, the website built from nbval's outputs (test-book), its checks (test-site) and the nbgrader
# round trip, plus the explorables checked against the library. Within `make test` (the rules under
# `ifdef IN_MAKE_TEST`) make runs two at a time, as two chains of steps that each wait for the one before:
#   nbval -> book -> site                                 (the website's path: ~95-105 + 50-55 + 205-240 s)
#   npm ci -> lint -> units -> explorables -> nbgrader    (npm ci, then ~30-40 + 85-90 + 135-170 + 110-160 s;
#                                                          nbgrader grades nbval's runs)
# (measured in two idle fresh-clone runs on a 2-core AMD EPYC, 2026-12-04: 7 min 30 s both, environment
# included; 9 min 37 s beside a CPU-bound loop on each core)
# so at any moment exactly two steps can run and neither slot waits while the other chain has work (left
# to choose, make started the scratch checks in the slot nbval freed and the website waited two minutes).
# Each step prints its name and wall time when it ends (--output-sync: each step's report is printed whole).
TEST_STEPS := test-nbval test-book test-site assets test-lint test-units test-explorables test-nbgrader
test: prerequisites
	@$(MAKE) --no-print-directory -j2 --output-sync=target IN_MAKE_TEST=1 $(TEST_STEPS)
	@echo "make test: every step passed"

ifdef IN_MAKE_TEST
# two steps run at once: each step's torch (and MKL, through OpenMP) gets half the cores. With torch's default
# (every core) in both, a unit-test file of tiny models took 4x the CPU and 4x the wall time while the other
# step was busy: the threads of one wait, spinning, for cores the other holds
export OMP_NUM_THREADS := $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n > 3 ? n / 2 : 1 )))
test-book: test-nbval
test-site: test-book
test-lint: assets
test-units: test-lint
test-explorables: test-units
test-nbgrader: test-nbval test-explorables
endif

# $(call step,command): run one step's command, then print its name, its time and whether it failed
step = @echo "== $@"; start=$$(date +%s); $(1); status=$$?; \
	echo "== $@: $$(( $$(date +%s) - start )) s$$([ $$status = 0 ] || echo ', FAILED')"; exit $$status

# tests that read the website, the nbgrader round trip or node_modules run in the steps that make them; the
# re-training of whole experiment runs in test-retrain (CI, after make test)
UNIT_TESTS := not (book or nbgrader or npm or scratch or retrain)
# the folders the other steps collect from (collecting all of tests/ costs ~10 s of CPU a step);
# tests/book/test_make_test.py checks that every test with their markers lies in them
SITE_TESTS := tests/book tests/site
GRADING_TESTS := tests/grading

test-lint: $(STAMP)
	$(call step,$(MAKE) --no-print-directory lint)

# every test of the library, the exercises' checkers, the tools and the experiments' code
test-units: $(STAMP)
	$(call step,$(BIN)/python -m pytest -q --durations=5 -m "$(UNIT_TESTS)" tests)

# every explorable against posenc_lib: a scratch book of its own (tests/_helpers.py's scratch_book) with every
# kind at every setting (the file's test of the course's own explorables, marked book, runs in test-site)
test-explorables: $(STAMP) assets
	$(call step,$(BIN)/python -m pytest -q --durations=5 -m "not book" tests/site/test_explorables.py)

# the checks of the build's own checks, run by CI after make test: a scratch book whose notebook raises, whose
# diagram or formula cannot be drawn, must fail to build (the scratch book of test-explorables is the control
# that builds). About 35 s of CPU, out of make test for its 8-minute budget
test-controls: $(STAMP) assets
	$(call step,$(BIN)/python -m pytest -q --durations=5 -m scratch tests/book)

# every chapter under nbval; tests/nbval_record.py keeps each run for the website and nbgrader
# (test-artifacts/executed) and runs each chapter's nbgrader test cells after their answers
test-nbval: $(STAMP)
	$(call step,$(BIN)/python -m pytest -q --nbval --nbval-current-env -p nbval_record book)

# the website, strictly (`make book`'s settings), rendering nbval's runs and executing only what nbval did not run
test-book: $(STAMP) assets
	$(call step,$(BIN)/python tools/book_build.py)

# the website's checks: build, pages, browser (Playwright + Chromium), page budgets, Lighthouse, the course's explorables
test-site: $(STAMP) assets
	$(call step,$(BIN)/python -m pytest -q --durations=5 -m "book or npm" $(SITE_TESTS))

# generate_assignment and autograde on every chapter; the solutions graded are nbval's runs
test-nbgrader: $(STAMP)
	$(call step,$(BIN)/python -m pytest -q -m nbgrader $(GRADING_TESTS))

# Lighthouse CI (pinned in package.json, lighthouserc.yml, Debian's chromium) on every page of the freshly
# built site, served gzip-compressed from loopback; its reports go to test-artifacts/lighthouse-audit/
audit: book
	$(BIN)/python tools/lighthouse_audit.py _build/html --reports test-artifacts/lighthouse-audit

# a full-page screenshot of every page of the freshly built website at 1366 and 390 px, to look at
screenshots: book
	$(BIN)/python tools/site_check.py _build/html --screenshots test-artifacts/screenshots

# the library's unit tests: the tests not marked `slow` (pyproject.toml); no notebook, npm or browser
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and $(UNIT_TESTS)" tests

# Every chapter under nbval on the numeric code paths another machine may take: the machine's defaults (torch on
# all its threads; inside `make test` nbval runs on half of them), MKL's vendor-independent kernels (MKL picks
# other kernels on Intel and AMD), PyTorch's non-vectorised CPU kernels, one thread.
# A stored output that prints rounding noise fails here (CONTRIBUTING.md, "Outputs any machine reproduces").
PORTABILITY_SETTINGS := MKL_CBWR=COMPATIBLE ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1
test-portability: $(STAMP)
	@failed=""; for setting in defaults $(PORTABILITY_SETTINGS); do \
	  case $$setting in defaults) run="env -u OMP_NUM_THREADS";; *) run="env $$setting";; esac; \
	  echo "== nbval on every chapter with $$setting"; start=$$(date +%s); \
	  $$run $(BIN)/python -m pytest --nbval --nbval-current-env -q -p no:cacheprovider book || failed="$$failed $$setting"; \
	  echo "== $$setting: $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "nbval failed with:$$failed"; exit 1; fi

# whole stored experiment runs re-trained and compared with book/data/experiments.json (about a minute of CPU;
# CI runs it after make test, whose unit tests check the first steps of runs and the code digest)
test-retrain: $(STAMP)
	$(call step,$(BIN)/python -m pytest -q -m retrain tests/experiments)

refresh-notebooks: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py book

# the student edition, and an nbgrader course (source/ + nbgrader_config.py) in nbgrader_course/
# (see book/instructor_guide.md); built on nbformat, nbconvert and nbgrader, so it uses .venv
student: $(STAMP)
	$(BIN)/python tools/make_student.py --nbgrader nbgrader_course

# train the tiny Transformers of chapters 12 and 13 and write the results they read: the synthetic tasks (about
# 12 minutes on 2 cores), then the byte-level models on real text (real_text.py prints its own estimate first)
experiments: $(STAMP)
	@echo "make experiments: the synthetic runs take about 12 minutes on 2 idle cores, the real-text runs about 2 more"
	$(BIN)/python experiments/run_experiments.py --out book/data/experiments.json
	$(BIN)/python experiments/real_text.py --out book/data/real_text.json

# the peers for `make bench`; torchtune on its own line with --no-deps (`import torchtune` needs torchao,
# datasets and more; bench/bench.py loads only its modules/position_embeddings.py, which needs only torch)
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements-bench.txt
	$(BIN)/python -m pip install --quiet --no-deps torchtune==0.6.1
	@touch $@

# under a minute on 2 idle cores; prints the tables and writes book/data/bench.json and book/data/bench.md (the appendix shows them)
bench: $(BENCH_STAMP)
	$(BIN)/python bench/bench.py

constraints: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^torch==' > constraints.tmp
	{ echo "# Every transitive dependency, pinned (pip freeze of requirements.txt + requirements-test.txt)."; \
	  echo "# Regenerate with: make constraints"; echo "torch==2.13.0"; cat constraints.tmp; } > constraints.txt
	rm -f constraints.tmp

clean:
	rm -rf _build .pytest_cache .mypy_cache .ruff_cache student student.zip nbgrader_course test-artifacts
