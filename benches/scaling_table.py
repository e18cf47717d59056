#!/usr/bin/env python3
"""The table of benches/scaling.sh: one row per run of scaling.jsonl, each against the run of
the same case on one GPU (the single process where there is one, else one rank).

    scaling_table.py SCALING.JSONL STEPS CARD
"""
import json
import re
import sys

RANK = re.compile(
    r"rank (\d+): .*?([\d.]+) s wall(?: \([\d.]+ s before the first block\))?, (?:([\d.]+) s on the device .*?([\d.]+) s stepping on "
    r"the device, ([\d.]+) s of halo exchanges of which ([\d.]+) s not hidden|([\d.]+) s "
    r"pipeline, ([\d.]+) s halo exchange)"
)


def times(r):
    """(stepping, wall, exchange, exposed) of a run: the slowest rank's for ranks."""
    notes = [RANK.search(n) for n in r.get("notes", [])]
    ranks = [m for m in notes if m]
    if not ranks:
        st = r["stages"]
        return st.get("stepping") or st["kernel"], r["wall_seconds"], 0.0, 0.0
    step = wall = exch = exposed = 0.0
    for m in ranks:
        wall = max(wall, float(m.group(2)))
        if m.group(4) is not None:
            step = max(step, float(m.group(4)))
            exch = max(exch, float(m.group(5)))
            exposed = max(exposed, float(m.group(6)))
        else:
            p, x = float(m.group(7)), float(m.group(8))
            step = max(step, p + x)
            exch, exposed = max(exch, x), max(exposed, x)
    return step, wall, exch, exposed


def case(r):
    """The case whose one-GPU run a row compares with: the host variants share theirs."""
    return {"host": "fit", "ooc-host": "ooc"}.get(r["kind"], r["kind"])


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    steps, card = int(sys.argv[2]), sys.argv[3]
    base = {}
    rows = [r for r in rows if not r["kind"].endswith("-warm")]
    for r in rows:
        key = case(r)
        if r["ranks"] in (0, 1) and key not in base:
            base[key] = times(r)
    print(f"\ncard: {card}; stepping and wall against one GPU of the same case, same machine")
    print("| case | GPUs | PACC_HALO | shape | wall s | stepping s/step | Gpt/s | stepping vs 1 GPU"
          " | wall vs 1 GPU | exchange s (not hidden) | not hidden / stepping |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        step, wall, exch, exposed = times(r)
        pts = 1
        for n in r["shape"]:
            pts *= n - 8
        b = base.get(case(r))
        gpus = max(r["ranks"], 1)
        if r["kind"] == "weak" and b:
            # Weak: the same work per GPU, so time(1) / time(n) is the efficiency.
            vs = f"efficiency {b[0] / step:.2f}"
            vsw = f"{b[1] / wall:.2f}"
        elif b:
            vs, vsw = f"{b[0] / step:.2f}x", f"{b[1] / wall:.2f}x"
        else:
            vs = vsw = "-"
        who = "1p" if r["ranks"] == 0 else str(gpus)
        share = f"{exposed / step:.1%}" if step > 0 else "-"
        print(f"| {r['kind']} | {who} | {r['halo']} | {'x'.join(map(str, r['shape']))} | "
              f"{wall:.2f} | {step / steps:.5f} | {pts * steps / step / 1e9:.1f} | {vs} | {vsw} | "
              f"{exch:.3f} ({exposed:.3f}) | {share} |")


if __name__ == "__main__":
    main()
