# Two commands do all the set-up: `make book` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(abspath $(VENV))/bin
STAMP  := $(VENV)/.installed
# the notebooks' kernel must be the environment's Python, not whatever is first on PATH
export PATH := $(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

REQUIREMENTS := requirements.txt requirements-test.txt constraints.txt pyproject.toml

.PHONY: help venv assets book test test-fast audit refresh-notebooks experiments student bench constraints clean

help:
	@echo "make book   - set up .venv if needed, execute every notebook, build the website into _build/html"
	@echo "make test   - set up .venv if needed, run unit tests, nbval on every notebook and a strict book build"
	@echo "              (with the browser checks of the website and Lighthouse on three pages)"
	@echo "make audit  - build the website and run Lighthouse on every page, desktop and phone; fails below the targets"
	@echo "make refresh-notebooks - re-execute the notebooks in book/ and store their outputs"
	@echo "make experiments - re-train chapter 11's models and rewrite book/data/experiments.json"
	@echo "make student - write the student edition (solutions replaced by stubs) to student/ and student.zip, and an nbgrader course to nbgrader_course/"
	@echo "make bench  - time posenc_lib against HF transformers, torchtune, rotary-embedding-torch; writes book/data/bench.*"

$(STAMP): $(REQUIREMENTS)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements.txt -r requirements-test.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

venv: $(STAMP)

# the website's build tools from npm at the versions in package-lock.json (runs `npm ci` only when
# node_modules does not hold them): mermaid-cli, KaTeX, Font Awesome's SVGs, Lighthouse
assets:
	$(PYTHON) tools/offline_site.py install

book: $(STAMP) assets
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo
	@echo "The website is in $(abspath _build/html); open $(abspath _build/html/index.html)"

test: $(STAMP) assets
	$(BIN)/python -m pytest --nbval --nbval-current-env tests book

# Lighthouse (pinned in package.json, Debian's chromium) on every page of the freshly built site,
# served gzip-compressed from loopback; the table goes to test-artifacts/lighthouse-audit.json
audit: book
	$(BIN)/python tools/lighthouse_audit.py _build/html --json test-artifacts/lighthouse-audit.json

# unit tests only (no notebooks, no book build)
test-fast: $(STAMP) assets
	$(BIN)/python -m pytest tests -m "not book" --ignore=tests/test_notebooks.py

refresh-notebooks: $(STAMP)
	$(BIN)/python tools/execute_notebooks.py book

# the student edition, and an nbgrader course (source/ + nbgrader_config.py) in nbgrader_course/
# (see book/instructor_guide.md); built on nbformat, nbconvert and nbgrader, so it uses .venv
student: $(STAMP)
	$(BIN)/python tools/make_student.py --nbgrader nbgrader_course

# train the tiny Transformers of chapter 11 (a few minutes on 2 cores); writes the results the chapter reads
experiments: $(STAMP)
	$(BIN)/python experiments/run_experiments.py --out book/data/experiments.json

# the peers for `make bench`; torchtune on its own line with --no-deps (`import torchtune` needs torchao,
# datasets and more; bench/bench.py loads only its modules/position_embeddings.py, which needs only torch)
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -r requirements-bench.txt
	$(BIN)/python -m pip install --quiet --no-deps torchtune==0.6.1
	@touch $@

# a few minutes; prints the tables and writes book/data/bench.json and book/data/bench.md (the appendix shows them)
bench: $(BENCH_STAMP)
	$(BIN)/python bench/bench.py

constraints: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^torch==' > constraints.tmp
	{ echo "# Every transitive dependency, pinned (pip freeze of requirements.txt + requirements-test.txt)."; \
	  echo "# Regenerate with: make constraints"; echo "torch==2.13.0"; cat constraints.tmp; } > constraints.txt
	rm -f constraints.tmp

clean:
	rm -rf _build .pytest_cache
