#!/usr/bin/env bash
# Create or update the project's virtual environment (default <repo>/.venv) with everything the
# package, its tests and the colcon build need: the pinned requirements, the locally built
# interface packages (scripts/build_interfaces.sh) and an editable install of jointsim_ros itself.
#
# Idempotent: a stamp file in the venv records a hash of every input (requirement files,
# constraints, these scripts, third_party/, packaging files, interpreter version); when it
# matches, the script exits at once. FORCE=1 re-runs every step.
#
# Environment: PYTHON (interpreter to create the venv with, default python3.11),
#              VENV (venv directory, default <repo>/.venv), FORCE=1,
#              TEST_DEPS=1 (also install requirements-test.txt: the robot collections the tests
#              load; `make test` sets it, `make run` does not).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
venv="${VENV:-$repo_root/.venv}"
python_cmd="${PYTHON:-python3.11}"
stamp="$venv/.jointsim_setup_stamp"

if ! command -v "$python_cmd" >/dev/null 2>&1; then
  echo "error: $python_cmd not found; the ROS 2 PyPI wheels need CPython 3.11" >&2
  exit 1
fi
py_version="$("$python_cmd" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ "$py_version" != 3.11 ]; then
  echo "error: $python_cmd is Python $py_version; the ROS 2 PyPI wheels need CPython 3.11" >&2
  exit 1
fi

input_hash="$(
  {
    "$python_cmd" -VV
    for f in requirements.txt requirements-dev.txt constraints.txt \
        scripts/setup_venv.sh scripts/build_interfaces.sh setup.py setup.cfg package.xml; do
      echo "== $f"; cat "$f"
    done
    find third_party -type f | LC_ALL=C sort | while read -r f; do
      echo "== $f"; cat "$f"
    done
  } | sha256sum | cut -d' ' -f1
)"

venv_ok() {
  [ -x "$venv/bin/python" ] \
    && [ "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = 3.11 ]
}

# The physics kernels compiled into numba's cache (jointsim_ros/physics/__pycache__): once per
# version of the engine sources, recorded in a stamp of their own.
kernels_stamp="$venv/.jointsim_kernels_stamp"
kernels_hash="$(
  { "$python_cmd" -VV; find jointsim_ros/physics jointsim_ros/tools/precompile.py -name '*.py' \
      | LC_ALL=C sort | xargs cat; } | sha256sum | cut -d' ' -f1
)"
kernels_ok() {
  [ -f "$kernels_stamp" ] && [ "$(cat "$kernels_stamp")" = "$kernels_hash" ] \
    && compgen -G "jointsim_ros/physics/__pycache__/step.step-*.nbi" >/dev/null
}

test_stamp="$venv/.jointsim_test_stamp"
test_hash="$(cat requirements-test.txt constraints.txt | sha256sum | cut -d' ' -f1)"
test_deps_ok() {
  [ "${TEST_DEPS:-0}" != 1 ] || { [ -f "$test_stamp" ] && [ "$(cat "$test_stamp")" = "$test_hash" ]; }
}

if [ "${FORCE:-0}" != 1 ] && venv_ok && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$input_hash" ] \
    && test_deps_ok && kernels_ok; then
  echo "venv $venv is up to date"
  exit 0
fi

# Several shells (or engineers) may run `make test` in one work tree at once: one updates the
# venv while the others wait, then find the stamp current.
lock_file="$venv.lock"
exec 9>"$lock_file"
if ! flock -n 9; then
  echo "waiting for another setup of $venv to finish"
  flock 9
fi
if [ "${FORCE:-0}" != 1 ] && venv_ok && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$input_hash" ] \
    && test_deps_ok && kernels_ok; then
  echo "venv $venv is up to date"
  exit 0
fi

# pip, minus the warning it prints for every package missing from this machine's optional local
# package folders (pip.conf find-links / extra-index-url); real warnings and errors still show.
run_pip() {
  local status=0
  "$venv/bin/python" -m pip --disable-pip-version-check "$@" 2>&1 \
    | { grep -v -e "^WARNING: Location 'file://.*' is ignored" || true; } || status=$?
  return "$status"
}

# The installed packages' modules, byte-compiled on all cores (pip --no-compile, then this): pip
# compiles them one at a time (40 of its 84 s for the pinned requirements here), and a run must
# not be left to compile them as it imports them, since PYTHONDONTWRITEBYTECODE=1 on some
# machines (this project's among them) keeps what it compiles from being written, so every
# process would compile them again (a test run took 2 minutes longer that way).
byte_compile() {
  local site
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$venv/bin/python" -m compileall -q -j 0 "$site" >/dev/null || true
}

if [ "${FORCE:-0}" = 1 ] || ! venv_ok || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$input_hash" ]; then
  rm -f "$stamp"
  # The interface builds compile C and C++ against the wheels' headers.
  missing_tools=()
  for tool in cmake gcc g++ make; do
    command -v "$tool" >/dev/null 2>&1 || missing_tools+=("$tool")
  done
  if [ "${#missing_tools[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "Installing build tools from Debian: cmake g++ make"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ make >/dev/null
    else
      echo "error: missing build tools: ${missing_tools[*]} (install cmake, gcc, g++, make)" >&2
      exit 1
    fi
  fi

  if ! venv_ok; then
    echo "Creating venv $venv with $("$python_cmd" -V)"
    rm -rf "$venv"
    "$python_cmd" -m venv "$venv"
  fi

  echo "Installing pinned requirements"
  run_pip install --quiet --no-compile -r requirements.txt -r requirements-dev.txt -c constraints.txt
  byte_compile

  echo "Building tf2_msgs, control_msgs and simulation_interfaces (no wheels)"
  "$repo_root/scripts/build_interfaces.sh" "$venv"

  echo "Installing jointsim_ros (editable)"
  run_pip install --quiet --no-deps --no-build-isolation -e "$repo_root"

  # Import everything once from outside the repo, so a broken install fails here and not in a test.
  (cd / && "$venv/bin/python" -c '
import numba, numpy, transforms3d, urdf_parser_py.urdf, xacro, yaml, matplotlib
import rclpy, sensor_msgs.msg, geometry_msgs.msg, std_msgs.msg, std_srvs.srv
import rosgraph_msgs.msg, builtin_interfaces.msg, trajectory_msgs.msg, diagnostic_msgs.msg
import tf2_msgs.msg, control_msgs.msg, visualization_msgs.msg
import simulation_interfaces.msg, simulation_interfaces.srv, simulation_interfaces.action
import jointsim_ros
')

  echo "$input_hash" > "$stamp"
fi

if [ "${TEST_DEPS:-0}" = 1 ] && { [ "${FORCE:-0}" = 1 ] || ! test_deps_ok; }; then
  echo "Installing test-only requirements (robot collections, about 500 MB; once)"
  run_pip install --quiet --no-compile -r requirements-test.txt -c constraints.txt
  byte_compile
  (cd / && "$venv/bin/python" -c '
import os, sysconfig, pybullet_data
robots = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share",
                      "example-robot-data", "robots")
assert os.path.isdir(robots), robots
')
  echo "$test_hash" > "$test_stamp"
fi
# The browser view's test opens its page in a headless Chromium (Debian's package, as the
# build tools above); without root or apt-get that test is skipped and says why.
if [ "${TEST_DEPS:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Chromium from Debian for the browser view's test (once)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: no chromium and no root to install it: the browser view's test will skip"
  fi
fi
if [ "${FORCE:-0}" = 1 ] || ! kernels_ok; then
  rm -f "$kernels_stamp"
  # jointsim_precompile prints what it does and how long it usually takes
  (cd / && "$venv/bin/python" -m jointsim_ros.tools.precompile)
  echo "$kernels_hash" > "$kernels_stamp"
fi
echo "venv $venv is ready"
