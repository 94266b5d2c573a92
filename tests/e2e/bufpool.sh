#!/usr/bin/env bash
# ioengine=bufpool on real files: hits and misses add up to the requests
# and misses are the pages read; a scan misses each page once; prewarm
# fills the pool; writes are written back by flushes, on eviction and at
# the end of the job, and read back clean; the outputs (summary line, JSON pool object, CSV pool
# columns, empty for another engine); the process stays within the pool
# and a little more, whatever the file size; hostile options are refused
# with exit 2 and a message naming the option.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 256

expect_exit 0 "bufpool randread, two threads, next to a psync job" "$FAULTLINE" --quiet \
	--csv="$E2E_TMP/r.csv" --interval=200ms --output-format=json,normal --output="$E2E_TMP/r.out" \
	--name=bp --filename="$f" --ioengine=bufpool --pool_size=1m --rw=randread --numjobs=2 \
	--random_distribution=zipf:1.1 --touch=page --runtime=2s --time_based \
	--name=ps --filename="$f" --ioengine=psync --rw=randread --runtime=2s --time_based
# --output-format=json,normal writes the summary, then the JSON document.
pycheck "pool: hits + misses = requests, misses = pages read, the pool holds misses - evictions" '
import json, sys
text = open(sys.argv[1]).read()
start = text.index("\n{") + 1
d = json.loads(text[start:])
bp, ps = d["jobs"][0], d["jobs"][1]
p = bp["faultline"]["pool"]
assert p["size"] == 1 << 20 and p["page"] == 4096 and p["frames"] == 256, p
assert p["io"] == "io_uring", p
assert p["hits"] + p["misses"] == bp["read"]["total_ios"] > 0, (p, bp["read"]["total_ios"])
assert p["pages_read"] == p["misses"], p
assert 0 <= p["misses"] - p["evictions"] <= 256, p
assert (p["evictions"] > 0) == (p["misses"] > 256), p
assert abs(p["hit_ratio"] - p["hits"] / (p["hits"] + p["misses"])) < 1e-9, p
assert p["pages_written"] == 0, p
assert bp["faultline"]["direct"] is True, bp["faultline"]["direct"]
assert ps["faultline"]["pool"] is None, ps["faultline"]["pool"]
assert "pool: 1.00MiB of 4.00KiB pages (256 frames): hits=" in text[:start], text[:start]
' "$E2E_TMP/r.out"
pycheck "CSV: pool columns filled for bufpool, empty for psync" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bp = [r for r in rows if r["job"] == "bp"]
ps = [r for r in rows if r["job"] == "ps"]
k = list(rows[0].keys())
assert k[k.index("dev_write_iops") + 1:][:2] == ["pool_hit_pct", "pool_evict_per_s"], k
assert bp and ps
assert all(r["pool_evict_per_s"] != "" for r in bp), bp
# A share of the row'"'"'s requests: there exactly where it has some (on a
# loaded host more rows than the first may have none).
assert all((r["pool_hit_pct"] != "") == (float(r["iops"]) > 0) for r in bp), \
    [(r["iops"], r["pool_hit_pct"]) for r in bp]
hit = [float(r["pool_hit_pct"]) for r in bp if r["pool_hit_pct"] != ""]
assert hit and all(0 <= h <= 100 for h in hit), hit
assert all(r["pool_hit_pct"] == "" and r["pool_evict_per_s"] == "" for r in ps), ps
' "$E2E_TMP/r.csv"

# One pass of a scan with a pool smaller than the file: every page once.
# bs=1k: four requests per page, the first a miss, three hits.
expect_exit 0 "bufpool scan, bs=1k, pool_io=psync" "$FAULTLINE" --quiet --output-format=json \
	--output="$E2E_TMP/s.json" --name=s --filename="$f" --size=16m --ioengine=bufpool \
	--pool_size=4m --pool_io=psync --bs=1k
pycheck "scan: each page missed once, hit three times" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
p = j["faultline"]["pool"]
assert p["io"] == "psync", p
assert p["misses"] == 4096 and p["hits"] == 3 * 4096, p
assert p["evictions"] == 4096 - 1024, p
' "$E2E_TMP/s.json"

expect_exit 0 "bufpool prewarm, pool larger than the region" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/w.json" --name=w --filename="$f" --size=16m \
	--ioengine=bufpool --pool_size=20m --prewarm=1 --rw=randread --touch=page --runtime=1s \
	--time_based
pycheck "prewarm: not one miss" '
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["pool"]
assert p["misses"] == 0 and p["hits"] > 0 and p["evictions"] == 0, p
' "$E2E_TMP/w.json"

# Memory: the pool, its table and the process, not the file.
if /usr/bin/time -f %M true >/dev/null 2>&1; then
	/usr/bin/time -f %M -o "$E2E_TMP/rss" "$FAULTLINE" --quiet --output=/dev/null --name=m \
		--filename="$f" --ioengine=bufpool --pool_size=32m --rw=randread --touch=page \
		--runtime=1s --time_based
	rss=$(tail -n 1 "$E2E_TMP/rss")
	if [ "$rss" -gt $((32 * 1024 + 64 * 1024)) ]; then
		fail "peak RSS within pool_size + 64 MiB" "${rss} KiB for a 32 MiB pool over 256 MiB"
	else
		pass "peak RSS within pool_size + 64 MiB (${rss} KiB, 32 MiB pool, 256 MiB file)"
	fi
else
	echo "skip - peak RSS: no /usr/bin/time here"
fi

# Misses are the device's reads. The device's own counters count every
# reader of the disk (the JSON's dev_read_bytes: on a shared host that is
# mostly others), so the bytes the storage layer read for faultline are
# taken from its /proc/PID/io read_bytes, which a parent collects from a
# child it has reaped: its own before and after, around one run.
cat >"$E2E_TMP/ownio.py" <<'PY'
import subprocess, sys
def rb():
    for l in open("/proc/self/io"):
        if l.startswith("read_bytes:"):
            return int(l.split()[1])
before = rb()
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % (rb() - before))
sys.exit(rc)
PY
if [ -r /proc/self/io ]; then
	# The binary and its libraries in the page cache first: reading
	# them would count too. A count of requests, not a time: 32768 a
	# thread fill the 512 frames and evict on any host (a 2 s run made
	# 1300 requests at a load of 600, and the pool never filled).
	"$FAULTLINE" --version >/dev/null
	expect_exit 0 "bufpool zipf, its own device reads counted" "$PY" "$E2E_TMP/ownio.py" \
		"$E2E_TMP/z.io" "$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/z.json" \
		--name=z --filename="$f" --size=64m --ioengine=bufpool --pool_size=2m \
		--rw=randread --random_distribution=zipf:1.2 --touch=page --numjobs=2 --io_size=128m
	pycheck "bytes read for faultline = misses x page (2 %), hits + misses = requests" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
p = j["faultline"]["pool"]
own = int(open(sys.argv[2]).read())
assert p["misses"] > 0 and p["evictions"] > 0, p
assert p["hits"] + p["misses"] == j["read"]["total_ios"], (p, j["read"]["total_ios"])
want = p["misses"] * p["page"]
assert abs(own - want) <= 0.02 * want, (own, want)
' "$E2E_TMP/z.json" "$E2E_TMP/z.io"
else
	echo "skip - bytes read = misses x page: no /proc/self/io"
fi

# Writes (SPEC 10). A flush writes back the target's dirty pages: with
# fsync=1 and a pool larger than the region, nothing is evicted, so every
# write is written back by its own flush, exactly once.
expect_exit 0 "bufpool randwrite fsync=1, pool larger than the region" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/f1.json" --name=f1 --filename="$f" --size=4m \
	--ioengine=bufpool --pool_size=8m --rw=randwrite --fsync=1 --io_size=1m --verify=crc32c
pycheck "fsync=1: a write-back and a flush per write, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p, w, s = j["faultline"]["pool"], j["write"], j["sync"]
assert w["total_ios"] == 256 and s["total_ios"] == 256, (w["total_ios"], s["total_ios"])
assert p["pages_written"] == 256 and p["evictions"] == 0, p
# whole-page writes read nothing
assert p["pages_read"] == 0 and p["hits"] + p["misses"] == 256, p
assert j["faultline"]["flush"] == "fsync", j["faultline"]["flush"]
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
' "$E2E_TMP/f1.json"

# No flush at all, pool larger than the region: nothing is evicted, so
# only the write-back at the end of the job puts the writes in the file,
# for verify and for a later faultline --verify.
cat >"$E2E_TMP/nf.job" <<JOB
[nf]
filename=$f
size=4m
ioengine=bufpool
pool_size=8m
rw=randwrite
numjobs=2
io_size=2m
verify=crc32c
JOB
expect_exit 0 "bufpool randwrite without a flush, two threads" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/nf.json" "$E2E_TMP/nf.job"
pycheck "no flush: the end of the job writes every dirty page back, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p, s = j["faultline"]["pool"], j["sync"]
assert s["total_ios"] == 0 and p["evictions"] == 0, (s, p)
# 2 x 512 writes of 4k over 1024 pages: each distinct page missed once.
# Each thread writes back every dirty page when it ends, so a page the
# other thread dirties again after the first one ended goes twice.
assert 0 < p["misses"] <= p["pages_written"] <= 1024, p
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] == p["misses"], v
' "$E2E_TMP/nf.json"
expect_exit 0 "--verify after a bufpool write job" "$FAULTLINE" --verify "$E2E_TMP/nf.job"
if grep -q " 0 mismatches" "$E2E_TMP/out"; then
	pass "--verify: what bufpool wrote is in the file"
else
	fail "--verify: what bufpool wrote is in the file" "$(cat "$E2E_TMP/out")"
fi

# Blocks smaller than the page, three threads sharing the pages: a write
# reads its page in first (or finds it), dirty pages are evicted and
# flushed while others write into them; nothing is torn or lost.
expect_exit 0 "bufpool randrw bs=1k, three threads, small pool" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/rw.json" --name=rw --filename="$f" --size=8m \
	--ioengine=bufpool --pool_size=256k --pool_io=psync --rw=randrw --bs=1k --numjobs=3 \
	--fdatasync=16 --verify=crc32c --number_ios=400 --runtime=60s
pycheck "sub-page writes: read first, evicted dirty, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p = j["faultline"]["pool"]
assert p["pages_read"] == p["misses"] > 0 and p["evictions"] > 0 and p["pages_written"] > 0, p
assert j["faultline"]["flush"] == "fdatasync", j["faultline"]["flush"]
n = j["read"]["total_ios"] + j["write"]["total_ios"]
assert p["hits"] + p["misses"] == n, (p, n)
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
' "$E2E_TMP/rw.json"

# pool_prefetch: a scan of 16 MiB in 1k requests through 16k pages, two
# threads on one shared cursor, pages read 8 ahead: the requests are hits
# and misses, nearly all hits; each of the 1024 pages was read once or
# twice (ahead, or by a thread that got there first); reads and pages read
# ahead add up to at least the pages.
expect_exit 0 "bufpool scan with pool_prefetch=8" "$FAULTLINE" --quiet --output-format=json \
	--output="$E2E_TMP/pf.json" --name=pf --filename="$f" --size=16m --ioengine=bufpool \
	--pool_size=1m --pool_page=16k --bs=1k --numjobs=2 --pool_prefetch=8
pycheck "pool_prefetch: pages read ahead, requests hit them" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p = j["faultline"]["pool"]
assert p["prefetch"] == 8, p
assert p["hits"] + p["misses"] == j["read"]["total_ios"] == 16384, (p, j["read"]["total_ios"])
assert p["pages_prefetched"] > 0 and p["pages_read"] == p["misses"], p
assert 1024 <= p["pages_prefetched"] + p["pages_read"] <= 2 * 1024, p
assert p["misses"] < 1024 / 4, p
' "$E2E_TMP/pf.json"

# Hostile options: exit 2, naming what is wrong.
bad() { # name, expected text, options...
	local name=$1 text=$2
	shift 2
	expect_exit 2 "$name" "$FAULTLINE" --quiet --output=/dev/null --name=b --filename="$f" \
		--ioengine=bufpool --rw=randread "$@"
	expect_err_has "$text" "$name: says why"
}
bad "no pool_size" "needs pool_size="
bad "a pool smaller than one page" "holds 0 pages" --pool_size=2k
bad "fewer than two pages per thread" "numjobs=4 threads need at least 8" --pool_size=16k \
	--numjobs=4
bad "pool_page not a power of two" "pool_page=3000" --pool_size=8m --pool_page=3000
bad "pool_page under 512" "pool_page=256" --pool_size=8m --pool_page=256
bad "bs larger than pool_page" "or pool_page=16384" --pool_size=8m --pool_page=8k --bs=16k
bad "bs not dividing pool_page" "does not divide pool_page" --pool_size=8m --bs=3k
bad "offset off a page boundary" "offset=2048" --pool_size=8m --offset=2k
bad "direct=0" "direct=0 at" --pool_size=8m --direct=0
bad "buffered=1" "direct=0 at" --pool_size=8m --buffered=1
bad "mem_limit" "mem_limit at" --pool_size=8m --mem_limit=8m
bad "offload" "offload=2 at" --pool_size=8m --loop=2 --offload=2
bad "pool_io unknown" "io_uring, psync" --pool_size=8m --pool_io=aio
bad "sync=1 with writes" "O_DSYNC would only make" --pool_size=8m --rw=randwrite --sync=1
bad "pool_prefetch with writes" "could miss a write" --pool_size=8m --rw=rw --pool_prefetch=4
bad "pool_prefetch with pool_io=psync" "needs pool_io=io_uring" --pool_size=8m --rw=read \
	--pool_prefetch=4 --pool_io=psync
bad "pool_prefetch over half the pool" "pool_prefetch=256 or fewer" --pool_size=4m --rw=read \
	--numjobs=2 --pool_prefetch=300
expect_exit 0 "pool_prefetch with random reads: a warning" "$FAULTLINE" --quiet --output=/dev/null \
	--name=x --filename="$f" --size=1m --ioengine=bufpool --pool_size=1m --rw=randread \
	--pool_prefetch=4 --runtime=200ms --time_based
expect_err_has "seldom ask for" "pool_prefetch with random reads: the warning says why"
expect_exit 0 "pool_size with mmap: a warning" "$FAULTLINE" --quiet --output=/dev/null --name=x \
	--filename="$f" --size=1m --ioengine=mmap --pool_size=8m
expect_err_has "pool_size at" "pool_size with mmap: the warning names it"

# pool_page below the logical block size: a loop device of 4 KiB sectors.
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null; then
	echo "skip - pool_page below the logical block size: needs root and losetup for a 4 KiB-sector loop device"
elif loop_attach loop "$f" -b 4096; then
	bad "pool_page below the logical block size" "logical block size 4096" --filename="$loop" \
		--size=8m --pool_size=8m --pool_page=2k --bs=2k
	loop_detach "$loop"
else
	echo "skip - pool_page below the logical block size: losetup -b 4096 refused here"
fi

e2e_done
