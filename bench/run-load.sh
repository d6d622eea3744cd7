#!/usr/bin/env bash
# End-to-end load (see BENCHMARKS.md): the demo on Open Liberty consuming orders from RabbitMQ,
# with its claims in Redis and its ledger and stock in PostgreSQL, once guarded and once with the
# guard switched off by configuration (ONCEONLY_ENABLED=false), per round; rounds alternate which
# mode goes first. Ends with one table and the guarded/unguarded throughput ratio per round.
#
#   bench/run-load.sh [COUNT] [LoadRun options]     e.g. bench/run-load.sh 20000 --skus 50
#
# COUNT messages (default 20,000) of which 20 % are duplicates; BENCH_ROUNDS rounds (default 3);
# BENCH_CONCURRENCY channels for the consumer (default 1, the demo as shipped); BENCH_MODES the
# modes each round runs (default "guarded unguarded"; "outbox" is guarded with the consumer sending
# its order.reserved event through the transactional outbox, which the other modes leave out;
# "database" is guarded with the claims in PostgreSQL instead of Redis, onceonly.store=database; "ahead" is
# guarded with claim-ahead=BENCH_CLAIM_AHEAD, default 16). Other ONCEONLY_*
# variables reach the server, e.g. ONCEONLY_CONSUMERS_INVENTORY_LEDGER=false or ONCEONLY_STORE=memory.
# Needs RabbitMQ on 127.0.0.1:5672 (guest/guest), PostgreSQL on 127.0.0.1:5432 (database test),
# port 9080 free, redis-server, Java 17 and Maven. Starts a private Redis on a free port in
# 16380-16480 and stops it on exit; publishes to exchange "orders" with routing key "order.bench",
# which only the benchmark's queue "inventory-bench" takes.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT="${1:-20000}"
[ $# -gt 0 ] && shift
ROUNDS="${BENCH_ROUNDS:-3}"
SERVER=target/liberty/wlp/bin/server

fail() { echo "run-load.sh: $*" >&2; exit 1; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for tool in redis-server redis-cli java mvn; do
  command -v "$tool" >/dev/null || fail "'$tool' is required"
done
listening 5672 || fail "RabbitMQ is not listening on 127.0.0.1:5672 (start it: rabbitmq-server -detached)"
listening 5432 || fail "PostgreSQL is not listening on 127.0.0.1:5432"
! listening 9080 || fail "port 9080 is taken: stop the server using it (mvn liberty:stop for the demo)"
# The script starts and stops the demo server itself, and never one it did not start (say, mvn
# liberty:run on another port).
! { [ -x "$SERVER" ] && "$SERVER" status defaultServer >/dev/null 2>&1; } \
  || fail "the demo server (defaultServer) is running: stop it first (mvn liberty:stop)"

mvn -q -B -Dstyle.color=never -Pbench -DskipTests -Dliberty.bootstrap.onceonly.db=postgresql \
  package liberty:create liberty:install-feature liberty:deploy
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"
# The demo's PostgreSQL datasource takes its credentials through authData, which needs a password;
# a PostgreSQL that trusts local connections (this machine's) takes any.
export ONCEONLY_POSTGRESQL_PASSWORD="${ONCEONLY_POSTGRESQL_PASSWORD:-$(openssl rand -hex 16)}"

. bench/private-redis.sh
redis_pid=""
dropin=target/liberty/wlp/usr/servers/defaultServer/configDropins/overrides/bench-concurrency.xml
server_up=""
cleanup() {
  [ -z "$server_up" ] || "$SERVER" stop defaultServer >/dev/null 2>&1 || true
  rm -f "$dropin" # the demo server is mvn liberty:run's too
  [ -z "$redis_pid" ] || { kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; } || true
}
trap cleanup EXIT
start_private_redis run-load.sh

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f3), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# BENCH_CONCURRENCY > 1 gives the demo's consumer that many channels (Reactive Messaging's
# "concurrency"), through a server.xml variable: MP Config reads those, while environment
# variables cannot name channel properties.
# The mode "ahead" is guarded with the channel's claim-ahead set to BENCH_CLAIM_AHEAD (default 16, the
# demo's prefetch), the same way.
write_dropin() { # claim-ahead for this mode
  rm -f "$dropin"
  mkdir -p "$(dirname "$dropin")"
  {
    echo '<server>'
    [ "${BENCH_CONCURRENCY:-1}" = 1 ] || \
      echo "  <variable name=\"mp.messaging.incoming.orders.concurrency\" value=\"$BENCH_CONCURRENCY\"/>"
    [ "$1" = 0 ] || echo "  <variable name=\"mp.messaging.incoming.orders.claim-ahead\" value=\"$1\"/>"
    echo '</server>'
  } > "$dropin"
}

mkdir -p target/bench
rm -f target/bench/load-r*.json
for round in $(seq 1 "$ROUNDS"); do
  read -r -a all_modes <<< "${BENCH_MODES:-guarded unguarded}"
  if (( round % 2 )); then modes="${all_modes[*]}"; else modes="$(printf '%s\n' "${all_modes[@]}" | tac | xargs)"; fi
  for mode in $modes; do
    enabled=true
    [ "$mode" = unguarded ] && enabled=false
    reserved=false
    [ "$mode" = outbox ] && reserved=true
    # The events go to the benchmark's sink queue, not to the demo's own consumer of them: that would
    # be a second guarded consumer in the same server, not the outbox's cost.
    binding=order.reserved.downstream-off
    store="${ONCEONLY_STORE:-redis}"
    [ "$mode" = database ] && store=database
    ahead=0
    [ "$mode" = ahead ] && ahead="${BENCH_CLAIM_AHEAD:-16}"
    write_dropin "$ahead"
    echo "== round $round: $mode (onceonly.enabled=$enabled), starting the demo"
    server_up=1
    DEMO_RESERVED_EVENTS=$reserved DEMO_RESERVED_BINDING=$binding ONCEONLY_ENABLED=$enabled ONCEONLY_STORE="$store" ONCEONLY_REDIS_URL="redis://127.0.0.1:$port" \
      DEMO_EMBEDDED_BROKER=false ONCEONLY_RABBITMQ_PORT=5672 DEMO_QUEUE=inventory-bench DEMO_BINDING=order.bench \
      "$SERVER" start defaultServer --clean >/dev/null
    java -cp "$CLASSPATH" dev.onceonly.bench.LoadRun --count "$COUNT" --label "$mode" --round "$round" \
      --out "target/bench/load-r$round-$mode.json" "$@"
    "$SERVER" stop defaultServer >/dev/null
    server_up=""
  done
done

echo "== load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
java -cp "$CLASSPATH" dev.onceonly.bench.LoadRun --summary target/bench/load-r*.json | tee target/bench/load-report.md
