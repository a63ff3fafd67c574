#!/usr/bin/env python3
"""Benchmarks of the rngd daemon against rng-tools, side by side in the same run.

  pipeline   FIPS-tested throughput from a fast file source to a pipe (-o /dev/stdout);
             rng-tools' pipeline is bound by its FIPS code, so rng-tools5's rngtest speed on
             the same data in the same run stands in for it (upstream rngd 6.17 measured
             19.8 MB/s on this machine class, quoted beside it)
  two        the same with two file sources at once (reader threads on both cores)
  first      time from exec to the first credited RNDADDENTROPY on the real /dev/hwrng
  idle       CPU seconds used in --idle-seconds (default 60) on the real /dev/hwrng
  stop       stop latency over 20 starts and stops of each, taking turns, beside the floor
             (a process that does nothing; rngd by SIGKILL); peak RSS

Usage: bench/daemon.py [--rngd build/plain/rngd] [--size-mib 256] [--idle-seconds 60]
                       [--only pipeline,two,first,idle,stop]
Needs root for 'first', 'idle' and 'stop' (the kernel sink); installs rng-tools5 if missing.
"""
import argparse
import glob
import random
import os
import resource
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PEER_RNGD = "/usr/sbin/rngd"
PEER_RNGTEST = "/usr/bin/rngtest"
UPSTREAM_PIPELINE_MBS = 19.8
FIRST_REST_S = 3
FIRST_ROUNDS = 10
SAME_DEVICE_PEER = "rng-tools5 rngd -d 1 (hwrng only)"
OURS_DEFAULTS = "rngd (defaults: hwrng + RDSEED, or RDRAND without it)"
METER_STEP_S = 0.16  # a start below this met the meter's fast state (about 0.11 s, else 0.21 s)


def ensure_peer():
    if os.path.exists(PEER_RNGTEST) and os.path.exists(PEER_RNGD):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "rng-tools5"], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def memory_dir(mib):
    """/dev/shm when it holds both input files: a file in the page cache of a disk can still
    be evicted and read back (virtio-blk reads showed up in profiles here), tmpfs cannot."""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > (2 * mib + 64) << 20:
            return "/dev/shm"
    except OSError:
        pass
    return None


def make_random_file(d, name, mib):
    path = os.path.join(d, name)
    with open("/dev/urandom", "rb") as src, open(path, "wb") as dst:
        for _ in range(mib):
            dst.write(src.read(1 << 20))
    # Warm the page cache so that both programs read from memory.
    with open(path, "rb") as f:
        while f.read(1 << 22):
            pass
    return path


def time_cmd(argv, stdin=None):
    t0 = time.monotonic()
    p = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.monotonic() - t0, p


def rngd_pipeline(rngd, files):
    argv = [rngd, "-f", "-q", "-x", "hwrng", "-x", "via", "-x", "rdseed", "-x", "rdrand", "-o",
            "/dev/stdout"]
    for i, f in enumerate(files):
        argv += ["-O", f"file:in{i}:path:{f}"]
    # Write to a real pipe read by cat, as a user piping tested output would.
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p1 = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p2 = subprocess.Popen(["cat"], stdin=p1.stdout, stdout=subprocess.DEVNULL)
    p1.stdout.close()
    _, err = p1.communicate()
    p2.wait()
    dt = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p1.returncode != 0:
        sys.exit(f"rngd failed ({p1.returncode}): {err.decode(errors='replace')}")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return dt, cpu / dt


def peer_rngtest(path):
    with open(path, "rb") as f:
        dt, _ = time_cmd([PEER_RNGTEST, "-p"], stdin=f)
    return dt


def our_rngtest_parallel(rngtest, files):
    """Seconds for our rngtest to test each file, all at once (one process per file)."""
    t0 = time.monotonic()
    procs = []
    for f in files:
        with open(f, "rb") as inp:
            procs.append(subprocess.Popen([rngtest], stdin=inp, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
    for p in procs:
        p.wait()
    return time.monotonic() - t0


def bench_pipelines(args, tmp, which, runs=5):
    """One and two file sources, interleaved run by run so that the machine's moods
    (a VM's neighbours) fall on both alike; the peer on the same data in the same runs."""
    size = args.size_mib * (1 << 20)
    a = make_random_file(tmp, "a.bin", args.size_mib)
    two = "two" in which
    b = make_random_file(tmp, "b.bin", args.size_mib) if two else None
    rngtest = os.path.join(os.path.dirname(os.path.abspath(args.rngd)), "rngtest")
    res = {k: [] for k in ("one", "one_busy", "two", "two_busy", "peer", "cpu1", "cpu2")}
    for _ in range(runs):
        if "pipeline" in which or two:
            dt, busy = rngd_pipeline(args.rngd, [a])
            res["one"].append(size / dt / 1e6)
            res["one_busy"].append(busy)
        if two:
            dt, busy = rngd_pipeline(args.rngd, [a, b])
            res["two"].append(2 * size / dt / 1e6)
            res["two_busy"].append(busy)
            if os.access(rngtest, os.X_OK):
                res["cpu1"].append(size / our_rngtest_parallel(rngtest, [a]) / 1e6)
                res["cpu2"].append(2 * size / our_rngtest_parallel(rngtest, [a, b]) / 1e6)
        res["peer"].append(size / peer_rngtest(a) / 1e6)
    med = {k: statistics.median(v) for k, v in res.items() if v}
    runs_of = lambda k: ", ".join(f"{x:.1f}" for x in res[k])
    p = med["peer"]
    for key, label in (("one", "one file source"), ("two", "two file sources")):
        if key not in med or (key == "one" and "pipeline" not in which):
            continue
        o = med[key]
        print(f"pipeline, {label}, FIPS on, -o pipe: rngd {o:.1f} MB/s (median of "
              f"{runs_of(key)}); CPU busy (rngd + its pipe reader): "
              f"{med[key + '_busy']:.2f} of {os.cpu_count()} cores")
        print(f"  rng-tools5 rngtest -p on the same data: {p:.1f} MB/s; "
              f"upstream rngd 6.17 reference: {UPSTREAM_PIPELINE_MBS} MB/s")
        print(f"  ratio rngd / rng-tools (same run): {o / p:.1f}x; "
              f"vs the 19.8 MB/s reference: {o / UPSTREAM_PIPELINE_MBS:.1f}x")
    if two:
        per_run = [t / o for t, o in zip(res["two"], res["one"])]
        print(f"  two sources / one source: {med['two'] / med['one']:.2f}x (medians; per run "
              + ", ".join(f"{x:.2f}" for x in per_run) + ")")
        if "cpu2" in med:
            print(f"  what this machine gives two CPU-bound processes: our rngtest on both "
                  f"files at once {med['cpu2']:.1f} MB/s, on one {med['cpu1']:.1f} MB/s: "
                  f"{med['cpu2'] / med['cpu1']:.2f}x")


def strace_first_feed(argv, timeout, count_bytes=True):
    """Seconds from execve to the first credited RNDADDENTROPY, and the bytes read from
    /dev/hwrng before it (a FIPS 140-2 block is 2500 bytes), from strace -ff -ttt: one log
    per thread, so that no call is split into "unfinished" and "resumed" halves."""
    call = re.compile(r"(\d+\.\d+) (\w+)\((.*)\) += (-?\d+)")

    def scan(logs):
        calls = []
        for path in logs:
            with open(path) as f:
                for line in f:
                    m = call.match(line.rstrip())
                    if m:
                        calls.append((float(m.group(1)), m.group(2), m.group(3), int(m.group(4))))
        # The threads share one fd table: follow it in time order (an fd number is reused
        # once closed).
        start, hw_fds, hw = None, set(), 0
        for t, name, args_, ret in sorted(calls):
            fd = args_.split(",")[0]
            if name == "execve" and ret == 0 and start is None:
                start = t
            elif name == "openat" and '"/dev/hwrng"' in args_ and ret >= 0:
                hw_fds.add(str(ret))
            elif name == "close":
                hw_fds.discard(fd)
            elif name == "read" and ret > 0 and fd in hw_fds:
                hw += ret
            elif name == "ioctl" and "RNDADDENTROPY" in args_ and "buf_size=0" not in args_ \
                    and ret == 0:
                return start, t, hw
        return start, None, hw

    with tempfile.TemporaryDirectory(suffix=".strace") as d:
        base = os.path.join(d, "log")
        # Timing traces execve and ioctl only, through a seccomp filter: every other call
        # runs unstopped. Stopping at every call would wake strace once per call of any
        # thread, and a thread woken beside a reader inside the hwrng core makes that read
        # sleep a jiffy per 64-byte chunk (kernel-interfaces.md §2.1): a multi-threaded
        # daemon would pay for the tracer. Counting bytes needs the reads: a separate run.
        calls = "execve,ioctl,openat,read,close" if count_bytes else "execve,ioctl"
        p = subprocess.Popen(["strace", "-ff", "--seccomp-bpf", "-ttt", "-e", "trace=" + calls,
                              "-o", base] + argv, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        start = first = None
        hw_bytes = 0
        while time.monotonic() < deadline and first is None:
            time.sleep(0.05)
            logs = sorted(glob.glob(base + ".*"))
            start, first, hw_bytes = scan(logs)
        # SIGTERM to strace would only detach it: stop the traced daemon by its own PID,
        # the smallest of the logs' (the process before its threads).
        pids = sorted(int(x.rsplit(".", 1)[1]) for x in glob.glob(base + ".*"))
        if pids:
            try:
                os.kill(pids[0], signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        return (None, 0) if first is None or start is None else (first - start, hw_bytes)


def hwrng_holders():
    """Other processes with /dev/hwrng open: their reads would compete with the ones measured."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/hwrng" for fd in fds):
                with open(f"/proc/{pid}/comm") as f:
                    found.append(f"{pid} ({f.read().strip()})")
        except OSError:
            continue
    return found


def warn_hwrng_holders(what):
    holders = hwrng_holders()
    if holders:
        print(f"{what}: warning: /dev/hwrng is open in " + ", ".join(holders)
              + "; their reads compete with the ones measured")


def condition_device():
    """Read 4 KiB of /dev/hwrng, as every start's predecessor. The host's meter remembers:
    2504 bytes read 3 s after a daemon ran took 0.10 s here, 3 s after a plain 2.5 kB read
    0.20 s, so each start must follow the same history."""
    fd = os.open("/dev/hwrng", os.O_RDONLY)
    try:
        left = 4096
        while left > 0:
            left -= len(os.read(fd, left))
    finally:
        os.close(fd)


def bench_first(args):
    # The host meters the device (a token bucket of about 1 KiB per 100 ms) and the time a
    # start needs depends on what read it before: each start follows the same read and the
    # same rest, and the daemons take turns. rng-tools5 also reads RDRAND (its "drng"
    # source); "-d 1" leaves it the same device as rngd, whose rdseed/rdrand are left out.
    runs = {"rngd": [args.rngd, "-f", "-q", "-x", "rdseed", "-x", "rdrand"],
            SAME_DEVICE_PEER: [PEER_RNGD, "-f", "-d", "1", "-r", "/dev/hwrng"],
            "rng-tools5 rngd (hwrng + RDRAND)": [PEER_RNGD, "-f", "-r", "/dev/hwrng"],
            # Each with its defaults: ours adds RDSEED (or RDRAND where there is none),
            # FIPS-tested before it is credited; rng-tools5 credits RDRAND untested.
            OURS_DEFAULTS: [args.rngd, "-f", "-q"]}
    res = {name: [] for name in runs}
    order = list(runs.items())
    for _ in range(FIRST_ROUNDS):
        # A random order each round: what the previous daemon left in the device weighs
        # on each alike.
        random.shuffle(order)
        for name, argv in order:
            # The meter refills in steps (reads of 2500 B take 0.1 or 0.2 s): a random
            # part of the rest keeps a fixed rhythm from giving one daemon the bad phase.
            condition_device()
            time.sleep(FIRST_REST_S + random.random() * 0.2)
            res[name].append(strace_first_feed(argv, 10, count_bytes=False)[0])
    hw = {}
    for name, argv in runs.items():
        condition_device()
        time.sleep(FIRST_REST_S)
        hw[name] = strace_first_feed(argv, 10)[1]
    print("first credited injection on the real /dev/hwrng:")
    for name, xs in res.items():
        print(f"  {name}: " + ", ".join("none" if x is None else f"{x * 1000:.0f}" for x in xs)
              + f" ms; {hw[name]} B read from /dev/hwrng before it")
    print("  (a FIPS 140-2 test needs 2500 bytes; fewer read from the device means the credited"
          " data came from elsewhere or was untested)")
    med = {name: statistics.median(x for x in xs if x is not None)
           for name, xs in res.items() if any(x is not None for x in xs)}
    ours = med.get("rngd")
    for name, m in med.items():
        if name not in ("rngd", OURS_DEFAULTS) and ours:
            print(f"  median ratio {name} / rngd: {m / ours:.2f}x")
    peer, mine = med.get("rng-tools5 rngd (hwrng + RDRAND)"), med.get(OURS_DEFAULTS)
    if peer and mine:
        print(f"  median ratio rng-tools5 rngd (hwrng + RDRAND) / {OURS_DEFAULTS}: "
              f"{peer / mine:.2f}x")
    # The meter has two states that last about 14 s each, for any reader (a plain read of
    # 2504 bytes takes 0.10 s in one, 0.20 s in the other), and ten rounds sample them
    # unevenly. Rounds where both daemons met the same state compare the daemons alone.
    same = [o - p for o, p in zip(res["rngd"], res[SAME_DEVICE_PEER])
            if o is not None and p is not None and (o < METER_STEP_S) == (p < METER_STEP_S)]
    fast = lambda xs: sum(1 for x in xs if x is not None and x < METER_STEP_S)
    print(f"  meter state: rngd {fast(res['rngd'])}/{len(res['rngd'])} starts in the fast one, "
          f"{SAME_DEVICE_PEER} {fast(res[SAME_DEVICE_PEER])}/{len(res[SAME_DEVICE_PEER])}")
    if same:
        print(f"  rounds where both met the same state: {len(same)}; rngd minus "
              f"{SAME_DEVICE_PEER}: median {statistics.median(same) * 1000:+.0f} ms")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def cpu_ms_precise(pid):
    """CPU time in ms of the live threads, from the scheduler's ns counters (schedstat):
    /proc/PID/stat's ticks round each of utime and stime down to 10 ms."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e6


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def bench_idle(args):
    procs = {
        "rngd": subprocess.Popen([args.rngd, "-f", "-q"], stderr=subprocess.DEVNULL),
        "rng-tools5 rngd": subprocess.Popen([PEER_RNGD, "-f", "-r", "/dev/hwrng"],
                                            stderr=subprocess.DEVNULL),
    }
    time.sleep(args.idle_seconds)
    res = {}
    for name, p in procs.items():
        res[name] = (cpu_seconds(p.pid), cpu_ms_precise(p.pid), peak_rss_kib(p.pid), p.poll())
        p.send_signal(signal.SIGTERM)
    for p in procs.values():
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for name, (cpu, ms, rss, rc) in res.items():
        state = "running" if rc is None else f"exited {rc}"
        print(f"idle {args.idle_seconds} s on the real /dev/hwrng: {name}: {cpu:.2f} CPU-s "
              f"({cpu * 60 / args.idle_seconds:.3f} per minute; {ms:.1f} ms by schedstat), "
              f"peak RSS {rss / 1024:.1f} MiB ({rss:,} kB, {state})")


def stop_latency(argv, settle, sig=signal.SIGTERM):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(settle)
    rss = peak_rss_kib(p.pid) if p.poll() is None else 0
    # A blocking wait (Popen.wait with a timeout polls in growing steps: 0.5, 1, 2 ... ms),
    # with a timer that kills a daemon that does not stop within 5 s.
    killer = threading.Timer(5, p.kill)
    killer.start()
    t0 = time.monotonic()
    p.send_signal(sig)
    p.wait()
    dt = time.monotonic() - t0
    killer.cancel()
    hung = sig != signal.SIGKILL and p.returncode == -signal.SIGKILL
    return (None if hung else dt), rss


STOP_ROUNDS = 20
STOP_FLOOR = "floor: sleep 60"


def bench_stop(args):
    """Starts and stops taking turns, so that a slow moment of the VM weighs on each alike.
    Beside the two daemons, the floor: the same start, signal and wait for a process that
    does nothing (sleep; SIGTERM's default action ends it), and rngd ended by SIGKILL with
    nothing to undo (--kernel-hwrng=leave, no status file): what the kernel's exit of
    rngd's threads and mappings costs before any of rngd's own stop runs."""
    variants = (
        ("rngd", [args.rngd, "-f", "-q"], signal.SIGTERM),
        ("rng-tools5 rngd", [PEER_RNGD, "-f", "-r", "/dev/hwrng"], signal.SIGTERM),
        (STOP_FLOOR, ["sleep", "60"], signal.SIGTERM),
        ("floor: rngd by SIGKILL, nothing to undo",
         [args.rngd, "-f", "-q", "--kernel-hwrng=leave", "-O", "rngd:status-file:"],
         signal.SIGKILL),
    )
    runs = {name: [] for name, _, _ in variants}
    for _ in range(STOP_ROUNDS):
        for name, argv, sig in variants:
            runs[name].append(stop_latency(argv, 0.3, sig))

    def median(name):
        ok = [r[0] for r in runs[name] if r[0] is not None]
        return statistics.median(ok) if ok else float("nan")

    floor = median(STOP_FLOOR)
    for name, _, _ in variants:
        lat = [r[0] for r in runs[name]]
        ok = [x for x in lat if x is not None]
        hung = len(lat) - len(ok)
        med = median(name)
        above = "" if name == STOP_FLOOR else f" ({(med - floor) * 1000:+.1f} ms on sleep's)"
        worst = max(ok) * 1000 if ok else float("nan")
        rss = [r[1] for r in runs[name]]
        print(f"stop latency, {STOP_ROUNDS} starts and stops (taking turns): {name}: max "
              f"{worst:.1f} ms, median {med * 1000:.1f} ms{above}, "
              f"{sum(1 for x in ok if x < 0.1)}/{STOP_ROUNDS} under 100 ms"
              + (f", {hung} did not stop within 5 s" if hung else "")
              + f"; peak RSS {max(rss) / 1024:.1f} MiB (kB: max "
              f"{max(rss):,}, median {int(statistics.median(rss)):,})")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--rngd", default=os.path.join(top, "build/plain/rngd"))
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--only", default="pipeline,two,first,idle,stop")
    args = ap.parse_args()
    which = set(args.only.split(","))
    if not os.access(args.rngd, os.X_OK):
        sys.exit(f"no rngd at {args.rngd}: build first (scripts/build plain)")
    ensure_peer()
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory(prefix="rngd-bench-", dir=memory_dir(args.size_mib)) as tmp:
        if "pipeline" in which or "two" in which:
            bench_pipelines(args, tmp, which)
    for name, fn in (("first", bench_first), ("idle", bench_idle), ("stop", bench_stop)):
        if name not in which:
            continue
        if not root or not os.access("/dev/hwrng", os.R_OK):
            print(f"{name}: skipped (needs root and a readable /dev/hwrng)")
            continue
        warn_hwrng_holders(name)
        fn(args)


if __name__ == "__main__":
    main()
