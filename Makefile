# Every target sets up the virtual environment it needs first (Python 3.10+ and make suffice).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
OUT    ?= gpu-run-out

.PHONY: help lab test notebooks slides gpu-wheels gpu-run gpu-unpack clean

help:
	@echo "make lab         start JupyterLab on the notebooks (http://$(HOST):8888)"
	@echo "make test        run the whole test suite, notebooks included (nbval)"
	@echo "make notebooks   execute every notebook in place (stores this machine's outputs)"
	@echo "make slides      build reveal.js slide decks into build/slides"
	@echo "make gpu-wheels  download the wheels a GPU machine without network needs into .whl/"
	@echo "make gpu-run     on the GPU machine: execute notebooks, tests, record results into OUT"
	@echo "make gpu-unpack ARCHIVE=...  put a GPU run's notebooks and results into the tree"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[lab,test]"
	touch $@

# Containers often run as root, which JupyterLab refuses unless told.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab --ip=$(HOST) --notebook-dir=notebooks $(ROOT_FLAG)

test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile

notebooks: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=900 notebooks/*.ipynb

# Decks from the notebooks' stored outputs (nothing runs); reveal.js and MathJax come from npm once.
slides: $(STAMP)
	$(BIN)/python -m gpgpu_lessons.slides --out build/slides

gpu-wheels: $(STAMP)
	$(BIN)/python -m gpgpu_lessons.gpurun wheels --dest .whl

# Runs on the GPU machine with its own python3 (no venv, no network): see README.
gpu-run:
	python3 -m gpgpu_lessons.gpurun execute --wheels .whl --out $(OUT)

gpu-unpack: $(STAMP)
	$(BIN)/python -m gpgpu_lessons.gpurun unpack $(ARCHIVE)

clean:
	rm -rf $(VENV) build .whl gpu-run-out
