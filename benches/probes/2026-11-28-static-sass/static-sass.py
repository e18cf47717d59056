#!/usr/bin/env python3
"""Probe (2026-11-28, issue 35): the fused vector form's marching loop as machine code, without a
GPU. Compiles a committed generated source (tests/snapshots) with NVRTC the way the runtime
compiles a fused run's module (sm_90, --fmad=false, the fused run's macros), disassembles it,
and prints the opcodes of its longest loop with the registers and spills ptxas reports.

    python3 static-sass.py SNAPSHOT FUSE BX BY     # e.g. examples_snapshots__acoustic_propagate_cuda.snap 2 8 48

Needs NVRTC 13.0 and cuobjdump/nvdisasm (PyPI: nvidia-cuda-nvrtc==13.0.88,
nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm), found through NVRTC_LIB and PATH.
"""
import collections, ctypes, os, re, subprocess, sys, tempfile

def nvrtc(src, opts):
    lib = ctypes.CDLL(os.environ.get("NVRTC_LIB", "libnvrtc.so.13"))
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"probe.cu", 0, None, None) == 0
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    r = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if r != 0:
        sys.exit(log.value.decode())
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    return cubin.raw, log.value.decode()

def longest_loop(sass):
    ins = [(int(m.group(1), 16), m.group(2).strip())
           for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", sass)]
    loops = [(int(m.group(1), 16), a) for a, t in ins if "BRA" in t
             for m in [re.search(r"0x([0-9a-f]+)", t)] if m and int(m.group(1), 16) < a]
    lo, hi = max(loops, key=lambda l: l[1] - l[0])
    op = lambda t: re.sub(r"^@!?U?P[T0-9]+\s+", "", t).split()[0].split(".")[0]
    return collections.Counter(op(t) for a, t in ins if lo <= a <= hi)

def main():
    snap, fuse, bx, by = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    text = open(os.path.join("tests/snapshots", snap)).read().split("\n")
    seps = [i for i, l in enumerate(text) if l == "---"]
    src = "\n".join(text[seps[1] + 1:])
    pre = (f"#define PACC_FUSE {fuse}\n#define PACC_FBX 32\n#define PACC_FBY 16\n#define PACC_VX 1\n"
           f"#define PACC_FVX 4\n#define PACC_FVBX {bx}\n#define PACC_FVBY {by}\n")
    cubin, log = nvrtc(pre + src, ["--gpu-architecture=sm_90", "--fmad=false", "--ptxas-options=-v"])
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True).stdout
    name = f"_f{fuse}_vec"
    body = next(p for p in re.split(r"\n\s*Function : ", out)[1:] if p.split("\n", 1)[0].strip().endswith(name))
    h = longest_loop(body)
    m = re.search(name + r"' for 'sm_90'.*?(\d+) bytes spill stores, (\d+) bytes spill loads.*?Used (\d+) registers", log, re.S)
    print(f"{snap} fuse {fuse} block {bx}x{by}: loop {sum(h.values())} instructions, {m.group(3)} registers, "
          f"spills {m.group(1)}/{m.group(2)} B; " + ", ".join(f"{k} {v}" for k, v in h.most_common()))

main()
