#!/bin/bash
# End to end with Debian's prometheus-node-exporter: node_exporter on 127.0.0.1 on an unused
# port with only its textfile collector, reading a temporary directory; rngd with
# metrics-file in that directory and a FIFO source; /metrics scraped with a plain HTTP
# client (Python's urllib); every rngd_* series there, with the values of the status
# document written from the same snapshot (SIGUSR1). Both stopped by their PID. Skips,
# saying so, where the package is not installed (scripts/deps installs it).
set -u
. "$(dirname "$0")/lib.sh" node-exporter

NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter) || {
	echo "node-exporter: skipped: prometheus-node-exporter not installed (Debian package prometheus-node-exporter; scripts/deps installs it)"
	exit 77
}

# An unused TCP port on 127.0.0.1 (the kernel's choice; free again once closed).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
textfile=$T/textfile
mkdir -p "$textfile"
"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$textfile" >"$T/ne.log" 2>&1 &
ne_pid=$!
pids+=("$ne_pid")

scrape() { # /metrics into $1; false when it cannot be fetched
	python3 - "$port" "$1" <<'EOF'
import sys, urllib.request
port, out = sys.argv[1], sys.argv[2]
with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
    body = r.read()
open(out, "wb").write(body)
EOF
}
if ! wait_until 30 scrape "$T/first.txt" 2>/dev/null; then
	fail "node_exporter on 127.0.0.1:$port did not answer: $(head -5 "$T/ne.log")"
	finish
fi
ok "node_exporter $("$NODE_EXPORTER" --version 2>&1 | head -1 | awk '{print $3}') on 127.0.0.1:$port, textfile collector only"

# 8 random blocks after the seed into a FIFO that stays open.
python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(22).randbytes(4 + 8 * 2500))' >"$T/in"
mkfifo "$T/fifo"
exec {wfd}<>"$T/fifo"
cat "$T/in" >"$T/fifo" &
pids+=($!)
status=$T/run/status.json
: >"$T/conf"
start_logged "$T/rngd.log" 30 "started" "rngd" -f -c "$T/conf" "${NOSRC[@]}" \
	-O "file:fifo:path:$T/fifo" -O file:fifo:quality:700 -o "$T/out" \
	-O "rngd:status-file:$status" -O rngd:pid-file: -O rngd:status-interval:0 \
	--metrics-file="$textfile/rngd.prom" --metrics-interval=0 || finish
rngd_pid=$pid

# All 8 blocks through, then one snapshot for both files, then the scrape.
through() {
	kill -USR1 "$rngd_pid"
	grep -q '^rngd_source_passed_blocks_total{source="file:fifo"} 8$' "$textfile/rngd.prom" 2>/dev/null
}
if ! wait_until 30 through; then
	fail "rngd's metrics file never showed the 8 blocks: $(head -5 "$T/rngd.log")"
	finish
fi
ino=$(stat -c %i "$textfile/rngd.prom")
kill -USR1 "$rngd_pid"
wait_until 30 eval '[ "$(stat -c %i "$textfile/rngd.prom")" != "$ino" ]'
cp "$status" "$T/status.json"
if ! scrape "$T/scrape.txt"; then
	fail "scrape of 127.0.0.1:$port/metrics failed"
	finish
fi
echo "--- one scrape's rngd_* lines (not 0):"
grep '^rngd_' "$T/scrape.txt" | grep -v ' 0$'
echo "---"

# Every series the status document implies, with its value, against the scrape.
if python3 - "$T/status.json" "$T/scrape.txt" "$textfile/rngd.prom" >"$T/cmp.txt" 2>&1 <<'EOF'
import calendar, json, re, sys, time
doc = json.load(open(sys.argv[1]))
scrape = {}
for line in open(sys.argv[2]):
    if line.startswith("rngd_"):
        key, value = line.rsplit(" ", 1)
        scrape[key] = float(value)
def ts(s):
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ")) if s else 0
def lbl(**kv):
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(kv.items())) + "}" if kv else ""
want = {
    "rngd_build_info" + lbl(version=doc["rngd_version"]): 1,
    "rngd_start_time_seconds": ts(doc["started"]),
    "rngd_last_update_timestamp_seconds": ts(doc["updated"]),
    "rngd_crng_ready": int(doc["kernel"]["crng_ready"]),
    "rngd_feeds_total": doc["feed"]["feeds"],
    "rngd_fed_bytes_total": doc["feed"]["bytes_fed"],
    "rngd_credited_entropy_bytes_total": doc["feed"]["bits_credited"] / 8,
    "rngd_reseeds_total": doc["feed"]["reseeds"],
    "rngd_last_feed_timestamp_seconds": ts(doc["feed"]["last_feed"]),
    "rngd_feed_interval_seconds": doc["feed"]["interval"],
}
kh = doc["kernel_hwrng"]
for m in ("take-over", "leave", "watch"):
    want["rngd_kernel_hwrng_mode" + lbl(mode=m)] = int(kh["mode"] == m)
for st in ("held", "refused", "lost", "not-needed", "demoted", "none"):
    want["rngd_kernel_hwrng_takeover" + lbl(backend=kh["backend"] or "", state=st)] = int(kh["takeover"] == st)
for s in doc["sources"]:
    n = s["name"]
    for st in ("starting", "running", "backoff", "waiting", "failed", "absent"):
        want["rngd_source_state" + lbl(source=n, state=st)] = int(s["state"] == st)
    want["rngd_source_read_bytes_total" + lbl(source=n)] = s["bytes_read"]
    want["rngd_source_tested_blocks_total" + lbl(source=n)] = s["blocks_tested"]
    want["rngd_source_passed_blocks_total" + lbl(source=n)] = s["blocks_passed"]
    want["rngd_source_fed_bytes_total" + lbl(source=n)] = s["bytes_fed"]
    want["rngd_source_credited_entropy_bytes_total" + lbl(source=n)] = s["bits_credited"] / 8
    for t, v in s["fips_failures"].items():
        want["rngd_source_fips_failures_total" + lbl(source=n, test=t)] = v
    want["rngd_source_rejected_blocks_total" + lbl(source=n, check="replay")] = s["blocks_replayed"]
    want["rngd_source_rejected_blocks_total" + lbl(source=n, check="sp800-90b")] = s["health_failures"]
    want["rngd_source_last_good_block_timestamp_seconds" + lbl(source=n)] = ts(s["last_passed"])
# node_exporter drops an empty label ("backend" with no backend): so does the comparison.
def canon(k):
    return re.sub(r',?\w+=""', "", k).replace("{,", "{").replace("{}", "")
scrape = {canon(k): v for k, v in scrape.items()}
bad = [f"{k}: scrape {scrape.get(k)} status {v}" for k, v in want.items() if scrape.get(canon(k)) != v]
extra = set(scrape) - {canon(k) for k in want}
fed = doc["sources"][-1]
print(f"{len(want)} series compared; file:fifo passed {fed['blocks_passed']}, credited {fed['bits_credited']} bits")
for b in bad: print("differs:", b)
for e in sorted(extra): print("not in the status document:", e)
sys.exit(1 if bad or extra else 0)
EOF
then
	ok "scrape: every rngd_* series with the status document's value ($(head -1 "$T/cmp.txt"))"
else
	fail "scrape against the status document: $(head -20 "$T/cmp.txt")"
fi
# The textfile collector read the file without error (node_textfile_scrape_error 0).
if grep -q '^node_textfile_scrape_error 0$' "$T/scrape.txt"; then
	ok "node_exporter read rngd.prom without a parse error"
else
	fail "node_exporter: $(grep -E 'node_textfile_scrape_error' "$T/scrape.txt") $(tail -3 "$T/ne.log")"
fi

# Both stopped by their PID.
kill -TERM "$rngd_pid" "$ne_pid"
wait "$rngd_pid"
rc_rngd=$?
wait "$ne_pid"
exec {wfd}>&-
if [ "$rc_rngd" = 0 ] && ! kill -0 "$ne_pid" 2>/dev/null; then
	ok "rngd and node_exporter stopped by their PID (rngd exit 0)"
else
	fail "stop: rngd exit $rc_rngd, node_exporter $(kill -0 "$ne_pid" 2>/dev/null && echo alive || echo gone)"
fi
finish
