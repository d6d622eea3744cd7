#!/usr/bin/env bash
# Runs every JMH benchmark and the Redis memory measurement in one go and prints one table
# (see BENCHMARKS.md). Arguments go to JMH, e.g. `bench/run-jmh.sh -i 2 -r 1s` for a quick look;
# BENCH_ROUNDS (default 3) sets how many times the whole suite runs (ratios are taken per round).
#
# - Builds the benchmarks (Maven profile `bench`; the WAR and `mvn verify` never see them).
# - Starts a private redis-server on a free loopback port, pinned to CPU $BENCH_CPU, and stops it
#   on exit. The benchmarks flush it; the machine's Redis on 6379 is never touched.
# - Runs the benchmark JVM (and so JMH's forks, which inherit the affinity) pinned to the SAME CPU:
#   on these 2-vCPU virtual machines a wake-up across CPUs costs ~80 us, five times a round trip,
#   while client and server on one CPU hand over with a plain context switch.
set -euo pipefail
cd "$(dirname "$0")/.."

CPU="${BENCH_CPU:-0}"

for tool in redis-server redis-cli taskset java mvn; do
  command -v "$tool" >/dev/null || { echo "run-jmh.sh: '$tool' is required" >&2; exit 1; }
done

mvn -q -B -Dstyle.color=never -Pbench -DskipTests test-compile
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"

. bench/private-redis.sh
redis_pid=""
trap '[ -z "$redis_pid" ] || { kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; } || true' EXIT
start_private_redis run-jmh.sh "$CPU"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)"
echo "pinning: redis-server and the benchmark JVM on CPU $CPU (redis on 127.0.0.1:$port)"

ONCEONLY_BENCH_REDIS="127.0.0.1:$port" taskset -c "$CPU" java -cp "$CLASSPATH" dev.onceonly.bench.BenchMain "$@"
