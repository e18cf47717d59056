#!/usr/bin/env bash
# Call 8 (seventh session, issue 36): both directions through rings of 8 MiB .. 512 MiB.
PROBES=ring bash benches/probes/2026-11-28-bounce-host/run.sh $OUT/b > $OUT/ring.log 2>&1; echo rc=$?; cat $OUT/ring.log
