#!/usr/bin/env bash
# Cold setup and `make report` time on a fresh clone, with empty uv and pip caches.
# Usage: benchmarks/setup_and_report.sh [clone-dir]   (results: benchmarks/results/setup_and_report.md)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d)/accordkit}
cache=$(mktemp -d)
git clone -q "$repo" "$dir"
cd "$dir"
export UV_CACHE_DIR="$cache/uv" PIP_NO_CACHE_DIR=1
t0=$(date +%s.%N)
make setup >/dev/null 2>&1
t1=$(date +%s.%N)
make report >/dev/null 2>&1
t2=$(date +%s.%N)
printf 'cold setup (uv from an empty cache): %.1f s\nmake report after setup: %.1f s\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
grep -c '"status": "ok"' reports/results.json | xargs printf 'notebooks ok: %s\n'
rm -rf "$cache"
