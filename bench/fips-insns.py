#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Instructions per FIPS-tested block (20000 bits) of a cross-built rngtest, under qemu-user.

bench/fips-insns.py [--blocks N] [--engine NAME]... ARCH...   (ARCH: i386 armhf arm64 s390x;
the builds of scripts/cross in build/cross-ARCH)

Debian's qemu-user-static has no TCG plugins (no -plugin, no libinsn.so), so the count
comes from qemu's own log: `-d in_asm,exec,nochain` prints each translation block's guest
instructions once when it is translated (in_asm), and one line each time a block runs (exec;
nochain makes every run of a block go through the logging dispatcher). The instructions
executed are the sum over the runs of the length of the block run. rngtest is run on
10 and on 10 + N blocks of the same fixed pseudo-random input (no block fails, so no
failure path runs); the difference divided by N is the cost of one block, the start-up,
the loader and libc's set-up cancelling out. Exact and repeatable: the same binary and
input give the same count, whatever the machine's load.

--engine NAME (repeatable) runs rngtest with RNGD_FIPS_ENGINE=NAME (qemu-user passes its
environment to the guest): one line per architecture and engine, e.g. `--engine neon
--engine scalar arm64 armhf`. An engine a build does not have (rngtest's exit status 10) is
reported as such; without --engine, each build's own choice ("auto").
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

QEMU = {"i386": "qemu-i386-static", "armhf": "qemu-arm-static",
        "arm64": "qemu-aarch64-static", "s390x": "qemu-s390x-static"}
TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# in_asm: "IN: sym" then "0x0000...:  insn" lines (s390x, arm and x86 alike), a blank line
# ends the block. exec: "Trace 0: 0x... [flags/PC/...] sym".
IN_LINE = re.compile(r"^0x([0-9a-f]+):")
TRACE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


class NoEngine(Exception):
    """rngtest refused the engine: not in this build, or not on the emulated CPU."""


def count(arch, data, engine):
    env = dict(os.environ)
    env.pop("RNGD_FIPS_ENGINE", None)
    if engine != "auto":
        env["RNGD_FIPS_ENGINE"] = engine
    with tempfile.TemporaryDirectory() as d:
        inp = os.path.join(d, "in")
        log = os.path.join(d, "log")
        with open(inp, "wb") as f:
            f.write(data)
        prog = os.path.join(TOP, "build", "cross-" + arch, "rngtest")
        with open(inp, "rb") as f:
            r = subprocess.run([QEMU[arch], "-d", "in_asm,exec,nochain", "-D", log, prog],
                               stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, check=False)
        if r.returncode == 10:  # rngtest's usage error: a bad RNGD_FIPS_ENGINE
            raise NoEngine()
        sizes, total, start, n = {}, 0, None, 0
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith("Trace "):
                    m = TRACE.match(line)
                    if m:
                        total += sizes.get(int(m.group(1), 16), 0)
                    continue
                if line.startswith("IN:"):
                    start, n = None, 0
                    continue
                m = IN_LINE.match(line)
                if m:
                    if start is None:
                        start = int(m.group(1), 16)
                    n += 1
                    sizes[start] = n
        return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=100)
    ap.add_argument("--engine", action="append", metavar="NAME",
                    help="RNGD_FIPS_ENGINE for the guest (repeatable; default: auto)")
    ap.add_argument("archs", nargs="+", choices=sorted(QEMU))
    a = ap.parse_args()
    rnd = random.Random(20000)
    data = bytes(rnd.getrandbits(8) for _ in range(8 + 2500 * (10 + a.blocks)))
    print(f"{'arch':8} {'engine':8} {'insns/block':>12} {'insns/bit':>10}"
          f"  (rngtest, {a.blocks} blocks)")
    for arch in a.archs:
        for engine in a.engine or ["auto"]:
            try:
                few = count(arch, data[:8 + 2500 * 10], engine)
                many = count(arch, data, engine)
            except NoEngine:
                print(f"{arch:8} {engine:8} no such engine in this build or on this CPU")
                continue
            if not few or many <= few:
                print(f"{arch:8} {engine:8} no count (is build/cross-{arch}/rngtest built?)",
                      file=sys.stderr)
                continue
            per = (many - few) / a.blocks
            print(f"{arch:8} {engine:8} {per:12.0f} {per / 20000:10.2f}")


if __name__ == "__main__":
    main()
