# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install
# what they need. torch is installed first from the pinned CPU build so nothing pulls CUDA.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every install pins to the lock (scripts/lock.sh writes it), so a fresh clone on any day installs
# what the suite last passed with. `make test LOCK=` installs the newest versions the ranges allow.
LOCK ?= requirements-dev.lock
CONSTRAINTS := $(if $(LOCK),-c $(LOCK))
TYPESCRIPT_HOME := /usr/local/lib/rewardlab-ts

.PHONY: demo test lint typecheck bench clean system-deps lock docs

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip

$(STAMP): pyproject.toml $(LOCK) | $(BIN)/python
	@# system-deps (apt, npm) and pip need nothing of each other (every Python package comes as a
	@# wheel; rewardlab's own compiles its kernel if gcc is already there, and the $(KERNEL) rule
	@# builds it otherwise), so system-deps runs meanwhile; its output is printed once pip is
	@# done, and a failure of either fails the install.
	@# verl pins transformers<5.11, which conflicts with the rest; its reward API needs none of
	@# that, so the verl adapter test runs against verl installed without its dependencies.
	@# OpenRLHF pins deepspeed, flash-attn and vllm (CUDA builds); its reward client
	@# (openrlhf.utils.agent) and experience batching need only the light deps in the dev extra.
	@# imitation pins gymnasium~=0.29 and stable-baselines3~=2.2.1; its RewardNet API (what the
	@# envs adapter test runs against) works with ours, so it too is installed without its deps.
	@# verifiers' full dependency set pulls prime-* service clients; its Rubric path (what the
	@# integrations.verifiers test runs through) needs only the few light packages listed with it.
	@# 0.3.1 is the last release with the classic Rubric (0.4 moved to a v1 Task/Trace stack).
	@$(MAKE) --no-print-directory system-deps > $(VENV)/system-deps.log 2>&1 & deps=$$!; \
	$(BIN)/pip install "torch==2.13.0" \
	  && $(BIN)/pip install $(CONSTRAINTS) -e ".[dev]" "tensordict==0.10.0" omegaconf \
	  && $(BIN)/pip install --no-deps "verl==0.9.1" "openrlhf==0.11.2" "imitation==1.0.1" \
	    "verifiers==0.3.1" "anthropic==0.78.0" "openai==2.9.0" "renderers==0.1.10" "prime-pydantic-config==0.4.3" \
	    "docstring-parser==0.18.0" "jiter==0.19.0" "tenacity==9.2.1"; \
	pip_status=$$?; wait $$deps; deps_status=$$?; \
	echo "== make system-deps"; cat $(VENV)/system-deps.log; \
	[ $$pip_status = 0 ] && [ $$deps_status = 0 ]
	touch $(STAMP)

# bubblewrap isolates code rewards (docs/code.md); chromium renders report screenshots (docs/evaluate.md);
# installed when we are root and apt exists. Everything missing is installed after one `apt-get update`
# (each update re-reads every package list); nothing is fetched when all is in place.
# The toolchains of code.tests are pinned: package:version, the same on every machine, as
# docs/code.md "Languages" lists them (tests/verify/code/test_code_toolchains.py holds these pins to
# languages.py and to what is installed). A package at another version is replaced, a newer one
# too (nodesource's nodejs 20 becomes Debian's 18). They must live where the sandbox sees them (/usr),
# so a rustup rustc under /root does not count. Go 1.23 comes from bookworm-backports (bookworm has
# 1.19), which is added, at its default low priority, when it is not configured; rustc-web (1.96, from
# bookworm-security) replaces Debian's rustc 1.63. No Debian 12 archive has OpenJDK 21: Java stays 17.
system-deps:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	pins="gcc:12.2 g++:12.2 openjdk-17-jdk-headless:17 nodejs:18.20 npm:9.2 golang-1.23-go:1.23 rustc-web:1.96"; \
	off() { for pin in $$pins; do \
	  pkg=$${pin%%:*}; want=$${pin#*:}; \
	  have=$$(dpkg-query -W -f='$${db:Status-Abbrev}$${Version}' $$pkg 2>/dev/null); have=$${have#ii }; have=$${have#*:}; \
	  case "$$have" in "$$want"|"$$want".*) ;; *) printf ' %s' $$pkg;; esac; \
	done; }; \
	tools=$$(off); \
	if [ -z "$$missing$$tools" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  case "$$missing" in *bubblewrap*) echo "WARNING: bubblewrap missing; code rewards fall back to rlimits only (install: apt-get install bubblewrap)";; esac; \
	  case "$$missing" in *chromium*) echo "WARNING: chromium missing; the report screenshot test will skip (install: apt-get install chromium)";; esac; \
	  if [ -n "$$tools" ]; then echo "WARNING: toolchains of code.tests missing or not at their pinned versions ($$pins):$$tools"; fi; \
	  exit 0; \
	fi; \
	case "$$tools" in *golang-1.23-go*) \
	  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ && grep -qs bookworm /etc/os-release; then \
	    uri=$$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $$2; exit}'); \
	    [ -n "$$uri" ] || uri=$$(awk '$$1 == "deb" {print $$2; exit}' /etc/apt/sources.list 2>/dev/null); \
	    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$$uri" \
	      > /etc/apt/sources.list.d/bookworm-backports.sources; \
	  fi;; esac; \
	apt-get update -qq || exit 1; \
	if [ -n "$$missing" ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || exit 1; fi; \
	if [ -n "$$tools" ]; then \
	  node=$$(apt-cache madison nodejs | awk -F' [|] ' '$$3 ~ / bookworm/ {print $$2; exit}'); \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --allow-downgrades \
	    $$(echo "$$tools" | sed "s/ nodejs\( \|$$\)/ nodejs=$$node\1/") || exit 1; \
	  still=$$(off); \
	  if [ -n "$$still" ]; then echo "ERROR: after apt-get install, not at their pinned versions ($$pins):$$still" >&2; exit 1; fi; \
	fi
	@# TypeScript from npm, pinned, with @types/node (Debian's node-typescript has no node types,
	@# so programs using require/process would not type-check); under /usr/local: the sandbox sees it.
	@if [ ! -f $(TYPESCRIPT_HOME)/node_modules/typescript/bin/tsc ] || [ ! -d $(TYPESCRIPT_HOME)/node_modules/@types/node ]; then \
	  if [ -w /usr/local/lib ] && command -v npm >/dev/null 2>&1; then \
	    npm install --prefix $(TYPESCRIPT_HOME) --no-audit --no-fund --silent typescript@5.6.3 @types/node@20.19.43; \
	  else echo "WARNING: TypeScript for code.tests missing (npm install --prefix $(TYPESCRIPT_HOME) typescript@5.6.3 @types/node@20.19.43)"; fi; \
	fi

# The selection kernel (C, loaded with ctypes) is compiled by the editable install through
# hatch_build.py; this rebuilds it when its source changed since, or when the install ran before
# system-deps had installed gcc.
KERNEL := src/rewardlab/select/lib_kernel.so.1
$(KERNEL): src/rewardlab/select/_kernel.c hatch_build.py | $(STAMP)
	$(BIN)/python hatch_build.py

demo: $(STAMP) $(KERNEL)
	$(BIN)/rewardlab demo

# Two pytest processes: the fault suites marked `isolated` fork and kill hundreds of workers,
# and each fork copies the parent's page tables, which the rest of the suite grows by GBs
# (torch, models): run alone, they take seconds instead of minutes.
test: $(STAMP) $(KERNEL)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not isolated" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m isolated $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench hatch_build.py
	$(BIN)/mypy

bench: $(STAMP) $(KERNEL)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# The docs site (mkdocs.yml) into site/; strict, so a broken link or reference fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d site

# Re-resolve the open ranges of pyproject.toml in a throw-away venv and freeze them into the lock.
lock:
	PY=$(PY) bash scripts/lock.sh

clean:
	rm -rf $(VENV) build dist site .pytest_cache .mypy_cache .ruff_cache $(KERNEL)
