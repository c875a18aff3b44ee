# Every target sets up the virtual environment it needs first (Python 3.10 to 3.14 and make).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CUDA=cu12 (or cu13) adds the CUDA compiler wheels: NVVM and ptxas let `make test` compile
# every kernel to PTX without a GPU (tests/test_ptx.py, which skips without them except in CI),
# and a real GPU needs them to run kernels. The `course` extra (the graders) brings cu12 in too:
# a grade compiles every submission for a GPU. `make lab` installs what a student needs only.
# Each set of extras gets its own stamp.
CUDA   ?=
COMMA  := ,
EXTRAS := lab,test,course$(if $(CUDA),$(COMMA)$(CUDA))
STAMP  := $(VENV)/.installed-$(subst $(COMMA),-,$(EXTRAS))
LAB    := $(VENV)/.installed-lab$(if $(CUDA),-$(CUDA))
HOST   ?= 127.0.0.1
OUT    ?= gpu-run-out

.PHONY: help lab test quick test-without-cuda lint fix new-lesson canary notebooks slides \
	gpu-wheels gpu-run gpu-unpack clean

help:
	@echo "make lab         start JupyterLab on the notebooks (http://$(HOST):8888)"
	@echo "make test        run the whole test suite, notebooks included (nbval)"
	@echo "                 (make test CUDA=cu12: with the CUDA compiler, every kernel to PTX too)"
	@echo "make quick       every test but the notebooks, PTX, the browser and slow runs"
	@echo "make test-without-cuda  in a student's venv (no CUDA compiler): its tests skip, not fail"
	@echo "make lint / fix  ruff check and format: check, or fix"
	@echo "make new-lesson N=06 NAME=topic  a new lesson from templates/lesson/"
	@echo "make canary      try the newest numpy, numba and numba-cuda in a throwaway environment"
	@echo "make notebooks   execute every notebook in place (stores this machine's outputs)"
	@echo "make slides      build reveal.js slide decks into build/slides (PDF=0: no PDF handouts)"
	@echo "make gpu-wheels  download the wheels a GPU machine without network needs into .whl/"
	@echo "make gpu-run     on the GPU machine: execute notebooks, tests, record results into OUT"
	@echo "make gpu-unpack ARCHIVE=...  put a GPU run's notebooks and results into the tree"

# .installed-lab-test-course: the extras lab, test and course (the stamp's name lists them)
$(VENV)/.installed-%: pyproject.toml tools/pyproject.toml instructor/pyproject.toml
	$(PYTHON) tools/python_check.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[$(subst -,$(COMMA),$*)]" -e tools -e instructor
	touch $@

# Containers often run as root, which JupyterLab refuses unless told.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(LAB)
	$(BIN)/jupyter lab --ip=$(HOST) --notebook-dir=notebooks $(ROOT_FLAG)

# Python keeps the modules it compiles (__pycache__, ignored by git) even where the environment
# says not to (PYTHONDONTWRITEBYTECODE): else each pytest worker, notebook kernel and grader
# compiles the package and the tests again, about 3 s of CPU each.
KEEP_PYC := PYTHONDONTWRITEBYTECODE=

# Whole files to each core's pytest worker, the slowest first (SLOWEST_FIRST in tests/conftest.py).
test: $(STAMP)
	$(KEEP_PYC) GPGPU_LESSONS_REQUIRE_PTX=$(if $(CUDA),1,0) $(BIN)/python -m pytest \
		-n auto --dist loadfile --no-loadscope-reorder

# The inner loop: every test but the notebooks, the PTX compilation, the browser and slow runs,
# whole files in the order of SLOWEST_FIRST as `make test` hands them out.
quick: $(STAMP)
	$(KEEP_PYC) $(BIN)/python -m pytest tests -n auto --dist loadfile --no-loadscope-reorder \
		-m "not ptx and not browser and not slow"

# A student's install has no CUDA compiler: the tests that need it must skip there, not fail
# (a new CUDA wheel once broke `make test` that way). CI runs this before `make test CUDA=cu12`.
test-without-cuda:
	$(MAKE) --no-print-directory VENV=.venv-student CUDA= .venv-student/.installed-lab-test
	.venv-student/bin/python -m pytest tests -n auto -m ptx
	.venv-student/bin/python -m pytest tests/core/test_import_order.py

lint: $(STAMP)
	$(BIN)/ruff check gpgpu_lessons tools tests notebooks
	$(BIN)/ruff format --check gpgpu_lessons tools tests

fix: $(STAMP)
	$(BIN)/ruff format gpgpu_lessons tools tests
	$(BIN)/ruff check --fix gpgpu_lessons tools tests notebooks

# make new-lesson N=06 NAME=topic: a lesson package, notebook, exercises and tests whose tests pass
new-lesson: $(STAMP)
	$(BIN)/python -m gpgpu_tools.new_lesson $(N) $(NAME)

# Not part of CI: needs the network, judges new releases (see README: "Dependency canary").
canary: $(STAMP)
	$(BIN)/python -m gpgpu_tools.canary

notebooks: $(STAMP)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=900 notebooks/*.ipynb

# Decks from the notebooks' stored outputs (nothing runs); reveal.js and MathJax come from npm once.
# make slides PDF=0: the decks without the PDF handouts (printing them is the slow part)
slides: $(STAMP)
	$(BIN)/python -m gpgpu_tools.slides --out build/slides $(if $(filter 0,$(PDF)),--no-pdf)

gpu-wheels: $(STAMP)
	$(BIN)/python -m gpgpu_tools.gpurun wheels --dest .whl

# Runs on the GPU machine with its own python3 (no venv, no network): see README.
gpu-run:
	PYTHONPATH=tools python3 -m gpgpu_tools.gpurun execute --wheels .whl --out $(OUT)

gpu-unpack: $(STAMP)
	$(BIN)/python -m gpgpu_tools.gpurun unpack $(ARCHIVE)

clean:
	rm -rf $(VENV) build .whl gpu-run-out
