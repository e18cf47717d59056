#!/usr/bin/env bash
# Call 5 (seventh session, issue 36): how soon NVML tells the compute capability, against cuInit.
bash benches/probes/2026-11-28-arch-before-init/run.sh $OUT/arch > $OUT/arch.log 2>&1; cat $OUT/arch.log
