#!/usr/bin/env bash
# Multi-GPU scaling of acoustic `propagate_sponge` over MPI ranks (issue 14): one rank per GPU.
#
#   benches/scaling.sh [EXE] [OUTDIR]
#
# EXE: the acoustic example built with `cargo build --release --features mpi --example acoustic`
# (default target/release/examples/acoustic). Writes one JSON line per run to OUTDIR/scaling.jsonl
# (default benches/results/scaling-<date>) and a table to OUTDIR/scaling.txt.
#
# Strong scaling: one 2000^3 domain (4 arrays, 128 GB: larger than one GPU) on 1, 2 and 4 GPUs.
# Weak scaling: 1400 x 1800 x 1800 planes per GPU (out of core on each GPU), Z grows with the ranks.
# Rank r uses GPU (local rank mod device count); each rank prints per-rank pipeline and halo
# exchange times in the report's notes (rank 0 prints them all).
set -euo pipefail
exe=${1:-target/release/examples/acoustic}
out=${2:-benches/results/scaling-$(date -u +%F)}
steps=${STEPS:-144}
gpus=$(nvidia-smi -L | wc -l)
mkdir -p "$out"
: > "$out/scaling.jsonl"
mpi=(mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH)

run() { # kind ranks shape
    local kind=$1 n=$2 shape=$3
    echo "== $kind: $n rank(s), shape $shape, $steps steps" | tee -a "$out/scaling.txt"
    "${mpi[@]}" -n "$n" "$exe" --shape "$shape" --steps "$steps" --sponge 20 --backend cuda --json \
        2> >(tee -a "$out/scaling.txt" >&2) | tail -n 1 |
        sed "s/^{/{\"kind\":\"$kind\",\"ranks\":$n,/" >> "$out/scaling.jsonl"
}

for n in 1 2 4; do
    (( n <= gpus )) || { echo "skipping $n ranks: only $gpus GPUs" | tee -a "$out/scaling.txt"; continue; }
    run strong "$n" 2000,2000,2000
    run weak "$n" "$((1400 * n)),1800,1800"
done

# s/step, Gpt/s and speed-up / efficiency against 1 rank, from the JSON lines.
python3 - "$out/scaling.jsonl" "$steps" <<'EOF' | tee -a "$out/scaling.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
steps = int(sys.argv[2])
base = {}
print("| kind | ranks | shape | s/step | Gpt/s | vs 1 rank |")
print("|---|---|---|---|---|---|")
for r in rows:
    s = r["wall_seconds"] / steps
    pts = 1
    for n in r["shape"]:
        pts *= n - 8
    base.setdefault(r["kind"], (s, pts))
    b, _ = base[r["kind"]]
    # strong: the same domain, so time(1) / time(n) is the speed-up; weak: the same work per
    # GPU, so time(1) / time(n) is the efficiency.
    ratio = b / s
    what = "speed-up" if r["kind"] == "strong" else "efficiency"
    print(f"| {r['kind']} | {r['ranks']} | {r['shape']} | {s:.4f} | {pts / s / 1e9:.1f} | {what} {ratio:.2f} |")
EOF
