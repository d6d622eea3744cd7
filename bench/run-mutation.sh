#!/usr/bin/env bash
# Mutation testing of the decision code with PIT (the `mutation` profile in pom.xml says which classes
# and tests): compiles, runs PIT, then prints the totals and the score of each class from the XML
# report. The whole set has not been run at once since the dead-letter operations, DeliverySettler and the
# outbox relay joined it (the smaller set before was 743 mutations, 56 min on two shared CPUs); narrowed
# runs of four to six classes (285 to 379 mutations) take 20 to 22 min with other builds running. The HTML report is in
# target/pit-reports/index.html. Needs Redis on 127.0.0.1:6379 (one engine test uses it), no broker.
#   bench/run-mutation.sh [extra Maven arguments, e.g. -o, or -Dmutation.targetClasses=dev.onceonly.internal.engine.RetryRule*]
set -euo pipefail
cd "$(dirname "$0")/.."
report=target/pit-reports/mutations.xml
rm -f "$report"
started=$(date +%s)
mvn -Pmutation "$@" test-compile org.pitest:pitest-maven:mutationCoverage
elapsed=$(( $(date +%s) - started ))
[ -f "$report" ] || { echo "run-mutation: no report at $report"; exit 1; }

# One element per mutation: <mutation detected='true' status='KILLED' ...><mutatedClass>...</mutatedClass>.
# Nested classes count with their outer class. NO_COVERAGE is a survivor no test reaches; test
# strength leaves those out, as PIT's own summary does.
# The last line is the score without the mutations on lines that call dev.onceonly.internal.support.LogId:
# what PIT would leave out with LogId in avoidCallsTo ("no mutations on the same line as a match"),
# read off this run's source lines. The log IDs are an operator contract (docs/troubleshooting.md), so the first
# score, which counts them, is the one reported.
python3 - "$report" "$elapsed" <<'EOF'
import sys, xml.etree.ElementTree as ET
from collections import defaultdict
root = ET.parse(sys.argv[1]).getroot()
per = defaultdict(lambda: [0, 0, 0, 0, 0])  # generated, killed, covered; generated and killed on LogId lines
sources = {}
def calls_log_id(m):
    path = ('src/main/java/' + m.findtext('mutatedClass').split('$')[0].rsplit('.', 1)[0].replace('.', '/')
            + '/' + m.findtext('sourceFile'))
    if path not in sources:
        sources[path] = open(path, encoding='utf-8').read().split('\n')
    return 'LogId.' in sources[path][int(m.findtext('lineNumber')) - 1]
for m in root.iter('mutation'):
    cls = m.findtext('mutatedClass').split('$')[0].rsplit('.', 1)[-1]
    killed = m.get('detected') == 'true'  # killed, or timed out / crashed: PIT's "detected"
    v = per[cls]
    v[0] += 1
    v[1] += killed
    v[2] += m.get('status') != 'NO_COVERAGE'
    if calls_log_id(m):
        v[3] += 1
        v[4] += killed
def pct(k, g):
    return 100 * k / max(g, 1)
print(f"{'class':<22} {'mutations':>9} {'killed':>7} {'score':>6}   {'without LogId lines':>19}")
for cls, (g, k, c, lg, lk) in sorted(per.items()):
    print(f"{cls:<22} {g:>9} {k:>7} {pct(k, g):>5.0f}%   {k - lk:>8}/{g - lg:<5} {pct(k - lk, g - lg):>4.0f}%")
g, k, c, lg, lk = (sum(v[i] for v in per.values()) for i in range(5))
print(f"run-mutation: {g} mutations generated, {k} killed, score {pct(k, g):.1f}%, "
      f"test strength {pct(k, c):.1f}% ({c} covered), {sys.argv[2]} s")
print(f"run-mutation: without the {lg} on lines calling LogId (as with LogId in avoidCallsTo): "
      f"{g - lg} mutations, {k - lk} killed, score {pct(k - lk, g - lg):.1f}%")
EOF
