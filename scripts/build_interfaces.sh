#!/usr/bin/env bash
# Build the interface packages that have no ROS 2 PyPI wheel (third_party/tf2_msgs: TFMessage for
# /tf; third_party/control_msgs: DynamicJointState for dynamic_joint_states;
# third_party/simulation_interfaces: the ROS 2 simulation interfaces, Kilted release 1.6.1) and
# install them into a venv that holds the wheels. No ROS installation and no sourcing are needed
# afterwards:
#   <venv>/bin/python -c 'from tf2_msgs.msg import TFMessage'
#   <venv>/bin/python -c 'from control_msgs.msg import DynamicJointState'
#   <venv>/bin/python -c 'from simulation_interfaces.srv import SpawnEntity'
#
# A package is skipped when it imports, its checked message has the expected type hash and the
# sha256 of its third_party/ sources recorded at install time (<venv>/share/<pkg>/
# jointsim_sources.sha256) matches the current sources. A package installed before that record
# existed is checked by import and type hash only.
#
# Usage: scripts/build_interfaces.sh [VENV]   (default: <repo>/.venv)
#        FORCE=1 scripts/build_interfaces.sh  rebuilds even when the packages already import.
#
# Why the include-path rewrite: the wheels' <venv>/share/*/cmake/*__rosidl_generator_pyExport.cmake
# files name the wheel-build machine's Python and numpy include directories
# (/opt/python/cp311-cp311/...). CMake refuses to configure a dependent interface package until
# they point at this interpreter's include dir and this venv's numpy.get_include().
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$(cd "${1:-$repo_root/.venv}" && pwd)"
python="$venv/bin/python"

# package, message whose type hash is checked, the upstream RIHS01 hash of that message (the
# control_msgs one was computed from upstream's .msg text: the same as from ours, comments aside;
# the simulation_interfaces one is upstream's generated code for Result, unchanged since 1.0.0)
packages=(
  "tf2_msgs TFMessage RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"
  "control_msgs DynamicJointState RIHS01_18024c98a62697680f581108eeed40b28fb4542fa0ac5a8e36f56c62b6813d26"
  "simulation_interfaces Result RIHS01_cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17"
)

installed_hash() {
  # Prints the type hash recorded by the generator in the installed type description of $1/$2.
  "$python" - "$1" "$2" <<'PY'
import json
import os
import sys
path = os.path.join(sys.prefix, 'share', sys.argv[1], 'msg', sys.argv[2] + '.json')
with open(path) as f:
    print(json.load(f)['type_hashes'][0]['hash_string'])
PY
}

sources_hash() {  # package: sha256 of the names and contents of its third_party/ files (not *.md)
  (cd "$repo_root/third_party/$1" \
    && find . -type f ! -name '*.md' | LC_ALL=C sort | while read -r f; do
      echo "== $f"; cat "$f"
    done) | sha256sum | cut -d' ' -f1
}

sources_stamp() {  # package
  echo "$venv/share/$1/jointsim_sources.sha256"
}

installed() {  # package message hash
  "$python" -c "from $1.msg import $2" >/dev/null 2>&1 \
    && [ "$(installed_hash "$1" "$2" 2>/dev/null)" = "$3" ] \
    && { [ ! -f "$(sources_stamp "$1")" ] \
         || [ "$(cat "$(sources_stamp "$1")")" = "$(sources_hash "$1")" ]; }
}

todo=()
for entry in "${packages[@]}"; do
  read -r pkg msg hash <<<"$entry"
  if [ "${FORCE:-0}" != 1 ] && installed "$pkg" "$msg" "$hash"; then
    echo "$pkg already installed in $venv"
  else
    todo+=("$entry")
  fi
done
[ "${#todo[@]}" -gt 0 ] || exit 0

echo "Rewriting wheel-build include paths in $venv/share/*/cmake/*__rosidl_generator_pyExport.cmake"
"$python" - <<'PY'
import glob
import os
import re
import sys
import sysconfig

import numpy

python_include = sysconfig.get_paths()['include']
numpy_include = numpy.get_include()
pattern = os.path.join(sys.prefix, 'share', '*', 'cmake', '*__rosidl_generator_pyExport.cmake')
line_re = re.compile(r'^(\s*INTERFACE_INCLUDE_DIRECTORIES\s+)"([^"]*)"', re.MULTILINE)


def fix_dir(path):
    if re.search(r'/include/python3\.\d+$', path):
        return python_include
    if re.search(r'/numpy/(_core|core)/include$', path):
        return numpy_include
    return path


changed = 0
files = sorted(glob.glob(pattern))
for name in files:
    with open(name) as f:
        text = f.read()
    new_text = line_re.sub(
        lambda m: m.group(1) + '"' + ';'.join(fix_dir(p) for p in m.group(2).split(';')) + '"',
        text)
    if new_text != text:
        with open(name, 'w') as f:
            f.write(new_text)
        changed += 1
if not files:
    sys.exit('no *__rosidl_generator_pyExport.cmake files under ' + sys.prefix + '/share')
print(f'  {changed} of {len(files)} files rewritten')
PY

build_root="$(mktemp -d "${TMPDIR:-/tmp}/interfaces_build.XXXXXX")"
trap 'rm -rf "$build_root"' EXIT
export PATH="$venv/bin:$PATH"

for entry in "${todo[@]}"; do
  read -r pkg msg hash <<<"$entry"
  build_dir="$build_root/$pkg"
  echo "Configuring $pkg in $build_dir"
  cmake -S "$repo_root/third_party/$pkg" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$venv" \
    -DCMAKE_INSTALL_PREFIX="$venv" \
    -DPython3_EXECUTABLE="$python" \
    -DBUILD_TESTING=OFF \
    -DJOINTSIM_PYTHON_ONLY=ON \
    >"$build_root/$pkg-configure.log" 2>&1 || { cat "$build_root/$pkg-configure.log"; exit 1; }
  echo "Building $pkg"
  cmake --build "$build_dir" -j "$(nproc)" >"$build_root/$pkg-build.log" 2>&1 \
    || { tail -n 100 "$build_root/$pkg-build.log"; exit 1; }
  cmake --install "$build_dir" >"$build_root/$pkg-install.log" 2>&1 \
    || { cat "$build_root/$pkg-install.log"; exit 1; }

  "$python" -c "from $pkg.msg import $msg; $msg()"
  got="$(installed_hash "$pkg" "$msg")"
  if [ "$got" != "$hash" ]; then
    echo "$pkg/msg/$msg type hash $got differs from upstream $hash" >&2
    exit 1
  fi
  sources_hash "$pkg" > "$(sources_stamp "$pkg")"
  echo "$pkg installed in $venv (type hash of $msg $got)"
done
