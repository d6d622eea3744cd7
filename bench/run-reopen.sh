#!/usr/bin/env bash
# The simulation's sensitivity as a regression test: every hole the simulation is said to find
# (RELIABILITY.md, "The holes it finds again") is re-opened by its patch in bench/reopen/, in a
# scratch copy of HEAD, and the simulation must then FAIL within the seeds the patch names.
#
#   bench/run-reopen.sh                 # every patch
#   bench/run-reopen.sh 03 batch        # the patches whose file names contain one of these words
#
# Each patch starts with a header git apply ignores:
#   Hole: what the patch re-opens (one line)
#   Seeds: FIRST COUNT   the seeds that must hold at least one failure
# Prints a table (patch, seeds, failing seeds, first failing seed, seconds) and exits 1 when a
# re-opened hole was not found, or a patch no longer applies (the code moved: renew the patch), 2
# when it cannot run at all. The scratch copy is a detached worktree under target/, removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch="$root/target/reopen-scratch"
report="$root/target/reopen-report.md"
mkdir -p "$root/target"

cleanup() { git -C "$root" worktree remove --force "$scratch" >/dev/null 2>&1 || rm -rf "$scratch"; }
trap cleanup EXIT
cleanup
git worktree prune
git worktree add -q --detach "$scratch" HEAD || { echo "run-reopen: cannot make the scratch copy" >&2; exit 2; }

patches=()
for p in bench/reopen/*.patch; do
  if [ $# -eq 0 ]; then patches+=("$p"); continue; fi
  for word in "$@"; do
    case "$(basename "$p")" in *"$word"*) patches+=("$p"); break ;; esac
  done
done
[ ${#patches[@]} -gt 0 ] || { echo "run-reopen: no patch matches $*" >&2; exit 2; }

commit=$(git rev-parse --short HEAD)
{
  echo "Re-opened holes at \`$commit\`, $(date -u +%Y-%m-%d):"
  echo
  echo "| patch | hole | seeds | failing seeds | first failing seed | s |"
  echo "|---|---|---|---|---|---|"
} >"$report"

missed=0
for p in "${patches[@]}"; do
  name=$(basename "$p" .patch)
  hole=$(sed -n 's/^Hole: //p' "$p" | head -1)
  read -r first count < <(sed -n 's/^Seeds: //p' "$p" | head -1)
  git -C "$scratch" checkout -q -- . && git -C "$scratch" clean -fdq -- src
  started=$(date +%s)
  if ! git -C "$scratch" apply "$root/$p"; then
    echo "| $name | $hole | $first..$((first + count - 1)) | patch does not apply | | |" >>"$report"
    echo "run-reopen: $name no longer applies: renew it against the code as it is"
    missed=$((missed + 1)); continue
  fi
  log="$root/target/reopen-$name.log"
  (cd "$scratch" && mvn -q test-compile >"$log" 2>&1) || {
    echo "| $name | $hole | $first..$((first + count - 1)) | does not compile | | |" >>"$report"
    echo "run-reopen: $name does not compile (log: $log)"; missed=$((missed + 1)); continue; }
  (cd "$scratch" && mvn -q surefire:test -Dtest=SimulationTest#everyInvariantHoldsForEverySeed \
      -Dsim.first="$first" -Dsim.seeds="$count" -Dsurefire.failIfNoSpecifiedTests=false >>"$log" 2>&1) || true
  failed=$(sed -n 's/^simulation: .* \([0-9][0-9]*\) failed,.*/\1/p' "$log" | tail -1)
  firstFailing=$(grep -m1 -E '^  [0-9]+ \(' "$log" | awk '{print $1}' || true)
  seconds=$(( $(date +%s) - started ))
  if [ -z "$failed" ]; then
    echo "| $name | $hole | $first..$((first + count - 1)) | the simulation did not run | | $seconds |" >>"$report"
    echo "run-reopen: $name: the simulation did not run (log: $log)"; missed=$((missed + 1)); continue
  fi
  echo "| $name | $hole | $first..$((first + count - 1)) | $failed | ${firstFailing:--} | $seconds |" >>"$report"
  if [ "$failed" -eq 0 ]; then
    echo "run-reopen: $name NOT FOUND in seeds $first..$((first + count - 1))"; missed=$((missed + 1))
  else
    echo "run-reopen: $name found: $failed failing seeds, the first $firstFailing (${seconds} s)"
  fi
done

cat "$report"
if [ "$missed" -gt 0 ]; then
  echo "run-reopen: $missed of ${#patches[@]} re-opened holes not found (report: $report)"; exit 1
fi
echo "run-reopen: all ${#patches[@]} re-opened holes found (report: $report)"
