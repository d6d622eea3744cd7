#!/usr/bin/env bash
# CPU profile of the demo server in each measured phase of a load run: follows the log of
# bench/run-load.sh as it is written and, PROFILE_DELAY seconds (default 4) into each phase, attaches
# async-profiler to the Liberty JVM for PROFILE_SECONDS (default 12), sampling every thread's CPU
# time every millisecond (`ctimer`: perf events are not available on these machines). Writes one
# collapsed-stack file per mode, `OUT/<mode>.collapsed`, each line led by its thread's name.
#
#   bench/run-load.sh ... > load.log &  bench/profile-load.sh load.log target/profiles
#
# async-profiler comes from Maven Central (tools.profiler:async-profiler, linux-x64) the first time.
# With one JVM per mode, the first instance is the one profiled. The sampler misses samples under
# load (a phase's sample count is well below the CPU /proc reports): compare shares and ratios
# between modes, not absolute time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)" # the checkout whose servers the load run starts
log="${1:?usage: bench/profile-load.sh LOG OUT}"
out="${2:?usage: bench/profile-load.sh LOG OUT}"
delay="${PROFILE_DELAY:-4}"
seconds="${PROFILE_SECONDS:-12}"
version=3.0
home="${HOME}/.cache/onceonly-bench/async-profiler-${version}"
lib="${home}/linux-x64/libasyncProfiler.so"

if [ ! -f "$lib" ]; then
  mkdir -p "$home"
  mvn -q -B dependency:copy -Dartifact="tools.profiler:async-profiler:${version}:jar:linux-x64" -DoutputDirectory="$home"
  (cd "$home" && unzip -o -q "async-profiler-${version}-linux-x64.jar" 'linux-x64/*')
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The load run's servers only: other Liberty servers on the machine (a build's integration tests) run
# from other directories.
bench_servers() {
  local p
  for p in $(pgrep -f 'ws-server.jar' || true); do
    case "$(readlink "/proc/$p/cwd")" in "$root"/target/liberty/*) echo "$p" ;; esac
  done
}

# jcmd reads an argument with '=' in it as a name=value pair: the agent's options go quoted.
agent() { jcmd "$1" JVMTI.agent_load "$lib" "\"$2\"" > /dev/null; }

tail -n +1 -F "$log" 2>/dev/null | while IFS= read -r line; do
  case "$line" in
    *"] measuring: "*)
      mode=$(echo "$line" | sed -E 's/^\[([a-z-]+)\].*/\1/')
      pid=$(bench_servers | head -1)
      ( sleep "$delay"
        agent "$pid" "start,event=ctimer,interval=1ms,threads"
        sleep "$seconds"
        agent "$pid" "stop,file=${out}/${mode}.collapsed,collapsed"
        echo "profiled ${mode}: ${out}/${mode}.collapsed" ) &
      ;;
    "== load "*" at the end"*)
      wait
      exit 0
      ;;
  esac
done
