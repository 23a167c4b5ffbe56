#!/usr/bin/env bash
# The whole test suite in two parts (`make test`; test/conftest.py says which tests are which):
#   1. every test not marked `serial`, spread over TEST_WORKERS processes (pytest-xdist, default
#      2: the CI machines' cores), a test file to a process so its module fixtures are built once;
#   2. the `serial` tests (a node, a demo or a view over DDS at a real-time factor), one at a
#      time with the machine to themselves.
# With arguments (`make test PYTEST_ARGS='-k foo'`) it runs one plain pytest with them instead.
# The exit status is the first failing part's; a part that selects no test is not a failure
# unless neither part ran one (pytest's exit status 5).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${VENV_PYTHON:-.venv/bin/python}"

if [ "$#" -gt 0 ]; then
  exec "$python" -m pytest test -q -ra "$@"
fi

echo "== part 1 of 2: the tests that may share the machine, on ${TEST_WORKERS:-2} processes"
"$python" -m pytest test -q -ra -m 'not serial' -n "${TEST_WORKERS:-2}" --dist loadfile \
  --durations=15
first=$?
echo "== part 2 of 2: the tests that run alone (a node, a demo or a view over DDS)"
"$python" -m pytest test -q -ra -m serial --durations=15
second=$?

if [ "$first" -eq 5 ] && [ "$second" -eq 5 ]; then
  exit 5
fi
for status in "$first" "$second"; do
  if [ "$status" -ne 0 ] && [ "$status" -ne 5 ]; then
    exit "$status"
  fi
done
exit 0
