#!/usr/bin/env bash
# Multi-GPU scaling of acoustic `propagate_sponge` (issue 33): one MPI rank per GPU, each rank's
# slab resident on its GPU with the halos GPU to GPU through NCCL (the default where it can be),
# against the single-process run of the same domain on the same machine.
#
#   benches/scaling.sh [EXE] [OUTDIR]
#
# EXE: the acoustic example built with `cargo build --release --features mpi --example acoustic`
# (default target/release/examples/acoustic). Writes one JSON line per run to
# OUTDIR/scaling.jsonl (default benches/results/scaling-<date>), every run's output to
# OUTDIR/logs/, and the table to OUTDIR/scaling.txt. Environment: STEPS (default 144), CASES
# (default "fit beyond weak host"), RANKS (default "1 2 4"; counts above the GPUs are skipped).
#
# Cases, each on 1, 2 (and 4) GPUs beside the single process ("1p", no mpirun):
#   fit     one domain that fits one GPU (1200^3): strong scaling in core;
#   beyond  one domain larger than one GPU's memory, within two (1800^3 on 80 GB cards,
#           2100^3 on 141 GB ones): the single process runs it out of core;
#   weak    1200 x 1600 x 1600 planes per GPU;
#   host    the fit domain with PACC_HALO=host: the host exchange between blocks, as before;
#   ooc     out of core on every rank: the fit domain with every process planning as if its GPU
#           had DEVMEM GB (default 6; `--device-memory`), so no slab stays on its GPU and the
#           halos between blocks are relayed GPU to GPU through NCCL;
#   ooc-host  the same with PACC_HALO=host (halos through host MPI), as before;
#   sN      strong scaling on N^3 (e.g. s1600, s1800, s2000: the issue's table), without the
#           single process's warm-up run (its wall then includes its first-run tuning; its
#           stepping does not).
# "stepping" is the time of the steps on the device (the report's stepping span: first kernel
# to last; for ranks the slowest rank's; for the host path pipeline + exchange); "wall" is the
# call's wall (the slowest rank's).
set -euo pipefail
exe=${1:-target/release/examples/acoustic}
out=${2:-benches/results/scaling-$(date -u +%F)}
steps=${STEPS:-144}
devmem=${DEVMEM:-6}
cases=${CASES:-fit beyond weak host}
ranks_list=${RANKS:-1 2 4}
gpus=$(nvidia-smi -L | wc -l)
mem_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -n 1)
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
beyond=1800
(( mem_mib > 100000 )) && beyond=2100
mkdir -p "$out/logs"
: > "$out/scaling.jsonl"
{
    echo "card: $card x $gpus ($mem_mib MiB each); $(date -u +%FT%TZ); steps $steps"
    nvidia-smi topo -m 2>/dev/null | head -n $((gpus + 1)) || true
} | tee "$out/scaling.txt"
# NVLink multicast off in every process (shared machines); rank r uses GPU r.
export NCCL_NVLS_ENABLE=0
mpi=(mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x PACC_HALO)

one() { # kind ranks(0: single process) shape [halo]
    local kind=$1 n=$2 shape=$3 halo=${4:-auto} log
    log="$out/logs/$kind-$n-${shape//,/x}.log"
    echo "== $kind: ${n/#0/1p} shape $shape, $steps steps, PACC_HALO=$halo" | tee -a "$out/scaling.txt"
    local cmd=("$exe" --shape "$shape" --steps "$steps" --sponge 20 --backend cuda --json)
    [[ $kind == ooc* ]] && cmd+=(--device-memory "$devmem")
    if (( n == 0 )); then
        PACC_HALO=$halo "${cmd[@]}" > "$log" 2>&1 || { echo "failed: see $log"; return 0; }
    else
        PACC_HALO=$halo "${mpi[@]}" -n "$n" "${cmd[@]}" > "$log" 2>&1 || { echo "failed: see $log"; return 0; }
    fi
    grep '^{' "$log" | tail -n 1 |
        sed "s/^{/{\"kind\":\"$kind\",\"ranks\":$n,\"halo\":\"$halo\",/" >> "$out/scaling.jsonl"
    grep -E '^  note: rank|wall .* stages' "$log" | tee -a "$out/scaling.txt" || true
}

# Warm the PTX and rate caches (the runs below are warm, as a user's second run is).
"$exe" --size 256 --steps 8 --sponge 20 --backend cuda > "$out/logs/warm-1p.log" 2>&1 || true
(( gpus >= 2 )) && "${mpi[@]}" -n 2 "$exe" --size 256 --steps 8 --sponge 20 --backend cuda \
    > "$out/logs/warm-2.log" 2>&1 || true

for kind in $cases; do
    case $kind in
        fit|host|ooc|ooc-host) shape=1200,1200,1200 ;;
        beyond) shape=$beyond,$beyond,$beyond ;;
        s[0-9]*) n3=${kind#s}; shape=$n3,$n3,$n3 ;;
        weak) shape="" ;;
    esac
    halo=auto
    [[ $kind == host || $kind == ooc-host ]] && halo=host
    if [[ $kind != host && $kind != ooc-host && $kind != weak ]]; then
        # The single process tunes its kernels' shape for this shape on its first run: warm it.
        [[ $kind == s[0-9]* ]] || one "$kind-warm" 0 "$shape" "$halo"
        one "$kind" 0 "$shape" "$halo"
    fi
    for n in $ranks_list; do
        (( n <= gpus )) || { echo "skipping $n ranks: only $gpus GPUs" | tee -a "$out/scaling.txt"; continue; }
        [[ ( $kind == host || $kind == ooc* ) && $n == 1 ]] && continue
        # One GPU cannot hold the beyond domain: its one-GPU run is the single process.
        [[ $kind == beyond && $n == 1 ]] && continue
        [[ $kind == weak ]] && shape="$((1200 * n)),1600,1600"
        one "$kind" "$n" "$shape" "$halo"
    done
done

python3 "$(dirname "$0")/scaling_table.py" "$out/scaling.jsonl" "$steps" "$card" | tee -a "$out/scaling.txt"
