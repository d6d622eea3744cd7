#!/usr/bin/env bash
# Mutation testing of the decision code with PIT (the `mutation` profile in pom.xml says which classes
# and tests): compiles, runs PIT, then prints the totals and the score of each class from the XML
# report. About an hour for everything on two shared CPUs (56 min measured, 743 mutations); a run
# narrowed to a few classes takes 4 to 16 min. The HTML report is in target/pit-reports/index.html.
# Needs Redis on 127.0.0.1:6379 (one engine test uses it), no broker.
#   bench/run-mutation.sh [extra Maven arguments, e.g. -o, or -Dmutation.targetClasses=dev.onceonly.engine.RetryRule*]
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
python3 - "$report" "$elapsed" <<'EOF'
import sys, xml.etree.ElementTree as ET
from collections import defaultdict
root = ET.parse(sys.argv[1]).getroot()
per = defaultdict(lambda: [0, 0, 0])  # generated, killed, covered
for m in root.iter('mutation'):
    cls = m.findtext('mutatedClass').split('$')[0].rsplit('.', 1)[-1]
    status = m.get('status')
    per[cls][0] += 1
    per[cls][1] += m.get('detected') == 'true'  # killed, or timed out / crashed: PIT's "detected"
    per[cls][2] += status != 'NO_COVERAGE'
print(f"{'class':<22} {'mutations':>9} {'killed':>7} {'score':>6}")
for cls, (g, k, c) in sorted(per.items()):
    print(f"{cls:<22} {g:>9} {k:>7} {100 * k / g:>5.0f}%")
g = sum(v[0] for v in per.values()); k = sum(v[1] for v in per.values()); c = sum(v[2] for v in per.values())
print(f"run-mutation: {g} mutations generated, {k} killed, score {100 * k / g:.1f}%, "
      f"test strength {100 * k / max(c, 1):.1f}% ({c} covered), {sys.argv[2]} s")
EOF
