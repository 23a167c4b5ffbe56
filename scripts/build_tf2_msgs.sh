#!/usr/bin/env bash
# Build the tf2_msgs interface package (third_party/tf2_msgs) and install it into a venv that
# holds the ROS 2 PyPI wheels. No ROS installation and no sourcing are needed afterwards:
#   <venv>/bin/python -c 'from tf2_msgs.msg import TFMessage'
#
# Usage: scripts/build_tf2_msgs.sh [VENV]   (default: <repo>/.venv)
#        FORCE=1 scripts/build_tf2_msgs.sh  rebuilds even when tf2_msgs already imports.
#
# Why the include-path rewrite: the wheels' <venv>/share/*/cmake/*__rosidl_generator_pyExport.cmake
# files name the wheel-build machine's Python and numpy include directories
# (/opt/python/cp311-cp311/...). CMake refuses to configure a dependent interface package until
# they point at this interpreter's include dir and this venv's numpy.get_include().
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$(cd "${1:-$repo_root/.venv}" && pwd)"
python="$venv/bin/python"
src="$repo_root/third_party/tf2_msgs"
expected_hash='RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'

installed_hash() {
  # Prints the type hash recorded by the generator in the installed type description.
  "$python" - <<'PY'
import json
import os
import sys
path = os.path.join(sys.prefix, 'share', 'tf2_msgs', 'msg', 'TFMessage.json')
with open(path) as f:
    print(json.load(f)['type_hashes'][0]['hash_string'])
PY
}

if [ "${FORCE:-0}" != 1 ] \
    && "$python" -c 'from tf2_msgs.msg import TFMessage' >/dev/null 2>&1 \
    && [ "$(installed_hash 2>/dev/null)" = "$expected_hash" ]; then
  echo "tf2_msgs already installed in $venv"
  exit 0
fi

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

build_dir="$(mktemp -d "${TMPDIR:-/tmp}/tf2_msgs_build.XXXXXX")"
trap 'rm -rf "$build_dir"' EXIT

echo "Configuring tf2_msgs in $build_dir"
export PATH="$venv/bin:$PATH"
cmake -S "$src" -B "$build_dir" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$venv" \
  -DCMAKE_INSTALL_PREFIX="$venv" \
  -DPython3_EXECUTABLE="$python" \
  -DBUILD_TESTING=OFF \
  >"$build_dir/configure.log" 2>&1 || { cat "$build_dir/configure.log"; exit 1; }
echo "Building tf2_msgs"
cmake --build "$build_dir" -j "$(nproc)" >"$build_dir/build.log" 2>&1 \
  || { tail -n 100 "$build_dir/build.log"; exit 1; }
cmake --install "$build_dir" >"$build_dir/install.log" 2>&1 \
  || { cat "$build_dir/install.log"; exit 1; }

"$python" -c 'from tf2_msgs.msg import TFMessage; TFMessage()'
got="$(installed_hash)"
if [ "$got" != "$expected_hash" ]; then
  echo "tf2_msgs/msg/TFMessage type hash $got differs from upstream $expected_hash" >&2
  exit 1
fi
echo "tf2_msgs installed in $venv (type hash $got)"
