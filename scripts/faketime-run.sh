#!/bin/sh
# Runs test files with every process's clock at a chosen UTC instant, to check that no test
# depends on the date or hour it runs at:
#   scripts/faketime-run.sh '2027-01-01 00:05:00' test/integration/reconcile-dead-hold.test.ts ...
# (npm run build first: tests run ./bin/tally from dist/). Not `faketime -f '@2027-01-01 00:05:00'`:
# that form starts the clock anew in every process it loads into — PostgreSQL, each vitest
# fork, each `tally` child — so they disagree by the seconds between their starts, and tests
# that compare the test's clock with the database's fail for that alone. The same instant as
# an offset from the real clock gives every process one clock, as on a real machine.
# PostgreSQL's lock and statement timeouts do not fire under libfaketime: tests that need
# them (reconcile-repair's event_dead cases) hang there, whatever the date.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 'YYYY-MM-DD HH:MM:SS' test-file..." >&2; exit 2; }
at=$1; shift
command -v faketime >/dev/null || { echo "faketime is missing: apt-get install -y faketime" >&2; exit 2; }
offset=$(( $(date -u -d "$at" +%s) - $(date -u +%s) ))
exec faketime -f "+${offset}s" npx vitest run "$@"
