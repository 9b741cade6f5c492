# Two commands do all the set-up on a fresh machine (see README.md):
#   make lab    creates .venv, installs gemvlab and opens the workbook in JupyterLab
#   make test   creates .venv, installs gemvlab with its test tools, runs every test and nbval
VENV ?= .venv
PY := $(VENV)/bin/python
# JupyterLab refuses to run as root unless told to (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

lab: $(VENV)/.installed
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) notebooks/

test: $(VENV)/.installed
	$(PY) -m pytest tests --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

.PHONY: lab test
