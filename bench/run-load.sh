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
# guarded with claim-ahead=BENCH_CLAIM_AHEAD, default 16; "batched" is guarded, the same work per order
# in batches of BENCH_BATCH_SIZE (default 32) with one transaction per batch, the ledger on: the
# demo's batch consumer, InventoryBatchConsumer, on queue "inventory-bench-batch" and routing key
# "order.bench.batch", which LoadRun then publishes to). Two modes are the floor OnceOnly is compared
# with, the consumer protected by hand (src/bench-app, in the benchmark's WAR only): "seed" is the
# seed article's consumer (SET NX EX 30 in Redis, an insert into a table with a unique key, the guard
# off); "direct" is guarded, with the handler publishing order.reserved itself and waiting for the
# publisher confirm instead of using the outbox (compare it with "outbox"). BENCH_INSTANCES=2 runs a second server
# (secondServer, port 9081) on the same queue, Redis and database; both send their shipping calls to
# the first, so an order shipped by both shows. Other ONCEONLY_*
# variables reach the server, e.g. ONCEONLY_CONSUMERS_INVENTORY_LEDGER=false or ONCEONLY_STORE=memory.
# Needs RabbitMQ on 127.0.0.1:5672 (guest/guest), PostgreSQL on 127.0.0.1:5432 (database test),
# port 9080 (and 9081) free, redis-server, Java 17 and Maven. Starts a private Redis on a free port in
# 16380-16480 and stops it on exit; publishes to exchange "orders" with routing key "order.bench",
# which only the benchmark's queue "inventory-bench" takes (the mode "batched": see above).
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT="${1:-20000}"
[ $# -gt 0 ] && shift
ROUNDS="${BENCH_ROUNDS:-3}"
SERVER=target/liberty/wlp/bin/server
INSTANCES="${BENCH_INSTANCES:-1}"
SERVERS=defaultServer
[ "$INSTANCES" = 1 ] || SERVERS="defaultServer secondServer"

fail() { echo "run-load.sh: $*" >&2; exit 1; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for tool in redis-server redis-cli java mvn psql; do
  command -v "$tool" >/dev/null || fail "'$tool' is required"
done
listening 5672 || fail "RabbitMQ is not listening on 127.0.0.1:5672 (start it: rabbitmq-server -detached)"
listening 5432 || fail "PostgreSQL is not listening on 127.0.0.1:5432"
[ "$INSTANCES" = 1 ] || [ "$INSTANCES" = 2 ] || fail "BENCH_INSTANCES must be 1 or 2"
! listening 9080 || fail "port 9080 is taken: stop the server using it (mvn liberty:stop for the demo)"
[ "$INSTANCES" = 1 ] || ! listening 9081 || fail "port 9081 is taken: the second instance needs it"
# The script starts and stops the demo server itself, and never one it did not start (say, mvn
# liberty:run on another port).
! { [ -x "$SERVER" ] && "$SERVER" status defaultServer >/dev/null 2>&1; } \
  || fail "the demo server (defaultServer) is running: stop it first (mvn liberty:stop)"

mvn -q -B -Dstyle.color=never -Pbench -DskipTests -Dliberty.bootstrap.onceonly.db=postgresql \
  package liberty:create liberty:install-feature liberty:deploy
servers_dir=target/liberty/wlp/usr/servers
rm -rf "$servers_dir/secondServer"
if [ "$INSTANCES" = 2 ]; then
  # The same server on other ports, with a transaction log and workarea of its own.
  mkdir "$servers_dir/secondServer"
  (cd "$servers_dir/defaultServer" && tar cf - --exclude=./logs --exclude=./workarea --exclude=./tranlog .) \
    | tar xf - -C "$servers_dir/secondServer"
  sed -i 's/name="http.port" value="[0-9]*"/name="http.port" value="9081"/; s/name="https.port" value="[0-9]*"/name="https.port" value="9444"/' \
    "$servers_dir/secondServer/configDropins/overrides/liberty-plugin-variable-config.xml"
  grep -q 'value="9081"' "$servers_dir/secondServer/configDropins/overrides/liberty-plugin-variable-config.xml" \
    || fail "could not set the second server's port"
fi
URLS=http://localhost:9080
[ "$INSTANCES" = 1 ] || URLS="$URLS,http://localhost:9081"
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"
# The demo's PostgreSQL datasource takes its credentials through authData, which needs a password;
# a PostgreSQL that trusts local connections (this machine's) takes any.
export ONCEONLY_POSTGRESQL_PASSWORD="${ONCEONLY_POSTGRESQL_PASSWORD:-$(openssl rand -hex 16)}"

. bench/private-redis.sh
redis_pid=""
dropin=configDropins/overrides/bench-concurrency.xml # in each server's directory
server_up=""
cleanup() {
  if [ -n "$server_up" ]; then
    for s in $SERVERS; do "$SERVER" stop "$s" >/dev/null 2>&1 || true; done
  fi
  rm -f "$servers_dir/defaultServer/$dropin" # the demo server is mvn liberty:run's too
  [ -z "$redis_pid" ] || { kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; } || true
}
trap cleanup EXIT
start_private_redis run-load.sh

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f3), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# The mode "batched" sends the orders to the demo's batch consumer (InventoryBatchConsumer), whose
# queue is the demo queue's name with "-batch" and whose binding is the demo's with ".batch".
BATCHED_QUEUE=inventory-bench-batch
BATCHED_KEY=order.bench.batch
# BENCH_CONCURRENCY > 1 gives the demo's consumer (and the batch consumer) that many channels (Reactive Messaging's
# "concurrency"), through a server.xml variable: MP Config reads those, while environment
# variables cannot name channel properties.
# The mode "ahead" is guarded with the channel's claim-ahead set to BENCH_CLAIM_AHEAD (default 16, the
# demo's prefetch), the same way.
write_dropin() { # claim-ahead for this mode, no file monitoring
  for s in $SERVERS; do
    local file="$servers_dir/$s/$dropin"
    rm -f "$file"
    mkdir -p "$(dirname "$file")"
    {
      echo '<server>'
      # Liberty polls the loose application's files and its configuration every 500 ms by default:
      # 6-7 % of the server's CPU in a profile of this run, in every mode alike. Nothing changes them here.
      echo '  <applicationMonitor updateTrigger="disabled" dropinsEnabled="false"/>'
      echo '  <config updateTrigger="disabled"/>'
      [ "${BENCH_CONCURRENCY:-1}" = 1 ] || for channel in orders orders-batch; do
        echo "  <variable name=\"mp.messaging.incoming.$channel.concurrency\" value=\"$BENCH_CONCURRENCY\"/>"
      done
      [ "$1" = 0 ] || echo "  <variable name=\"mp.messaging.incoming.orders.claim-ahead\" value=\"$1\"/>"
      echo '</server>'
    } > "$file"
  done
}

# The seed consumer's table of processed message ids (primary key: the unique index it relies on).
psql -q -h 127.0.0.1 -U postgres -d test \
  -c "CREATE TABLE IF NOT EXISTS bench_seed_processed (msg_id VARCHAR(400) PRIMARY KEY)" \
  || fail "could not create bench_seed_processed in PostgreSQL's database test"

mkdir -p target/bench
rm -f target/bench/load-r*.json
for round in $(seq 1 "$ROUNDS"); do
  read -r -a all_modes <<< "${BENCH_MODES:-guarded unguarded}"
  if (( round % 2 )); then modes="${all_modes[*]}"; else modes="$(printf '%s\n' "${all_modes[@]}" | tac | xargs)"; fi
  for mode in $modes; do
    enabled=true
    [ "$mode" = unguarded ] || [ "$mode" = seed ] && enabled=false
    reserved=false
    [ "$mode" = outbox ] && reserved=true
    hand_written=off
    [ "$mode" = seed ] || [ "$mode" = direct ] && hand_written="$mode"
    # The events go to the benchmark's sink queue, not to the demo's own consumer of them: that would
    # be a second guarded consumer in the same server, not the outbox's cost.
    binding=order.reserved.downstream-off
    store="${ONCEONLY_STORE:-redis}"
    [ "$mode" = database ] && store=database
    ahead=0
    [ "$mode" = ahead ] && ahead="${BENCH_CLAIM_AHEAD:-16}"
    target=(--queue inventory-bench --routing-key order.bench)
    [ "$mode" = batched ] && target=(--queue "$BATCHED_QUEUE" --routing-key "$BATCHED_KEY")
    write_dropin "$ahead"
    # This machine's PostgreSQL runs with autovacuum off: without this, the tables the runs write
    # (outbox, ledger) keep every dead row and are never analyzed, so each round is slower than the
    # last and the planner works from empty statistics. Production PostgreSQL vacuums by itself.
    psql -q -h 127.0.0.1 -U postgres -d test -c "VACUUM ANALYZE" || fail "could not vacuum PostgreSQL's database test"
    echo "== round $round: $mode (onceonly.enabled=$enabled), starting the demo"
    server_up=1
    for s in $SERVERS; do
      BENCH_HAND_WRITTEN=$hand_written DEMO_BATCH_SIZE="${BENCH_BATCH_SIZE:-32}" DEMO_RESERVED_EVENTS=$reserved DEMO_RESERVED_BINDING=$binding ONCEONLY_ENABLED=$enabled ONCEONLY_STORE="$store" ONCEONLY_REDIS_URL="redis://127.0.0.1:$port" \
        DEMO_EMBEDDED_BROKER=false ONCEONLY_RABBITMQ_PORT=5672 DEMO_QUEUE=inventory-bench DEMO_BINDING=order.bench \
        DEMO_SHIPPING_URL=http://localhost:9080/api/shipping "$SERVER" start "$s" --clean >/dev/null
    done
    java -cp "$CLASSPATH" dev.onceonly.bench.LoadRun --count "$COUNT" --label "$mode" --round "$round" \
      --url "$URLS" "${target[@]}" --out "target/bench/load-r$round-$mode.json" "$@"
    for s in $SERVERS; do "$SERVER" stop "$s" >/dev/null; done
    server_up=""
  done
done

echo "== load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
java -cp "$CLASSPATH" dev.onceonly.bench.LoadRun --summary target/bench/load-r*.json | tee target/bench/load-report.md
