#!/usr/bin/env bash
# Configures and builds mlsup into build/ (warnings are errors). Prints the binary's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLSUP_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)" >&2
echo "$PWD/build/mlsup"
