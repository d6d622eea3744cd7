#!/usr/bin/env bash
# RabbitMQ cluster failover run (see RELIABILITY.md, "RabbitMQ cluster and quorum queues"): starts a
# three-node RabbitMQ cluster of its own on loopback (RabbitCluster: nodes onceonly-it-<port>@localhost
# on free ports in 25000-25899, never the machine's broker), and runs RabbitClusterFailoverTest with
# a longer load: the connector's incoming channel on a quorum queue replicated over the three nodes
# while the consumer's node, then the queue's leader, then a node between the attempts of a failing
# message are killed with SIGKILL. Prints one FAILOVER line per fault (sent, processed, duplicates,
# lost, pause and recovery times) and exits non-zero if anything was lost or not dead-lettered.
#
#   bench/run-rabbit-failover.sh [messages per fault] [runs]     e.g. bench/run-rabbit-failover.sh 20000 3
#
# Defaults: 20000 messages, 1 run. Needs the RabbitMQ server installed (rabbitmq-server, rabbitmqctl;
# run as root, the nodes run as the rabbitmq user with its Erlang cookie), Java 17 and Maven.
# The cluster is stopped and its files deleted when the run ends, also when it fails; the whole run
# is bounded (30 minutes per run).
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=${1:-20000}
RUNS=${2:-1}
command -v rabbitmq-server >/dev/null || [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || { echo "run-rabbit-failover.sh: rabbitmq-server is required" >&2; exit 2; }

echo "== compiling"
mvn -q -B -Dstyle.color=never -DskipTests -DskipITs test-compile
status=0
for run in $(seq 1 "$RUNS"); do
  echo "== run $run of $RUNS: $MESSAGES messages per fault"
  log=$(mktemp)
  if ! timeout 30m mvn -B -Dstyle.color=never test -Dtest=RabbitClusterFailoverTest -Dsurefire.failIfNoSpecifiedTests=false \
      -DskipITs -Donceonly.failover.messages="$MESSAGES" >"$log" 2>&1; then
    status=1
    grep -E "Tests run|FAIL|ERROR\]" "$log" | head -40 || true
  fi
  grep "^FAILOVER" "$log" || true
  rm -f "$log"
done
exit $status
