#!/usr/bin/env python3
"""Soak test of the rngd daemon (issue 12): it runs for --minutes (default 10) feeding the
kernel from two sources under a steady stream of trouble, and prints every 10 s its RSS,
its open fds, its threads and its counters; at the end, whether they stayed flat after the
warm-up and whether every credited byte was tested, once.

  fast   a FIFO source with a writer that comes and goes: it writes random blocks as fast
         as they are taken for 3 s, closes, is gone for 1 s, comes back; one write in 10
         repeats its last two blocks (a replay: the reader's block that falls in them is
         rejected and counted as replayed; the detector sees block-aligned repeats only);
         the daemon reads it on demand, so "fast" means as fast as blocks are taken
  hwrng  the real /dev/hwrng, its backend switched to 'none' and back every 60 s
         (rng_current is restored on every exit path, signals included)
  SIGHUP every 5 s (a reload: new threads, the old ones retired), SIGUSR1 every 2 s.

Usage: bench/soak.py [--rngd build/plain/rngd] [--minutes 10] [--no-switch]
Needs root (the kernel sink, rng_current). Run it alone, under the hwrng lock:
  flock /tmp/rngd-hwrng.lock python3 bench/soak.py
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SYS = "/sys/class/misc/hw_random"
BLOCK = 2500


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


class Backend:
    """Switches rng_current to none and back; restore() puts back what was there."""

    def __init__(self):
        self.cur = read(f"{SYS}/rng_current")
        self.auto = read(f"{SYS}/rng_selected", "1") == "0"
        self.usable = (os.access(f"{SYS}/rng_current", os.W_OK) and self.cur not in ("", "none")
                       and "none" in read(f"{SYS}/rng_available").split())
        self.away = False

    def write(self, value):
        # With its newline: an empty write never reaches the kernel, and "" (automatic
        # choice) must.
        with open(f"{SYS}/rng_current", "w") as f:
            f.write(value + "\n")

    def switch(self):
        if not self.usable:
            return
        if self.away:
            self.restore()
        else:
            self.write("none")
            self.away = True

    def restore(self):
        if self.usable and self.away:
            self.write("" if self.auto else self.cur)
            if read(f"{SYS}/rng_current") != self.cur:  # the automatic choice differs
                self.write(self.cur)
            self.away = False


def writer(fifo, stop, counts):
    """Comes (3 s of blocks), goes (1 s), comes back; one write in 10 is a replay."""
    rng = random.Random()
    sent = []
    while not stop.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader at this moment (a reload): try again
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        end = time.monotonic() + 3
        try:
            while time.monotonic() < end and not stop.is_set():
                if len(sent) >= 2 and rng.random() < 0.1:
                    # The last two blocks again: whatever the reader's block grid (its
                    # seed shifts it by 4 bytes a set), one of its blocks repeats whole.
                    b = sent[-2] + sent[-1]
                    counts["replays_sent"] += 1
                else:
                    b = os.urandom(BLOCK)
                    sent = (sent + [b])[-2:]
                os.write(fd, b)
                counts["blocks_sent"] += 1
        except BrokenPipeError:
            if not stop.is_set():  # not the daemon's own exit at the end
                counts["sigpipe"] += 1
        finally:
            os.close(fd)
        stop.wait(1)


def proc_figures(pid):
    rss = threads = 0
    for line in read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = 0
    return rss, fds, threads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rngd", default="build/plain/rngd")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--no-switch", action="store_true", help="leave the hwrng backend alone")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("soak: needs root (the kernel sink, rng_current)")

    backend = Backend()
    if a.no_switch:
        backend.usable = False
    t = tempfile.mkdtemp(prefix="rngd-soak.")
    fifo, status, conf = f"{t}/fast.fifo", f"{t}/status.json", f"{t}/soak.conf"
    os.mkfifo(fifo)
    with open(conf, "w") as f:
        f.write(f"[rngd]\nfeed-interval = 1\nfeed-bytes = 256\nstatus-file = {status}\n"
                f"status-interval = 1\n[source hwrng]\n[source via]\nenabled = no\n"
                f"[source rdseed]\nenabled = no\n[source rdrand]\nenabled = no\n"
                f"[source file:fast]\npath = {fifo}\nquality = 512\n")
    log = open(f"{t}/rngd.log", "w")
    proc = subprocess.Popen([a.rngd, "-f", "-c", conf], stderr=log)
    stop = threading.Event()
    counts = {"blocks_sent": 0, "replays_sent": 0, "sigpipe": 0}
    wt = threading.Thread(target=writer, args=(fifo, stop, counts), daemon=True)
    wt.start()

    def finish(*_):
        stop.set()
        backend.restore()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        raise SystemExit(1)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, finish)

    rows = []
    start = time.monotonic()
    end = start + a.minutes * 60
    next_hup, next_usr1, next_switch, next_row = start + 5, start + 2, start + 60, start + 10
    print("   t    RSS kB  fds  thr   credited bits   fed B  tested  passed  replayed  90B  "
          "hwrng-state   fast-state", flush=True)
    try:
        while time.monotonic() < end and proc.poll() is None:
            now = time.monotonic()
            if now >= next_usr1:
                proc.send_signal(signal.SIGUSR1)
                next_usr1 += 2
            if now >= next_hup:
                proc.send_signal(signal.SIGHUP)
                next_hup += 5
            if now >= next_switch:
                backend.switch()
                next_switch += 60 if backend.away is False else 5
            if now >= next_row:
                next_row += 10
                rss, fds, thr = proc_figures(proc.pid)
                try:
                    doc = json.load(open(status))
                except (OSError, ValueError):
                    continue
                src = {s["name"]: s for s in doc["sources"]}
                tested = sum(s["blocks_tested"] for s in src.values())
                passed = sum(s["blocks_passed"] for s in src.values())
                replayed = sum(s.get("blocks_replayed", 0) for s in src.values())
                h90 = sum(s.get("health_failures", 0) for s in src.values())
                row = dict(t=now - start, rss=rss, fds=fds, thr=thr,
                           bits=doc["feed"]["bits_credited"], fed=doc["feed"]["bytes_fed"],
                           tested=tested, passed=passed, replayed=replayed, h90=h90,
                           src=src)
                rows.append(row)
                print("%4.0f  %8d  %3d  %3d  %14d  %6d  %6d  %6d  %8d  %3d  %-12s  %s" % (
                    row["t"], rss, fds, thr, row["bits"], row["fed"], tested, passed, replayed,
                    h90, src.get("hwrng", {}).get("state", "-"),
                    src.get("file:fast", {}).get("state", "-")), flush=True)
            time.sleep(0.05)
    finally:
        stop.set()
        backend.restore()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "killed"
    print(f"rngd exit status: {rc}; rng_current now '{read(SYS + '/rng_current')}' "
          f"(was '{backend.cur}')")
    shutil.rmtree(t, ignore_errors=True)
    print(f"writer: {counts['blocks_sent']} writes, {counts['replays_sent']} of them "
          f"replays of the last two blocks, {counts['sigpipe']} SIGPIPE")
    print("replayed blocks rejected (sum over samples, each the set of that moment): %d" %
          sum(r["replayed"] for r in rows))
    if len(rows) < 4:
        sys.exit("soak: too few samples")
    # Flat after warm-up: the last samples against the ones after the first minute.
    warm = [r for r in rows if r["t"] >= 60] or rows[len(rows) // 2:]
    first, last = warm[0], rows[-1]
    bad = []
    if last["rss"] > first["rss"] * 1.10 + 1024:
        bad.append(f"RSS grew from {first['rss']} to {last['rss']} kB")
    if max(r["fds"] for r in warm) > min(r["fds"] for r in warm) + 4:
        bad.append("fds not flat: %s" % sorted({r["fds"] for r in warm}))
    if max(r["thr"] for r in warm) > min(r["thr"] for r in warm) + 2:
        bad.append("threads not flat: %s" % sorted({r["thr"] for r in warm}))
    # Every credited byte tested once: per source, what was fed never exceeds what passed
    # (the counters restart with each reload's new set; each sample is one set).
    for r in rows:
        for name, s in r["src"].items():
            if s["bytes_fed"] > s["blocks_passed"] * BLOCK:
                bad.append(f"{name} at {r['t']:.0f} s: fed {s['bytes_fed']} B of "
                           f"{s['blocks_passed']} passed blocks")
    if counts["sigpipe"]:
        bad.append(f"the FIFO writer got SIGPIPE {counts['sigpipe']} times")
    print("soak: " + ("OK: RSS, fds and threads flat after warm-up; fed <= passed for every "
                      "source in every sample" if not bad else "FAILED: " + "; ".join(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
