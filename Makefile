# Two commands do all the set-up on a fresh machine (see README.md):
#   make lab    creates .venv, installs gemvlab and opens the workbook in JupyterLab
#               (JupyterLab options: make lab ARGS="--port 8890 --no-browser")
#   make test   creates .venv, installs gemvlab with its test tools and a browser, runs ruff, every test and nbval
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -e '.[lab,test]'
	touch $@

lab: $(VENV)/.installed
	$(PY) -m gemvlab lab $(ARGS)

# The browser tests drive Debian's Chromium through JupyterLab; tools/browser.sh installs it when it
# can (root and apt-get, as in CI) and says how otherwise (the tests then skip with that message).
browser:
	@bash tools/browser.sh

test: $(VENV)/.installed browser
	$(VENV)/bin/ruff check gemvlab tests bench tools
	$(PY) -m pytest tests --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg notebooks

.PHONY: lab test browser
