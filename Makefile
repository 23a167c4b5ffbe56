# Developer and CI entry points. Everything runs from the project venv (.venv, Python 3.11);
# nothing needs a ROS installation or a sourced setup file.
#
#   make venv    create or update .venv (idempotent; seconds when nothing changed)
#   make test    run the test suite (scripts/run_tests.sh: most tests on 2 processes, then the
#                node tests alone; PYTEST_ARGS='-k foo' runs one pytest with those arguments)
#   make run     the ROS node on the bundled arm with the example controller (Ctrl-C stops;
#                ARGS=--effort: effort control of the arm without drives; ARGS='--headless ...'
#                or make headless: the headless tool without ROS)
#   make headless  run the headless simulator tool (ARGS='...' for its options)
#   make bench   run bench/run_all.py
#   make lock    regenerate constraints.txt from the current .venv
#   make clean   remove .venv and build artefacts

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
VENV_PYTHON := $(VENV)/bin/python
PYTEST_ARGS ?=
ARGS ?=

# ROS 2 isolation for tests and local runs: keep DDS traffic on this host, avoid shared-memory
# segments that a killed process would leave in /dev/shm, and use a domain of our own
# (random in 1..101 unless the caller sets ROS_DOMAIN_ID).
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
export FASTDDS_BUILTIN_TRANSPORTS ?= UDPv4
ifeq ($(origin ROS_DOMAIN_ID),undefined)
ROS_DOMAIN_ID := $(shell echo $$(( $$(od -An -N2 -tu2 /dev/urandom) % 101 + 1 )))
endif
export ROS_DOMAIN_ID

.PHONY: venv test run headless bench lock clean

venv:
	@PYTHON=$(PYTHON) VENV=$(CURDIR)/$(VENV) scripts/setup_venv.sh

test:
	@TEST_DEPS=1 PYTHON=$(PYTHON) VENV=$(CURDIR)/$(VENV) scripts/setup_venv.sh
	@echo "ROS_DOMAIN_ID=$(ROS_DOMAIN_ID)"
	VENV_PYTHON=$(VENV_PYTHON) scripts/run_tests.sh $(PYTEST_ARGS)

# The node and the controller find each other faster with the project's FastDDS profile.
run: venv
	@FASTDDS_DEFAULT_PROFILES_FILE=$${FASTDDS_DEFAULT_PROFILES_FILE:-$(CURDIR)/config/fastdds_profile.xml} \
	  $(VENV_PYTHON) -m jointsim_ros.tools.demo $(ARGS)

headless: venv
	$(VENV_PYTHON) -m jointsim_ros.tools.headless $(ARGS)

bench: venv
	@if [ -f bench/run_all.py ]; then \
	  $(VENV_PYTHON) -m pip install -q --disable-pip-version-check -r requirements-test.txt -c constraints.txt || echo 'bench: requirements-test.txt did not install; the PyBullet comparison is skipped'; $(VENV_PYTHON) bench/run_all.py $(ARGS); \
	else \
	  echo "bench/run_all.py does not exist yet"; \
	fi

lock: venv
	$(VENV_PYTHON) scripts/freeze_constraints.py > constraints.txt

clean:
	rm -rf $(VENV) $(VENV).lock build install log .pytest_cache *.egg-info
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
