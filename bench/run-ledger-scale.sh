#!/usr/bin/env bash
# How cost grows with retained state: the ledger table at 1 M and 10 M rows on this machine's
# PostgreSQL (127.0.0.1:5432, database test) and MariaDB (127.0.0.1:3306, database test), then the
# Redis claim store with 1 M retained keys. See LedgerScale and RedisScale (src/jmh/java/dev/onceonly/bench).
#
#   bench/run-ledger-scale.sh [--db postgresql|mariadb|both] [--rows 1000000,10000000] [--inserts 20000]
#                             [--warmup 2000] [--purge-percent 10] [--purge-batch 1000] [--keep]
#                             [--redis-keys 1000000] [--redis-messages 10000]
#                             [--mariadb-buffer-pool 2G]
#
# Per database and row count: fill time (rows/s), table and index sizes (bytes/row), insert + commit
# latency of the production insert (p50/p90/p99/max), the purge's rows/s with the production
# batching and the insert latency while it runs; then Redis used_memory per DONE claim at
# --redis-keys keys, commands per message and claim/complete latency beside an empty Redis
# (--redis-keys 0 leaves Redis out). Results: target/bench/ledger-scale-*.json, redis-scale.json.
#
# Duration: dominated by the fill, in the databases themselves. With 100k/200k rows (2 vCPUs) both
# filled 100-150k rows/s, so PostgreSQL's 10 M take about 2 min (plus a VACUUM per size), and Redis's
# 1 M keys about 15 s (80-100k keys/s). MariaDB is the unknown: from about 1 M rows its table is
# larger than the default 128 MB buffer pool (O_DIRECT: no page cache behind it), and each random
# primary-key insert may wait for a read; expect 5 min if it keeps 100k rows/s, over an hour at 2k.
# The inserts (2 x 22,000 per database) and purges add a minute or two.
#
# --mariadb-buffer-pool sets MariaDB's innodb_buffer_pool_size (bytes, or with K/M/G) for the run and
# restores the server's own on exit: the default 128 MB holds about 500 k ledger rows, and past that
# each purged or inserted row may wait for a page read (see BENCHMARKS.md, "MariaDB's purge").
#
# The ledger goes to a scratch schema (PostgreSQL) / database (MariaDB) `onceonly_scale`, dropped
# on exit unless --keep. Redis: a private redis-server (no persistence) on a free loopback port in
# 16380-16480, pinned with RedisScale's JVM to CPU $BENCH_CPU (default 0) as in bench/run-jmh.sh,
# stopped on exit; the machine's Redis on 6379 is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."

CPU="${BENCH_CPU:-0}"
db=both
keep=false
redis_keys=1000000
redis_messages=10000
buffer_pool=""
ledger_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --redis-keys) redis_keys="$2"; shift 2 ;;
    --redis-messages) redis_messages="$2"; shift 2 ;;
    --mariadb-buffer-pool) buffer_pool="$2"; shift 2 ;;
    --keep) keep=true; ledger_args+=("$1"); shift ;;
    --db) db="$2"; ledger_args+=("$1" "$2"); shift 2 ;;
    --*) [ $# -ge 2 ] || { echo "run-ledger-scale.sh: $1 needs a value" >&2; exit 1; }
         ledger_args+=("$1" "$2"); shift 2 ;;
    *) echo "run-ledger-scale.sh: unexpected argument '$1'" >&2; exit 1 ;;
  esac
done
case "$db" in
  both) want_pg=true; want_maria=true ;;
  postgresql) want_pg=true; want_maria=false ;;
  mariadb) want_pg=false; want_maria=true ;;
  *) echo "run-ledger-scale.sh: --db must be postgresql, mariadb or both" >&2; exit 1 ;;
esac
if [ -n "$buffer_pool" ]; then
  $want_maria || { echo "run-ledger-scale.sh: --mariadb-buffer-pool needs --db mariadb or both" >&2; exit 1; }
  buffer_pool=$(numfmt --from=iec "$buffer_pool") \
    || { echo "run-ledger-scale.sh: --mariadb-buffer-pool takes bytes, or a size such as 2G" >&2; exit 1; }
fi

tools=(java mvn)
$want_pg && tools+=(psql)
$want_maria && tools+=(mariadb)
[ "$redis_keys" != 0 ] && tools+=(redis-server redis-cli taskset)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "run-ledger-scale.sh: '$tool' is required" >&2; exit 1; }
done
pg() { psql -h 127.0.0.1 -p 5432 -U postgres -d test -v ON_ERROR_STOP=1 -Atqc "$1"; }
maria() { mariadb -h 127.0.0.1 -P 3306 -u root test -N -e "$1"; }
if $want_pg; then
  pg 'select 1' >/dev/null || { echo "run-ledger-scale.sh: PostgreSQL does not answer at 127.0.0.1:5432 (user postgres, database test)" >&2; exit 1; }
fi
if $want_maria; then
  maria 'select 1' >/dev/null || { echo "run-ledger-scale.sh: MariaDB does not answer at 127.0.0.1:3306 (user root, database test)" >&2; exit 1; }
fi

. bench/private-redis.sh
redis_pid=""
own_buffer_pool=""
cleanup() {
  if [ -n "$own_buffer_pool" ]; then
    maria "set global innodb_buffer_pool_size = $own_buffer_pool" || true
  fi
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  # LedgerScale drops the scratch scope itself; this covers a run that was interrupted.
  if ! $keep; then
    if $want_pg; then pg 'drop schema if exists onceonly_scale cascade' >/dev/null 2>&1 || true; fi
    if $want_maria; then maria 'drop database if exists onceonly_scale' >/dev/null 2>&1 || true; fi
  fi
}
trap cleanup EXIT
if [ -n "$buffer_pool" ]; then
  own_buffer_pool=$(maria 'select @@innodb_buffer_pool_size')
  maria "set global innodb_buffer_pool_size = $buffer_pool"
  # The resize runs in the background, chunk by chunk: the settings LedgerScale records, and the
  # figures, must be the new size's.
  for _ in $(seq 120); do
    maria "show global status like 'Innodb_buffer_pool_resize_status'" | grep -q 'in progress' || break
    sleep 1
  done
  echo "MariaDB innodb_buffer_pool_size $(maria 'select @@innodb_buffer_pool_size') for this run ($own_buffer_pool before)"
fi

mvn -q -B -Dstyle.color=never -Pbench -DskipTests test-compile
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "$(java -version 2>&1 | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
java -cp "$CLASSPATH" dev.onceonly.bench.LedgerScale "${ledger_args[@]}"
ledger_seconds=$((SECONDS - start))

redis_seconds=0
if [ "$redis_keys" != 0 ]; then
  start_private_redis run-ledger-scale.sh "$CPU"
  start=$SECONDS
  ONCEONLY_BENCH_REDIS="127.0.0.1:$port" taskset -c "$CPU" java -cp "$CLASSPATH" dev.onceonly.bench.RedisScale \
    --keys "$redis_keys" --messages "$redis_messages"
  redis_seconds=$((SECONDS - start))
fi

echo
echo "summary: ledger ${ledger_seconds} s, redis ${redis_seconds} s, load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "JSON in target/bench/ledger-scale-*.json and target/bench/redis-scale.json"
