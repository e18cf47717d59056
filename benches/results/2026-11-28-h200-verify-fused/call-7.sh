#!/usr/bin/env bash
# Call 7 (seventh session, issue 36): host functions, host copies and the DMA on this host.
PROBES=host bash benches/probes/2026-11-28-bounce-host/run.sh $OUT/b > $OUT/bounce-host.log 2>&1; echo rc=$?; cat $OUT/bounce-host.log; nproc; lscpu | grep -E "Model name|Socket|Thread|Core|L3"
