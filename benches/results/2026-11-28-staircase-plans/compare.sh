#!/usr/bin/env bash
# Plans only (no device): the wavefront's link and device-to-device bytes from two `pacc`
# binaries over five programs, three shapes, 4 chunk counts, 4 depths, fuse 1/2/3, with and
# without the read-only ring. Usage: compare.sh OLD_PACC NEW_PACC > table.txt
old=$1 new=$2
for spec in "acoustic.rs propagate 3" "acoustic.rs propagate_sponge 3" "himeno.rs jacobi 3" \
            "laplace2d.rs jacobi 2" "grayscott.rs step 2"; do
  set -- $spec; file=src/models/$1; fn=$2; dim=$3
  for shape3 in 97,40,36 200,64,64 61,16,20; do
    shape=$shape3; [[ $dim == 2 ]] && shape=${shape3#*,}
    for d in 2 3 5 8; do for k in 1 3 4 8; do for fuse in 1 2 3; do
      fa=""; kk=$k; [[ $fuse != 1 ]] && { fa="--fuse $fuse"; kk=$((k * fuse)); }
      for ring in "" "--no-ring"; do
        a="plan $file --function $fn --shape $shape --chunks $d --block-steps $kk --scheme wavefront --steps $((kk * 2)) $fa $ring"
        o=$($old $a 2>&1 | grep "^total"); n=$($new $a 2>&1 | grep "^total")
        echo "$fn fuse=$fuse | $o | $n | $a"
      done
    done; done; done
  done
done
