#!/usr/bin/env bash
# The outbox relay's added latency (commit -> broker confirm, p50/p90/p99/max) and the transaction
# rate with and without an outbox row, in one run, on this machine's PostgreSQL (127.0.0.1:5432,
# database test) and RabbitMQ (127.0.0.1:5672, guest/guest). See BENCHMARKS.md.
#
#   bench/run-outbox.sh [--count 5000] [--rate 500]     (--rate 0: as fast as one thread commits)
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -Dstyle.color=never -Pbench -DskipTests -DskipITs test-compile
CLASSPATH="target/test-classes:target/classes:$(cat target/jmh.classpath)"
java -cp "$CLASSPATH" dev.onceonly.internal.rabbitmq.OutboxRelayLatency "$@"
