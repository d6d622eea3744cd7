#!/usr/bin/env bash
# The deterministic simulation as a soak: batches of seeds until SECONDS have passed (default 600),
# each batch starting where the last ended, so every seed runs once. Prints seeds per second and
# stops at the first failing batch with its shrunk trace and the command that replays the seed.
#   bench/run-simulation.sh [SECONDS] [FIRST_SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
first=${2:-100000}
batch=${SIM_BATCH:-20000}
end=$(( $(date +%s) + seconds ))
mvn -q -o test-compile >/dev/null 2>&1 || mvn -q test-compile
total=0; started=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
  log=$(mktemp)
  if ! mvn -q -o surefire:test -Dtest=SimulationTest#everyInvariantHoldsForEverySeed \
      -Dsim.first="$first" -Dsim.seeds="$batch" -Dsurefire.failIfNoSpecifiedTests=false >"$log" 2>&1; then
    grep -v '^\[' "$log" | sed -n '1,200p'
    echo "run-simulation: FAILED in the batch of seeds $first..$((first + batch - 1)) (log: $log)"
    exit 1
  fi
  grep '^simulation:' "$log" || true
  rm -f "$log"
  first=$((first + batch)); total=$((total + batch))
done
elapsed=$(( $(date +%s) - started ))
echo "run-simulation: $total seeds, 0 failed, ${elapsed} s with Maven's start per batch ($(( total / (elapsed > 0 ? elapsed : 1) )) seeds/s); commit $(git rev-parse --short HEAD)"
