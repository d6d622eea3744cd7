#!/usr/bin/env bash
# Redis Sentinel and Cluster fail-over soak (see RELIABILITY.md, "Redis Sentinel and Cluster").
# Starts its own processes on free loopback ports (never the machine's Redis): a Sentinel group
# (master, replica, three sentinels) and a Cluster (three masters with a replica each), and runs
# guarded claims from two stores (without WAIT, with onceonly.redis.wait-replicas=1, 200 ms) while
# faults come one after another: Sentinel alternates SENTINEL FAILOVER and kill -9 of the master
# (restarted to rejoin as a replica); Cluster cycles CLUSTER FAILOVER, kill -9 of a master
# (restarted once its replica took over) and a reshard of 500 slots. Prints one line per fault and
# the totals, and fails if a completion the replica acknowledged was lost or a store gave an answer
# no correct store gives. Every process it started is stopped at the end, also on failure.
#
#   bench/run-redis-failover.sh [seconds] [seconds-between-faults]     defaults: 60 12
#
# Then the same short tests the build runs, with the load after each fault lasting longer:
#   ONCEONLY_FAILOVER_SECONDS=20 bench/run-redis-failover.sh
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
every="${2:-12}"
command -v redis-server >/dev/null || { echo "run-redis-failover.sh: redis-server is required" >&2; exit 2; }
command -v redis-cli >/dev/null || { echo "run-redis-failover.sh: redis-cli is required" >&2; exit 2; }

log="target/redis-failover-$(date -u +%Y%m%dT%H%M%SZ).log"
mkdir -p target
tests='RedisFailoverSoak'
if [ -n "${ONCEONLY_FAILOVER_SECONDS:-}" ]; then
  tests='RedisFailoverSoak,RedisSentinelFailoverTest,RedisClusterTopologyTest'
fi
echo "run-redis-failover.sh: $seconds s of load per topology, a fault every $every s; log: $log"
status=0
# Bounded: the soak's own length plus generous start-up and shutdown time.
timeout "$(( 2 * seconds + 600 ))" mvn -o -q test -DskipITs -Dsurefire.failIfNoSpecifiedTests=false \
  -Dtest="$tests" -Donceonly.soak.seconds="$seconds" -Donceonly.soak.every="$every" \
  -Donceonly.failover.seconds="${ONCEONLY_FAILOVER_SECONDS:-3}" >"$log" 2>&1 || status=$?
grep -E '^\[redis-(soak|topology)\]' "$log" || true
grep -E 'Tests run:|FAIL' "$log" | tail -5 || true
exit "$status"
