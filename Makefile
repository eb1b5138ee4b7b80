# The two commands of the README. Each creates or refreshes the virtualenv first, so they work
# on a fresh machine that has nothing but Python.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp
# A pytest -n value; 2 matches the project's 2-core machines.
WORKERS ?= 2

.PHONY: demo test test-slow lint bench matrix docs venv clean

venv: $(STAMP)

$(STAMP): setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[cpu,dev,beam]'
	# tf-keras (Keras 2): slimdata.contrib.rnn's TF1 cells, which the port's tests run. Its
	# metadata asks for the full `tensorflow` package beside tensorflow-cpu, so it goes in
	# without dependencies, at the installed TensorFlow's version.
	$(PY) -m pip install --quiet --no-deps "tf-keras==$$($(PY) -c 'import tensorflow as tf; print(tf.__version__.rsplit(".", 1)[0])' 2>/dev/null).*"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) train_examples/demo.py

# The suite but the tests marked slow (each more than a few seconds: training runs, clusters,
# every documentation page run as written), which `make test-slow` runs; CI runs both.
# worksteal: a worker that runs out of tests takes half of the other's queue, so the run does
# not end with one worker idle (tests/conftest.py starts the files with slow tests first).
test: $(STAMP)
	$(VENV)/bin/pytest -n $(WORKERS) --dist worksteal -q -m 'not slow'

test-slow: $(STAMP)
	$(VENV)/bin/pytest -n $(WORKERS) --dist worksteal -q -m slow

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy slimdata datasets

bench: $(STAMP)
	$(PY) benchmarks/bench_pipeline.py

# The API reference, generated from the docstrings by pdoc into build/api/ (open
# build/api/index.html). Not committed: it is made from the code (about 25 s of CPU), and a
# committed copy would go stale beside it (build/ is ignored by git).
docs: $(STAMP)
	$(VENV)/bin/pdoc --docformat google --no-show-source -o build/api slimdata slimdata.datasets

# The suite's core on each TensorFlow setup.py accepts, one virtualenv per combination under
# .matrix/ (noxfile.py), one after the other, niced: the machines are shared. nox finds each
# Python by name (python3.10, python3.12, python3.13): pyenv's are put on PATH where they are.
# SESSIONS picks some: make matrix SESSIONS='core(tf2.16)'.
PYENV_VERSIONS ?= $(HOME)/.pyenv/versions
SESSIONS ?= core
matrix: $(STAMP)
	PATH="$$(printf '%s:' $(wildcard $(PYENV_VERSIONS)/3.*/bin))$$PATH" nice -n 10 \
	    $(VENV)/bin/nox -s '$(SESSIONS)'

clean:
	rm -rf $(VENV) .matrix build *.egg-info demo_out
