#!/usr/bin/env bash
# Chaos run (see RELIABILITY.md): two Open Liberty instances of the demo consume one queue
# (inventory-chaos) on the machine's RabbitMQ and PostgreSQL (ledger on) and a Redis of the run's
# own, while 10,000 orders and 35 % byte-identical copies are published with publisher confirms and
# faults are injected one after the other: kill -9 of each instance (restarted at once), Redis
# killed and restarted empty, Redis frozen (SIGSTOP) longer than the lease while slow handlers run,
# the broker closing the instances' connections and their consuming channels, PostgreSQL
# terminating their backends. Then it checks every order's stock effect, every shipment and every
# dead letter, prints a table and a one-line verdict, and exits non-zero on any violation.
#
#   bench/run-chaos.sh [ChaosRun options]     e.g. bench/run-chaos.sh --orders 2000 --publish-window 90s
#
# Options (defaults): --orders 10000 --copy-percent 35 --invalid 22 --publish-window 180s --kills 4
# --lease 2s --slow-percent 0.5 --slow-delay 3s --concurrency 2 (channels per instance)
# --batch-size 0 (0: the demo's single-message consumer takes the orders; N: its batch consumer, batches of N)
# --deadline <publish window + 10 min> --queue inventory-chaos --queue-type classic (or quorum)
# --schema onceonly_chaos --port 19180
# (instance a: 19180/19181, b: 19182/19183) --label chaos --seed 42.
# Needs RabbitMQ on 127.0.0.1:5672 (guest/guest, rabbitmqctl), PostgreSQL on 127.0.0.1:5432
# (database test), redis-server, Java 17 and Maven. Stops everything it started, also when
# interrupted; the whole run is bounded by --deadline (and this script by that plus 5 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "run-chaos.sh: $*" >&2; exit 2; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

for tool in redis-server java mvn rabbitmqctl timeout; do
  command -v "$tool" >/dev/null || fail "'$tool' is required"
done
listening 5672 || fail "RabbitMQ is not listening on 127.0.0.1:5672 (start it: rabbitmq-server -detached)"
listening 5432 || fail "PostgreSQL is not listening on 127.0.0.1:5432"
WLP=target/liberty/wlp
# The run starts, kills and stops its two servers itself: never ones it did not start.
for s in onceonly-chaos-a onceonly-chaos-b; do
  ! { [ -x "$WLP/bin/server" ] && "$WLP/bin/server" status "$s" >/dev/null 2>&1; } \
    || fail "server $s is already running (another chaos run, or ChaosIT in mvn verify): stop it first ($WLP/bin/server stop $s)"
done

echo "== building the demo and its two chaos servers (onceonly-chaos-a, onceonly-chaos-b)"
mvn -q -B -Dstyle.color=never -Pbench -DskipTests package \
  liberty:create@it-chaos-a liberty:deploy@it-chaos-a liberty:create@it-chaos-b liberty:deploy@it-chaos-b
# The JDBC drivers: in mvn verify the first test server's create copies them into the shared library
# (the chaos servers' creates do not, so as not to rewrite jars under running servers); here nothing
# else does.
mvn -q -B -Dstyle.color=never dependency:copy-dependencies -DincludeArtifactIds=postgresql,h2,mariadb-java-client \
  -Dmdep.stripVersion=true -DoutputDirectory=target/liberty/wlp/usr/shared/resources/jdbc
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f3), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

driver=""
cleanup() {
  if [ -n "$driver" ] && kill -0 "$driver" 2>/dev/null; then
    kill "$driver" 2>/dev/null || true
    wait "$driver" 2>/dev/null || true
  fi
  # The driver stops the servers itself; this is for an interrupted run. Only our two servers, not
  # running before this run (checked above).
  for s in onceonly-chaos-a onceonly-chaos-b; do
    "$WLP/bin/server" status "$s" >/dev/null 2>&1 && "$WLP/bin/server" stop "$s" >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT INT TERM

# The driver ends itself by --deadline; timeout is the backstop (deadline default: window + 10 min).
timeout --signal=TERM 45m java -cp "$CLASSPATH" dev.onceonly.bench.ChaosRun --out target/chaos "$@" &
driver=$!
set +e
wait "$driver"
code=$?
set -e
driver=""
exit "$code"
