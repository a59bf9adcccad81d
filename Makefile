# copilot-handoff: `make handoff` runs the proof ladder, `make test` runs the tests.
# `setup` is idempotent: it only does work when its inputs changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME_STAMP := runtime/node_modules/.installed
VENV_STAMP := $(VENV)/.installed
SYSTEM_STAMP := .state/system-packages

# Other runtime and SDK versions, for the version-skew scenarios and `handoff skew`: one
# folder per version with its pins (runtimes/<v>/package.json + package-lock.json,
# sdks/<v>/requirements.txt), installed by `make runtimes`, never committed.
RUNTIME_STAMPS := $(patsubst %/package-lock.json,%/node_modules/.installed,$(wildcard runtimes/*/package-lock.json))
SDK_STAMPS := $(patsubst sdks/%/requirements.txt,.state/sdks/%/.installed,$(wildcard sdks/*/requirements.txt))
NODE_WORKER_STAMP := sdks/node/node_modules/.installed

.PHONY: setup runtimes handoff faults test coverage bench bench-growth soak mutate clean containers docs

# The Node.js worker (21 MB) is part of setup, so that `make handoff` runs the cross-SDK
# rungs (scenarios/cross-sdk-*.toml) on a fresh clone.
setup: $(VENV_STAMP) $(RUNTIME_STAMP) $(SYSTEM_STAMP) $(NODE_WORKER_STAMP)

# iproute2 and OpenSSH for the simulated hosts, podman, runc and debootstrap for the
# container hosts, from Debian's packages when missing.
$(SYSTEM_STAMP): tools/ensure-system-packages
	@tools/ensure-system-packages
	@mkdir -p .state && touch $@

$(VENV_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "copilot-handoff needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

# The runtime is pinned in runtime/package-lock.json and installed by npm, never committed.
$(RUNTIME_STAMP): runtime/package.json runtime/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to install the Copilot runtime: install Node.js 20+ and npm"; exit 2; }
	cd runtime && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The registry this project is installed from serves only some platforms' runtime
# packages, so a lock made here lists only those and `npm ci` refuses it as out of sync;
# `npm install --no-save` installs exactly what the lock pins and leaves it as it is.
runtimes/%/node_modules/.installed: runtimes/%/package.json runtimes/%/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to install Copilot runtimes: install Node.js 20+ and npm"; exit 2; }
	@echo "installing Copilot runtime $* into runtimes/$*/ (about 200 MB) ..."
	cd runtimes/$* && npm install --no-save --no-audit --no-fund --loglevel=error
	@touch $@

# Each SDK in a virtual environment of its own, every package pinned; --no-deps so that
# nothing but the pins is installed. The project itself is not installed there: a worker
# started in it finds the project through PYTHONPATH (handoff/hosts/local.py).
.state/sdks/%/.installed: sdks/%/requirements.txt
	@echo "installing Copilot SDK $* into .state/sdks/$*/ ..."
	rm -rf .state/sdks/$*
	$(PYTHON) -m venv .state/sdks/$*
	.state/sdks/$*/bin/pip install --quiet --disable-pip-version-check --no-deps -r $<
	@touch $@

# The Node.js worker (sdks/node/worker.mjs) on the TypeScript SDK, pinned by
# sdks/node/package-lock.json (`npm install --no-save` for the reason above). --omit=optional
# leaves out the SDK's optional packages, its own bundled runtime for each platform (113 MB
# on Linux) and the FFI that runs one in-process: the worker drives the project's pinned
# runtime over stdio, as the Python worker does.
$(NODE_WORKER_STAMP): sdks/node/package.json sdks/node/package-lock.json
	@command -v npm >/dev/null || { echo "npm is needed to install the Node.js worker's SDK: install Node.js 20+ and npm"; exit 2; }
	cd sdks/node && npm install --no-save --omit=optional --no-audit --no-fund --loglevel=error
	@touch $@

runtimes: setup $(RUNTIME_STAMPS) $(SDK_STAMPS)

# The ladder with the slow rungs (tagged "slow": a 200-turn history, about 20 s on its own,
# and a 100-turn history through each database store whose cost per turn is counted;
# +15 % on the matrix at --jobs 2, measured: docs/agents.md), which `handoff run` alone
# leaves out so that the quick ladder stays quick.
handoff: setup
	$(BIN)/handoff run --slow $(ARGS)

# The fault scenarios (scenarios/fault-*.toml, tagged "faults"): a nemesis kills, cuts
# off, fills or corrupts, and the checker counts silent losses. Under a minute; not part
# of the default ladder.
faults: setup
	$(BIN)/handoff run --faults $(ARGS)

# The worker image of the container hosts (Containerfile), built offline from Debian's
# packages once per machine (1-2 minutes; then a check of a second). Not part of setup:
# the first container scenario builds it too, saying so.
containers: setup
	$(BIN)/handoff image build

# Every test: the docs site, built strictly (make docs: a broken link fails the tests),
# the unit tests under line coverage, two at a time (pytest-cov combines what each
# pytest-xdist worker traced; the verdict core's floor is taken from it:
# tools/coverage_floor.py), then the end-to-end tests, which start the real runtime,
# without coverage tracing, two at a time (pytest-xdist; the tests that read the default
# matrix share one worker, tests/e2e/conftest.py), then on their own those that kill runs
# or check the whole machine (marked serial); the slowest 15 of each are listed. -rs lists every skipped
# test with its reason; in CI (CI=true) a skip fails the run unless tests/allowed_skips.toml
# lists it. The tests cover the version-skew scenarios, so they install the other versions
# first (make runtimes). The container scenarios need the worker image: if it cannot be
# built here, they are skipped with the reason, so a failed build does not stop the tests;
# under CI it does, as a missing system package does (tools/ensure-system-packages).
test: setup runtimes docs
	@$(BIN)/handoff image build >/dev/null || [ "$${CI:-}" != true ] || \
		{ echo "error: CI needs the container hosts' worker image, which could not be built (why: above)" >&2; exit 1; }
	rm -f .coverage .coverage.*
	$(BIN)/pytest -q -rs --durations=15 -n 2 --cov=handoff --cov-report= tests/unit $(PYTEST_ARGS)
	$(BIN)/python tools/coverage_floor.py
	$(BIN)/pytest -q -rs --durations=15 -n 2 --dist loadgroup -m "not serial" tests/e2e $(PYTEST_ARGS)
	$(BIN)/pytest -q -rs --durations=15 -m serial tests/e2e $(PYTEST_ARGS)

# The documentation site (mkdocs.yml, docs/) into .state/site, git-ignored: a few seconds.
# Strict, so a broken link or anchor, or a page missing from the nav, fails it. Not
# --quiet: that hides the warnings --strict counts, and a strict build then passes
# whatever they say. NO_MKDOCS_2_WARNING silences a banner Material prints on every build
# (its end of life, in 2027).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Line coverage across every process the whole suite starts (workers, the witness, the
# zygote, followed through fork and _exit): slower than `make test`, a figure of its own.
coverage: setup runtimes
	rm -f .coverage .coverage.*
	$(BIN)/pytest -q --cov=handoff --cov-report=term:skip-covered $(PYTEST_ARGS)

# Benchmarks (bench/, not part of `make test`): prints tables and writes BENCHMARKS.md.
# About 10 minutes on 2 cores with `make runtimes` done (596 s last time);
# `make bench BENCH_ARGS=--quick` for a rough pass in under 2 minutes (105 s).
bench: setup
	$(BIN)/python -m bench $(BENCH_ARGS)

# Growth (bench/growth.py, not part of `make test`): what one more event costs each session
# store at 10, 100, 1,000 and 10,000 events, beside the peers (OpenAI Agents' sessions and
# LangGraph's savers, the `bench` extra, installed here) on the same SQLite and PostgreSQL.
# Writes its block of BENCHMARKS.md; `make bench-growth GROWTH_ARGS=--quick` for a rough pass.
bench-growth: setup
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.growth $(GROWTH_ARGS)

# Load check (bench/soak.py, not part of `make test`): the default matrix idle, then 5 times
# beside 2 busy processes per core (--jobs up to 2 × nproc), then from empty runtime caches;
# every scenario's verdicts must be the idle run's. Writes its section of BENCHMARKS.md.
# About 20 minutes on 2 cores (1165 s last time); `make soak SOAK_ARGS=--quick` for one
# saturated run instead of 5 (about 6 minutes). Before its idle and its cold-cache run it
# waits (up to 20 minutes each) for other runs and tests of this checkout to end.
soak: setup
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

# Mutation testing of the verdict core (not part of `make test`): about 40 minutes on 2 cores
# (mutmut's mutants about 6, the 511 hand-made ones 30 in the last run);
# writes MUTATION.md and fails on a survivor nobody has explained. mutmut's mutants of the
# files and functions [tool.mutmut] in pyproject.toml names, then the hand-made kinds mutmut
# does not make (a member or a conjunct dropped, checks reordered, a pair swapped, a
# comparison case-folded: tools/handmade_mutants.py).
mutate: setup
	$(BIN)/pip install --quiet -e '.[mutate]'
	rm -rf mutants
	@mkdir -p .state
	set -f; export COPILOT_CLI_PATH=$$($(BIN)/python -c 'from handoff.runtime_locator import locate_runtime; print(locate_runtime())'); \
	$(BIN)/mutmut run $$($(BIN)/python tools/handmade_mutants.py --mutmut-names) > .state/mutmut.log 2>&1 || \
		{ tail -40 .state/mutmut.log; exit 1; }; \
	$(BIN)/python tools/handmade_mutants.py > .state/mutate-handmade.log 2>&1 || \
		{ tail -40 .state/mutate-handmade.log; exit 1; }
	$(BIN)/python tools/mutation_report.py

# (The worker image stays in the engine; `podman rmi` it by the tag `handoff image tag` prints.)
clean:
	rm -rf $(VENV) runtime/node_modules runtimes/*/node_modules sdks/node/node_modules .state .pytest_cache *.egg-info mutants .hypothesis
