#!/usr/bin/env bash
# Where the demo server's CPU goes, by thread, in each measured phase of a load run: follows the
# log of bench/run-load.sh as it is written, reads every thread of the Liberty JVM(s) from
# /proc/<pid>/task/<tid>/stat when a phase starts ("measuring:") and when it ends (its result
# block), and prints CPU microseconds per message by thread name, digits folded ("Default
# Executor-thread-12" is "Default Executo" after the kernel's 15-character cut, "pool-3-thread-1"
# is "pool-#-thread-#"). Reading /proc costs the server nothing; no agent is attached.
#
#   bench/run-load.sh ... > load.log &  bench/thread-cpu.sh load.log > threads.txt
#
# Stops after the log's last line "== load ... at the end". Threads that start within a phase count
# with all their time; threads that end within it drop out.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)" # the checkout whose servers the load run starts
log="${1:?usage: bench/thread-cpu.sh LOG}"

snapshot() { # prints "tid name ticks" for every thread of every Liberty JVM, in one awk
  local pid files=()
  for pid in $(pgrep -f 'ws-server.jar' || true); do
    # The load run's servers only, not those of a build's integration tests in another directory.
    case "$(readlink "/proc/$pid/cwd")" in "$root"/target/liberty/*) ;; *) continue ;; esac
    files+=(/proc/"$pid"/task/*/stat)
  done
  [ ${#files[@]} -gt 0 ] || return 0
  # A thread that ends between the listing and the read is skipped (gawk warns and goes on).
  awk '{
      c = 0; for (i = length($0); i > 0; i--) if (substr($0, i, 1) == ")") { c = i; break }  # comm may hold ")"
      o = index($0, "("); name = substr($0, o + 1, c - o - 1)
      gsub(/ /, "_", name); gsub(/[0-9]+/, "#", name)
      split(substr($0, c + 2), f, " ")    # from the state on: utime and stime are the 12th and 13th
      split(FILENAME, p, "/")             # /proc/<pid>/task/<tid>/stat
      print p[5], name, f[12] + f[13]
    }' "${files[@]}" 2>/dev/null || true
}

round="?"
before=""
messages=0
exec 3< <(tail -n +1 -F "$log" 2>/dev/null)
tail_pid=$!
trap 'kill "$tail_pid" 2>/dev/null || true' EXIT
while IFS= read -r -u 3 line; do
  case "$line" in
    "== round "*) round=$(echo "$line" | sed -E 's/^== round ([0-9]+).*/\1/') ;;
    "== load "*" at the end"*) exit 0 ;;
    *"] measuring: "*)
      messages=$(echo "$line" | sed -E 's/.*measuring: ([0-9,]+) messages.*/\1/' | tr -d ,)
      before=$(snapshot) ;;
    *"] "*" consumed, "*" s from first publish")
      [ -n "$before" ] || continue
      label=$(echo "$line" | sed -E 's/^\[([^]]+)\].*/\1/')
      after=$(snapshot)
      echo "## round $round, $label: CPU us per message by thread of the Liberty JVM ($messages messages)"
      # 10 ms ticks; a thread absent from the first snapshot started within the phase
      awk -v n="$messages" 'NR == FNR { t[$1] = $3; next }
           { d = $3 - ($1 in t ? t[$1] : 0); if (d > 0) { g[$2] += d; all += d } }
           END { for (k in g) printf "%8.1f  %s\n", g[k] * 10000 / n, k; printf "%8.1f  all threads\n", all * 10000 / n }' \
        <(echo "$before") <(echo "$after") | sort -rn
      before="" ;;
  esac
done
