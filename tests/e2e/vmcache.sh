#!/usr/bin/env bash
# ioengine=vmcache on real files (issue 25): hits and misses add up to the
# requests and misses are the pages read (and the bytes the storage layer
# read for faultline); a full pool evicts in batches of pool_evict_batch,
# one madvise per run of consecutive pages; a scan misses each page once;
# prewarm fills the pool; the outputs (summary lines, JSON pool object,
# CSV columns, empty for another engine); the job's TLB shootdown IPIs per
# evicted page where tracefs can be had; the process holds no more than
# the pool, its page states and 2 % beyond what the same job needs
# without a pool; writes are written back by flushes, on eviction and at
# the end, and read back clean; hostile options are refused with exit 2
# and a message naming the option.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 256

expect_exit 0 "vmcache randread, two threads, next to a psync job" "$FAULTLINE" --quiet \
	--csv="$E2E_TMP/r.csv" --interval=200ms --output-format=json,normal --output="$E2E_TMP/r.out" \
	--name=vm --filename="$f" --ioengine=vmcache --pool_size=256k --rw=randread --numjobs=2 \
	--random_distribution=zipf:1.1 --touch=page --io_size=1m \
	--name=ps --filename="$f" --ioengine=psync --rw=randread --io_size=1m
pycheck "pool: hits + misses = requests, misses = pages read, batches and madvise calls" '
import json, sys
text = open(sys.argv[1]).read()
start = text.index("\n{") + 1
d = json.loads(text[start:])
vm, ps = d["jobs"][0], d["jobs"][1]
p = vm["faultline"]["pool"]
assert p["design"] == "vmcache" and p["io"] == "io_uring", p
assert p["size"] == 256 << 10 and p["page"] == 4096 and p["frames"] == 64, p
assert p["hits"] + p["misses"] == vm["read"]["total_ios"] > 0, (p, vm["read"]["total_ios"])
assert p["pages_read"] == p["misses"] and p["pages_written"] == 0, p
# resident: at most the pool; batches of at most half of it
assert 0 <= p["misses"] - p["evictions"] <= 64, p
assert p["evictions"] > 0 and p["evict_batches"] > 0, p
assert p["evictions"] <= 32 * p["evict_batches"], p
assert p["evict_batches"] <= p["madvise_calls"] <= p["evictions"], p
assert abs(p["madvise_calls_per_batch"] - p["madvise_calls"] / p["evict_batches"]) < 1e-9, p
assert p["region_bytes"] == 256 << 20 and p["page_states_bytes"] == (256 << 20) // 4096 * 8, p
assert vm["faultline"]["direct"] is True, vm["faultline"]["direct"]
ev = vm["faultline"]["events"]
if ev["tlb_ipi"] is None:
    assert p["tlb_ipi_per_evicted_page"] is None, p
else:
    assert abs(p["tlb_ipi_per_evicted_page"] - ev["tlb_ipi"] / p["evictions"]) < 1e-9, (p, ev)
assert ps["faultline"]["pool"] is None, ps["faultline"]["pool"]
s = text[:start]
assert "pool: 256KiB of 4.00KiB pages (64 resident at most): hits=" in s, s
assert "vmcache: region 256MiB (65536 pages at fixed addresses), page states 512KiB (0.20% of it)" in s, s
' "$E2E_TMP/r.out"
pycheck "CSV: pool columns filled for vmcache, empty for psync" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
vm = [r for r in rows if r["job"] == "vm"]
ps = [r for r in rows if r["job"] == "ps"]
assert vm and ps
assert all(r["pool_evict_per_s"] != "" and r["pool_evict_batches_per_s"] != "" for r in vm), vm
assert sum(float(r["pool_evict_batches_per_s"]) for r in vm) > 0, vm
for r in vm:
    if r["pool_ipi_per_evict"] != "":
        assert float(r["pool_evict_per_s"]) > 0 and r["job_tlb_ipi_per_s"] != "", r
for r in ps:
    assert r["pool_hit_pct"] == r["pool_evict_per_s"] == r["pool_evict_batches_per_s"] == "", r
    assert r["pool_ipi_per_evict"] == "", r
' "$E2E_TMP/r.csv"

# One pass of a scan with a pool smaller than the file: every page once.
# bs=1k: four requests per page, the first a miss, three hits. (The clock
# visits pages in the resident set's hash order, so even here few pages of
# a batch are neighbours: about one madvise call per page.)
expect_exit 0 "vmcache scan, bs=1k, pool_io=psync" "$FAULTLINE" --quiet --output-format=json \
	--output="$E2E_TMP/s.json" --name=s --filename="$f" --size=16m --ioengine=vmcache \
	--pool_size=4m --pool_io=psync --bs=1k
pycheck "scan: each page missed once, hit three times, evicted in batches" '
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["pool"]
assert p["io"] == "psync", p
assert p["misses"] == 4096 and p["hits"] == 3 * 4096, p
assert 4096 - 1024 <= p["evictions"] < 4096 - 1024 + 64, p
assert p["evictions"] <= 64 * p["evict_batches"], p
assert p["evict_batches"] <= p["madvise_calls"] <= p["evictions"], p
' "$E2E_TMP/s.json"

# A batch of one: every eviction is its own batch and call.
expect_exit 0 "vmcache pool_evict_batch=1" "$FAULTLINE" --quiet --output-format=json \
	--output="$E2E_TMP/b1.json" --name=b1 --filename="$f" --size=8m --ioengine=vmcache \
	--pool_size=1m --pool_evict_batch=1 --rw=randread --touch=page --io_size=4m
pycheck "pool_evict_batch=1: a batch and a call per eviction" '
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["pool"]
assert p["evictions"] > 0 and p["evict_batches"] == p["evictions"] == p["madvise_calls"], p
' "$E2E_TMP/b1.json"

expect_exit 0 "vmcache prewarm, pool larger than the region, thread=0 with one worker" "$FAULTLINE" \
	--quiet --output-format=json --output="$E2E_TMP/w.json" --name=w --filename="$f" \
	--size=16m --ioengine=vmcache --pool_size=20m --prewarm=1 --rw=randread --touch=page \
	--runtime=1s --time_based --thread=0
pycheck "prewarm: not one miss" '
import json, sys
p = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["pool"]
assert p["misses"] == 0 and p["hits"] > 0 and p["evictions"] == 0, p
assert p["evict_batches"] == 0 and p["madvise_calls_per_batch"] is None, p
' "$E2E_TMP/w.json"

# Memory: the pool's pages and states beyond what the same job holds
# without a pool (psync with O_DIRECT), within 2 % of the pool; prewarm
# fills the pool first, so that it is full however slow the disk.
if [ -n "${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
	echo "skip - peak RSS: under a sanitizer, whose shadow memory grows with what the pool touches"
elif /usr/bin/time -f %M true >/dev/null 2>&1; then
	rss() { # out, engine options...
		local out=$1
		shift
		/usr/bin/time -f %M -o "$out" "$FAULTLINE" --quiet --output=/dev/null --name=m \
			--filename="$f" --rw=randread --touch=page --runtime=2s --time_based \
			--prewarm=1 "$@"
		tail -n 1 "$out"
	}
	base=$(rss "$E2E_TMP/rss0" --ioengine=psync --direct=1)
	vm=$(rss "$E2E_TMP/rss1" --ioengine=vmcache --pool_size=32m)
	# 32 MiB of pages, 512 KiB of states, a 64 KiB set, + 2 %
	limit=$((base + 32 * 1024 + 512 + 64 + 32 * 1024 * 2 / 100))
	if [ "$vm" -le "$limit" ] && [ "$vm" -gt $((base + 16 * 1024)) ]; then
		pass "peak RSS within pool + page states + 2 % (${vm} KiB, without a pool ${base} KiB)"
	else
		fail "peak RSS within pool + page states + 2 %" "${vm} KiB, limit ${limit} KiB (without a pool ${base} KiB)"
	fi
else
	echo "skip - peak RSS: no /usr/bin/time here"
fi

# Misses are the device's reads: the bytes the storage layer read for
# faultline (its /proc/PID/io read_bytes, collected by a parent that
# reaped it, as bufpool.sh does).
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
	"$FAULTLINE" --version >/dev/null
	expect_exit 0 "vmcache zipf, its own device reads counted" "$PY" "$E2E_TMP/ownio.py" \
		"$E2E_TMP/z.io" "$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/z.json" \
		--name=z --filename="$f" --size=16m --ioengine=vmcache --pool_size=256k \
		--rw=randread --random_distribution=zipf:1.2 --touch=page --numjobs=2 --io_size=2m
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

# The eviction cost where the tracepoints can be had (root: tracefs).
if [ "$(id -u)" = 0 ]; then
	expect_exit 0 "vmcache with --mount-tracefs: IPIs per evicted page" "$FAULTLINE" --quiet \
		--mount-tracefs --output-format=json --output="$E2E_TMP/t.json" --name=t \
		--filename="$f" --size=16m --ioengine=vmcache --pool_size=256k --rw=randread \
		--touch=page --numjobs=2 --io_size=2m
	pycheck "tlb_ipi_per_evicted_page = tlb_ipi / evictions" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
p, ev = j["faultline"]["pool"], j["faultline"]["events"]
if ev["tlb_ipi"] is None:
    print("tlb_ipi not counted here:", j["faultline"]["events"]["unavailable"].get("tlb_ipi"))
    assert p["tlb_ipi_per_evicted_page"] is None, p
else:
    assert p["evictions"] > 0, p
    assert abs(p["tlb_ipi_per_evicted_page"] - ev["tlb_ipi"] / p["evictions"]) < 1e-9, (p, ev)
' "$E2E_TMP/t.json"
fi

# Writes (SPEC 10). fsync=1 and a pool larger than the region: every write
# is written back by its own flush, exactly once.
expect_exit 0 "vmcache randwrite fsync=1, pool larger than the region" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/f1.json" --name=f1 --filename="$f" --size=4m \
	--ioengine=vmcache --pool_size=8m --rw=randwrite --fsync=1 --io_size=1m --verify=crc32c
pycheck "fsync=1: a write-back and a flush per write, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p, w, s = j["faultline"]["pool"], j["write"], j["sync"]
assert w["total_ios"] == 256 and s["total_ios"] == 256, (w["total_ios"], s["total_ios"])
assert p["pages_written"] == 256 and p["evictions"] == 0, p
assert p["pages_read"] == 0 and p["hits"] + p["misses"] == 256, p
assert j["faultline"]["flush"] == "fsync", j["faultline"]["flush"]
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
' "$E2E_TMP/f1.json"

cat >"$E2E_TMP/nf.job" <<JOB
[nf]
filename=$f
size=4m
ioengine=vmcache
pool_size=8m
rw=randwrite
numjobs=2
io_size=2m
verify=crc32c
JOB
expect_exit 0 "vmcache randwrite without a flush, two threads" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/nf.json" "$E2E_TMP/nf.job"
pycheck "no flush: the end of the job writes every dirty page back, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p, s = j["faultline"]["pool"], j["sync"]
assert s["total_ios"] == 0 and p["evictions"] == 0, (s, p)
assert 0 < p["misses"] <= p["pages_written"] <= 1024, p
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] == p["misses"], v
' "$E2E_TMP/nf.json"
expect_exit 0 "--verify after a vmcache write job" "$FAULTLINE" --verify "$E2E_TMP/nf.job"
if grep -q " 0 mismatches" "$E2E_TMP/out"; then
	pass "--verify: what vmcache wrote is in the file"
else
	fail "--verify: what vmcache wrote is in the file" "$(cat "$E2E_TMP/out")"
fi

# Sub-page writes, three threads sharing the pages, a small pool: dirty
# pages written back before their batch goes, flushed while others write.
# A count of requests, not a time: on a loaded disk a second held only 9
# (the pool of 64 pages never filled).
expect_exit 0 "vmcache randrw bs=1k, three threads, small pool" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/rw.json" --name=rw --filename="$f" --size=8m \
	--ioengine=vmcache --pool_size=256k --pool_evict_batch=16 --pool_io=psync --rw=randrw \
	--bs=1k --numjobs=3 --fdatasync=16 --verify=crc32c --number_ios=400 --runtime=60s
pycheck "sub-page writes: read first, evicted dirty, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
p = j["faultline"]["pool"]
assert p["pages_read"] == p["misses"] > 0 and p["evictions"] > 0 and p["pages_written"] > 0, p
assert p["evictions"] <= 16 * p["evict_batches"], p
n = j["read"]["total_ios"] + j["write"]["total_ios"]
assert p["hits"] + p["misses"] == n, (p, n)
v = j["faultline"]["verify"]
assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
' "$E2E_TMP/rw.json"

bad() { # name, expected text, options...
	local name=$1 text=$2
	shift 2
	expect_exit 2 "$name" "$FAULTLINE" --quiet --output=/dev/null --name=b --filename="$f" \
		--ioengine=vmcache --rw=randread "$@"
	expect_err_has "$text" "$name: says why"
}
bad "no pool_size" "needs pool_size="
bad "fewer than two pages per thread" "numjobs=4 threads need at least 8" --pool_size=16k \
	--numjobs=4
bad "pool_page below the base page" "smaller than the base page" --pool_size=8m \
	--pool_page=2k --bs=2k
bad "thread=0 with two workers" "thread=0 at" --pool_size=8m --thread=0 --numjobs=2
bad "pool_evict_batch=0" "pool_evict_batch" --pool_size=8m --pool_evict_batch=0
bad "pool_evict_batch too large" "pool_evict_batch" --pool_size=8m --pool_evict_batch=2000
bad "direct=0" "direct=0 at" --pool_size=8m --direct=0
bad "mem_limit" "vmcache pool_size=M" --pool_size=8m --mem_limit=8m
bad "bs not dividing pool_page" "vmcache serves a request in place" --pool_size=8m --bs=3k
expect_exit 0 "pool_evict_batch with bufpool: a warning" "$FAULTLINE" --quiet --output=/dev/null \
	--name=x --filename="$f" --size=1m --ioengine=bufpool --pool_size=1m --pool_evict_batch=8
expect_err_has "pool_evict_batch at" "pool_evict_batch with bufpool: the warning names it"

e2e_done
