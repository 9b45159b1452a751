# Two commands do all set-up on a fresh machine (see README):
#   make demo   record a Paddle and a Torch model in two processes, compare, write the report
#   make test   run the whole test suite
VENV ?= .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.base
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean-demo corpus

# What the demo needs: the two frameworks and the package (~2 GB, a few minutes; no system
# packages, no root).
$(BASE): pyproject.toml setup.py padiff_trace/arrays/_ckernel.c
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q torch==2.13.0 paddlepaddle==3.3.1
	$(VENV)/bin/pip install -q -e .
	# an editable install skips the byte-compiling a regular install does; where
	# PYTHONDONTWRITEBYTECODE is set, every process would compile our ~60 modules again (~0.1 s)
	$(PY) -m compileall -q padiff_trace recorder analyzer
	touch $(BASE)

# What the tests add: pytest, ruff, mypy and the third-party model libraries of the real pairs
# (paddlenlp, transformers, datasets: ~120 packages). The HTML tests find a headless browser
# themselves (tests/browser.py) and say how to get one when there is none.
$(STAMP): $(BASE)
	$(VENV)/bin/pip install -q -e '.[test]'
	# torchvision for the paddle.vision pairs, outside the venv: the registry's build for torch
	# 2.13 CPU breaks transformers' imports when installed beside it (tests/vision_pairs/_tv.py)
	$(VENV)/bin/pip install -q --no-deps --target .vision-site torchvision==0.28.0
	$(PY) -m compileall -q padiff_trace recorder analyzer
	touch $(STAMP)

# Demo: (1) the PaDiff README's SimpleLayer twin -> ALIGNED (exit 0);
# (2) a 4-layer TransformerEncoder port with a planted bug -> DIVERGED (exit 1 expected).
demo: $(BASE)
	$(VENV)/bin/padiff-trace run examples/simple_paddle.py examples/simple_torch.py --out out/demo/simple --force
	rc=0; $(VENV)/bin/padiff-trace run examples/transformer_paddle.py examples/transformer_torch.py \
		--out out/demo/transformer --force --tag model=transformer || rc=$$?; test $$rc -le 1
	@echo "reports: out/demo/simple/report/ and out/demo/transformer/report/ (open report.html)"

# ruff and mypy (configured in pyproject.toml) run first: a lint or type error fails the build.
# mypy sees the install-time names (padiff_trace.recorder, padiff_trace.analyzer) through a
# tree of symlinks, since the folders are mapped by the build configuration, not nested.
lint: $(STAMP)
	$(VENV)/bin/ruff check padiff_trace recorder analyzer tests bench examples
	rm -rf .typecheck && mkdir -p .typecheck/padiff_trace
	for f in padiff_trace/*; do ln -s ../../$$f .typecheck/padiff_trace/; done
	ln -s ../../recorder .typecheck/padiff_trace/recorder && ln -s ../../analyzer .typecheck/padiff_trace/analyzer
	$(VENV)/bin/mypy

# the whole suite, two processes at a time (the tests wait on recorder subprocesses; the
# launcher tests keep to one worker: xdist_group); the fast tier alone: $(PY) -m pytest -q -m "not slow"
test: lint
	$(PY) -m pytest -q -n 2 --dist loadgroup

bench: $(STAMP)
	$(PY) bench/trace_io.py

# the whole corpus of real pairs (every family, clean and each planted bug), two cases at a time: docs/real-pairs.md
corpus: $(STAMP)
	$(PY) tests/real_pairs/table.py --jobs 2 --markdown docs/real-pairs.md
