# nightshift: two set-up commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# -qq: errors only (pip's notes on this machine's extra indexes and setuptools' editable-install banner are not the
# user's business); --prefer-binary: a wheel, never a build, for every dependency that has one.
PIP := $(BIN)/pip install -qq --prefer-binary

# nightshift and what it needs to run (the demo): the test tools come with `make test` only.
$(STAMP): pyproject.toml
	@$(PY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "nightshift needs Python 3.11+: install it, then run make PY=python3.11 ...")'
	$(PY) -m venv $(VENV)
	$(PIP) -e .
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PIP) -e '.[test]'
	@touch $(TEST_STAMP)

install: $(TEST_STAMP)

# Real parts the suite uses (tmux, git, Slurm, the Claude Code CLI), installed when we can (root).
tools:
	@bash .ci/install-tools || echo "make: some real parts are missing (above); their tests skip, or fail under CI=true"

# bubblewrap too, so the demo shows the boundary a run gets; where it cannot be installed the demo says so first.
demo: $(STAMP)
	@bash .ci/install-tools tmux git
	@bash .ci/install-tools sandbox || echo "make: no bubblewrap (above): the demo runs within the strongest boundary this machine still allows, and names it"
	$(BIN)/nightshift demo
	@echo "nightshift is in $(BIN)/. For daily use put it on your PATH: pipx install .  (or: uv tool install .; without either: make install-user)"

# For a user without pipx or uv (Debian 12 and RHEL 9 have neither for a user, and PEP 668 refuses `pip install
# --user`): nightshift in a virtual environment of its own, its command linked into ~/.local/bin, as pipx would.
USER_VENV ?= $(HOME)/.local/share/nightshift/venv
USER_BIN ?= $(HOME)/.local/bin
install-user:
	@$(PY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "nightshift needs Python 3.11+: install it, then run make PY=python3.11 ...")'
	$(PY) -m venv $(USER_VENV)
	$(USER_VENV)/bin/pip install -qq --prefer-binary --upgrade .
	@mkdir -p $(USER_BIN) && ln -sfn $(USER_VENV)/bin/nightshift $(USER_BIN)/nightshift
	@echo "nightshift: $(USER_BIN)/nightshift ($$($(USER_BIN)/nightshift --version)); to remove it: rm -r $(USER_VENV) $(USER_BIN)/nightshift"
	@case ":$$PATH:" in *":$(USER_BIN):"*) ;; *) echo "nightshift: $(USER_BIN) is not on your PATH in this shell: a new login shell has it where it exists (Debian's ~/.profile, RHEL's ~/.bash_profile), or add export PATH=\"$(USER_BIN):\$$PATH\" to ~/.bashrc";; esac

# pyslurm for the Slurm 22.05 that `tools` installs, built into the venv from ../shared/vendor (see .ci/pyslurm).
# Under CI=true `make test` builds it (once; minutes) and fails without it; elsewhere its tests skip, with the reason.
pyslurm: $(TEST_STAMP) tools
	@bash .ci/pyslurm $(BIN)/python required

test: $(TEST_STAMP) tools
	@if [ "$$CI" = true ]; then bash .ci/pyslurm $(BIN)/python; fi
	$(BIN)/python -m pytest

bench: $(TEST_STAMP) tools
	@failed=""; for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "make bench: these benches failed (their output is above):$$failed"; exit 1; fi

clean:
	rm -rf $(VENV) .pytest_cache
