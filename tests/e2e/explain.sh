#!/usr/bin/env bash
# e2e: alone (page-cache residency and device traffic of the host)
# What explains a run (issue 19), end to end on small files: the CSV's
# residency, pressure and cost columns (found by name), cachestat against
# an independent mincore count, the mincore fallback, the cache-full
# moment of a mem_limit job against its own cgroup_mib column, a region
# that fits (no moment), uncached=1 reads and their refusals, PSI cells
# empty where the kernel has none, and --check-system's findings.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 48
small=$E2E_TMP/small
mkdata "$small" 8
# Written pages are dirty, and invalidate=1 cannot drop dirty pages.
sync "$f" "$small"

# --- columns by name, filled where this host has the source ----------
# A count of reads, not 3 s: a loaded host's disk can stall a read for
# over a second, and a 3 s run then left too few pages for the last
# residency cell (0.1 MiB). 2500 random 4 KiB reads leave about 9 MiB of
# the file cached, and the 1 ms think time after each makes the run last
# at least 2.5 s by its own schedule, so that it spans three rows however
# fast the device is; runtime only bounds a run that hangs.
cat >"$E2E_TMP/c.job" <<JOB
[global]
filename=$f
number_ios=2500
thinktime=1ms
runtime=120s
[ps]
ioengine=psync
rw=randread
JOB
expect_exit 0 "a psync job with --csv and JSON" "$FAULTLINE" --quiet --csv="$E2E_TMP/c.csv" \
	--output-format=json --output="$E2E_TMP/c.json" "$E2E_TMP/c.job"
pycheck "new CSV cells: residency, refaults, PSI where /proc/pressure exists, costs; cgroup PSI empty without mem_limit" '
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 3, len(rows)
psi = os.path.exists("/proc/pressure/memory")
for r in rows:
    assert 0 <= float(r["target_cached_mib"]) <= 48.01, r["target_cached_mib"]
    assert r["target_evicted_mib"] != "" and r["target_recent_evicted_mib"] != ""
    assert float(r["refault_per_s"]) >= 0
    for c in ("psi_mem_some_pct", "psi_mem_full_pct", "psi_io_some_pct", "psi_io_full_pct"):
        assert (r[c] != "") == psi, (c, r[c])
        if psi:
            assert 0 <= float(r[c]) <= 100.5, (c, r[c])
    assert r["cg_mem_some_pct"] == "" and r["cg_mem_full_pct"] == ""
    if float(r["iops"]) > 0:
        assert float(r["read_amp"]) >= 0 and float(r["cpu_us_per_4k"]) >= 0, r
# The CPU clock of a thread moves at its context switches: a short last
# row may see none, but the run as a whole costs CPU.
assert sum(float(r["cpu_us_per_4k"]) for r in rows if r["cpu_us_per_4k"]) > 0, rows
# Buffered reads leave their pages (a cold start: invalidate=1). The host
# may reclaim a few meanwhile (CI, under ASan: 48.0, 47.3, 48.0): the end
# holds at least 90 % of the most seen.
c = [float(r["target_cached_mib"]) for r in rows]
assert c[-1] > 0 and c[-1] >= 0.9 * max(c), c
' "$E2E_TMP/c.csv"

# --- cachestat against mincore, read independently ---------------------
# A cold file, 16 MiB of random 4 KiB reads over it with readahead off
# (fadvise=random): no read-ahead still in flight when the job ends, so
# the count cannot move between faultline's last look and the test's.
cat >"$E2E_TMP/half.job" <<JOB
[half]
filename=$f
ioengine=psync
rw=randread
fadvise=random
io_size=16m
invalidate=1
JOB
mincore_pages() { # path: cached pages by mincore(2) on a fresh mapping
	"$PY" - "$1" <<'PY'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
fd = os.open(sys.argv[1], os.O_RDONLY)
n = os.fstat(fd).st_size
p = libc.mmap(None, n, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
vec = ctypes.create_string_buffer((n + 4095) // 4096)
assert libc.mincore(p, n, vec) == 0, ctypes.get_errno()
print(sum(b & 1 for b in vec.raw))
PY
}
# Pages reclaimed host-wide so far (every pgsteal_* of /proc/vmstat): a
# count that fell between faultline's last look and the test's is only a
# disagreement if nothing was reclaimed meanwhile. A host under memory
# pressure (a CI runner's cgroup at its limit) evicts pages of a file
# just read; such a try is made again, up to three times.
# DAMON's pageout (a kdamond's paddr scheme, as on the development VM)
# takes idle page cache with no pressure and counts in no pgsteal_*:
# its own stats, refreshed first (root only), are added in.
damon_applied() {
	local k s n=0
	for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do
		[ -w "$k/state" ] && [ "$(damon_cat "$k/state")" = on ] || continue
		damon_write "$k/state" update_schemes_stats || continue
		for s in "$k"/contexts/[0-9]*/schemes/[0-9]*/stats/sz_applied; do
			[ -r "$s" ] && n=$((n + $(cat "$s") / 4096))
		done
	done
	echo $n
}
stolen() { echo $(($(awk '/^pgsteal_/ {n += $2} END {print n + 0}' /proc/vmstat) + $(damon_applied))); }

# residency_check NAME ENV JSON CSV PYCODE: runs half.job with ENV (an
# assignment or "-"), counts the file's pages by mincore, and checks
# PYCODE on the JSON, the CSV and that count.
residency_check() {
	local name=$1 envv=$2 json=$3 csv=$4 code=$5 try s0 m
	for try in 1 2 3; do
		s0=$(stolen)
		if ! env ${envv/#-/} "$FAULTLINE" --quiet --output-format=json --output="$json" \
			--csv="$csv" "$E2E_TMP/half.job" 2>"$E2E_TMP/err"; then
			fail "$name" "$(tail -n 3 "$E2E_TMP/err")"
			return
		fi
		m=$(mincore_pages "$f")
		if "$PY" -c "$code" "$json" "$csv" "$m" 2>"$E2E_TMP/pyerr"; then
			pass "$name"
			return
		fi
		[ "$(stolen)" -gt "$s0" ] || break
		echo "# $name: the host reclaimed $(($(stolen) - s0)) pages during try $try; again"
	done
	fail "$name" "$(tail -n 3 "$E2E_TMP/pyerr")"
}

residency_check "cachestat cached pages at the end agree with mincore within 3 %" - \
	"$E2E_TMP/half.json" "$E2E_TMP/half.csv" '
import json, sys
x = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["residency"]
m = int(sys.argv[3])
assert x["method"] == "cachestat", x
c = x["cached_pages"]
assert 2500 <= c <= 4096, c           # 4096 random reads of 12288 pages
assert abs(c - m) <= 0.03 * max(c, m), (c, m)
assert x["evicted_pages"] is not None and x["dirty_pages"] == 0
'

residency_check "the mincore fallback: same cached count, evicted counts empty and null" \
	FAULTLINE_NO_CACHESTAT=1 "$E2E_TMP/fb.json" "$E2E_TMP/fb.csv" '
import csv, json, sys
x = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["residency"]
m = int(sys.argv[3])
assert x["method"] == "mincore", x
assert x["evicted_pages"] is None and x["recently_evicted_pages"] is None, x
assert abs(x["cached_pages"] - m) <= 0.03 * max(x["cached_pages"], m), (x, m)
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows and all(r["target_evicted_mib"] == "" and r["target_cached_mib"] != "" for r in rows)
'

# --- the cache-full moment under mem_limit -----------------------------
if "$FAULTLINE" --check-system --output-format=json 2>/dev/null | "$PY" -c '
import json, sys; sys.exit(0 if json.load(sys.stdin)["memory_cgroup"]["can_create_child"] else 1)'; then
	# [fills] ends by volume, not after 6 s: a loaded host's disk can
	# stall a read for over a second, and what is checked is the job's
	# moment, not the host's speed. 2 x 64 MiB of one-page faults
	# (madvise=random: a fault reads its page alone, whatever the host's
	# read_ahead_kb, 8 MiB here) over the 48 MiB file fill the 32 MiB
	# limit after about 12,000 of their 32,768; the 200 us think time
	# after each fault then keeps the job going for at least 2 s more by
	# its own schedule, so the phase after the moment has its rows
	# however fast the device is. runtime only bounds a run that hangs.
	# [fits] reads a file that fits: no moment, however long it runs.
	cat >"$E2E_TMP/full.job" <<JOB
[global]
rw=randread
ioengine=mmap
touch=page
numjobs=2
[fills]
filename=$f
mem_limit=32m
madvise=random
io_size=64m
thinktime=200us
runtime=120s
[fits]
stonewall
filename=$small
mem_limit=64m
runtime=6s
time_based
JOB
	expect_exit 0 "mmap under mem_limit: one job that fills its cgroup, one that fits" \
		"$FAULTLINE" --quiet --csv="$E2E_TMP/full.csv" --output-format=normal,json \
		--output="$E2E_TMP/full.out" "$E2E_TMP/full.job"
	sed -n '/^{/,$p' "$E2E_TMP/full.out" >"$E2E_TMP/full.json"
	pycheck "the moment is the first row whose cgroup_mib reaches 95 % of the limit; phases on both sides" '
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["job"] == "fills"]
ph = d["jobs"][0]["faultline"]["phases"]
assert ph["cache"] == "cgroup" and ph["rule"] == "limit" and ph["cache_full"], ph
first = next(r for r in rows if r["cgroup_mib"] and float(r["cgroup_mib"]) >= 0.95 * 32)
assert abs(ph["t_s"] - float(first["t_s"])) < 1e-3, (ph["t_s"], first["t_s"])
assert ph["interval"] == rows.index(first) + 1
b, a = ph["before"], ph["after"]
assert b["intervals"] + a["intervals"] == len(rows), (b, a, len(rows))
assert a["iops"] > 0 and b["iops"] > 0
cost = d["jobs"][0]["faultline"]["cost"]
assert cost["ipi_per_major_fault"] is not None and cost["ipi_per_major_fault"] >= 0, cost
assert cost["cpu_us_per_4k"] > 0 and cost["dev_bytes_per_byte"] > 0, cost
fits = d["jobs"][1]["faultline"]["phases"]
assert not fits["cache_full"] and fits["why"] and fits["t_s"] is None, fits
' "$E2E_TMP/full.json" "$E2E_TMP/full.csv"
	if grep -q "cache full at t=" "$E2E_TMP/full.out" && grep -q "cost per page:" "$E2E_TMP/full.out" &&
		grep -q "cache full: not seen" "$E2E_TMP/full.out"; then
		pass "the summary gives the moment, the phases and the cost per page"
	else
		fail "the summary gives the moment, the phases and the cost per page" "$(head -40 "$E2E_TMP/full.out")"
	fi
	pycheck "the summary's phase lines carry the JSON's figures (IOPS, IPIs per major fault)" '
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
ph = d["jobs"][0]["faultline"]["phases"]
lines = [l for l in text.splitlines() if re.match(r"\s+(before|after)\s", l)]
assert len(lines) == 2, lines
for l, k in zip(lines, ("before", "after")):
    p = ph[k]
    ipi = re.search(r"IPIs per major fault (\S+)", l).group(1)
    want = "n/a" if p["ipi_per_major_fault"] is None else "%.3f" % p["ipi_per_major_fault"]
    assert ipi == want, (l, want)
    iops = re.search(r"IOPS=([0-9.]+)(k|M)?", l)
    v = float(iops.group(1)) * {None: 1, "k": 1e3, "M": 1e6}[iops.group(2)]
    assert abs(v - p["iops"]) <= 0.01 * p["iops"] + 1, (l, p["iops"])
' "$E2E_TMP/full.out" "$E2E_TMP/full.json"
	here=$(cd "$(dirname "$0")/../.." && pwd)
	if "$here/plot/pick-python" >/dev/null 2>&1; then
		expect_exit 0 "faultline-plot marks the moments (from the JSON)" "$here/plot/faultline-plot" \
			"$E2E_TMP/full.csv" --json "$E2E_TMP/full.json" -o "$E2E_TMP/full.png"
	fi
else
	echo "skip - no memory cgroup can be made here: no mem_limit moment test"
fi

# --- reads that bypass the cache have no moment --------------------------
expect_exit 0 "an O_DIRECT job, JSON" "$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/d.json" \
	--name=d --filename="$f" --rw=randread --direct=1 --ioengine=io_uring --iodepth=8 --runtime=2s --time_based
pycheck "O_DIRECT: no cache-full moment, and why (whatever the host's cache does meanwhile)" '
import json, sys
ph = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["phases"]
assert not ph["cache_full"] and "direct=1" in ph["why"], ph
' "$E2E_TMP/d.json"

# --- uncached=1 ---------------------------------------------------------
if "$FAULTLINE" --check-system --target="$f" --output-format=json | "$PY" -c '
import json, sys; sys.exit(0 if json.load(sys.stdin)["uncached"]["available"] else 1)'; then
	for e in psync io_uring; do
		expect_exit 0 "uncached=1 with $e reads the whole file" "$FAULTLINE" --quiet --output-format=json \
			--output="$E2E_TMP/u-$e.json" --name=u --filename="$f" --ioengine=$e --rw=read --uncached=1
		pycheck "uncached $e: the file read, almost none of it left in the cache" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["read"]["io_bytes"] == 48 << 20, j["read"]["io_bytes"]
assert j["faultline"]["residency"]["cached_pages"] < 0.05 * (48 << 8), j["faultline"]["residency"]
' "$E2E_TMP/u-$e.json"
	done
	expect_exit 0 "the same read buffered" "$FAULTLINE" --quiet --output-format=json \
		--output="$E2E_TMP/b.json" --name=b --filename="$f" --rw=read
	pycheck "buffered: the whole file stays cached" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["residency"]
assert r["cached_pages"] >= 0.95 * (48 << 8), r
' "$E2E_TMP/b.json"
else
	echo "skip - RWF_DONTCACHE unavailable here: uncached runs not tested (refusal below is)"
	expect_exit 2 "uncached=1 refused where RWF_DONTCACHE is unavailable" "$FAULTLINE" --quiet \
		--name=u --filename="$f" --uncached=1
	expect_err_has "RWF_DONTCACHE" "the refusal names the flag"
fi
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp /dev/shm/faultline-e2e-uncached.XXXXXX)
	head -c 1048576 /dev/urandom >"$shm"
	expect_exit 2 "uncached=1 on tmpfs: refused before the run" "$FAULTLINE" --quiet --name=u \
		--filename="$shm" --uncached=1 --runtime=1s
	expect_err_has "uncached=1" "the refusal says uncached=1"
	grep -qE "Linux [0-9]" "$E2E_TMP/err" && pass "the refusal names the kernel" || fail "the refusal names the kernel" "$(cat "$E2E_TMP/err")"
	rm -f "$shm"
fi
expect_exit 2 "uncached=1 with direct=1: a contradiction" "$FAULTLINE" --quiet --name=u --filename="$f" \
	--uncached=1 --direct=1
expect_err_has "contradicts direct=1" "it names both options"
expect_exit 2 "uncached=1 with mmap: a contradiction" "$FAULTLINE" --quiet --name=u --filename="$f" \
	--uncached=1 --ioengine=mmap
expect_exit 2 "uncached=1 with a write job: refused" "$FAULTLINE" --quiet --name=u --filename="$f" \
	--uncached=1 --rw=randwrite

# --- no PSI: empty cells, one warning ---------------------------------
# A /proc of links to the real one, without pressure/.
fake=$E2E_TMP/proc
mkdir "$fake"
for e in /proc/*; do
	[ "${e##*/}" = pressure ] || ln -s "$e" "$fake/${e##*/}"
done
FAULTLINE_PROC=$fake "$FAULTLINE" --quiet --csv="$E2E_TMP/np.csv" --name=n --filename="$small" \
	--rw=randread --runtime=2s --time_based >/dev/null 2>"$E2E_TMP/err"
expect_err_has "pressure stall information unavailable" "without /proc/pressure: a warning saying why"
pycheck "without /proc/pressure: PSI cells empty, never 0; the rest filled" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
for r in rows:
    for c in ("psi_mem_some_pct", "psi_mem_full_pct", "psi_io_some_pct", "psi_io_full_pct"):
        assert r[c] == "", (c, r[c])
    assert r["target_cached_mib"] != "" and r["iops"] != ""
' "$E2E_TMP/np.csv"

# --- --check-system ------------------------------------------------------
"$FAULTLINE" --check-system --output-format=json --target="$f" >"$E2E_TMP/cs.json"
FAULTLINE_NO_CACHESTAT=1 FAULTLINE_PROC=$(cd "$(dirname "$0")/../fixtures" && pwd)/arm64/proc \
	"$FAULTLINE" --check-system --output-format=json >"$E2E_TMP/cs2.json"
pycheck "--check-system: PSI, residency method, uncached, and the target by both methods" '
import json, os, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["pressure"]["readable"] == os.path.exists("/proc/pressure/memory"), a["pressure"]
assert a["pressure"]["cgroup"]["readable"] or a["pressure"]["cgroup"]["why"]
assert a["residency"]["method"] in ("cachestat", "mincore"), a["residency"]
assert isinstance(a["uncached"]["available"], bool)
t = a["target_residency"]
assert t["pages"] == 48 << 8 and t["mincore_cached"] is not None
if t["cachestat_cached"] is not None:
    assert abs(t["cachestat_cached"] - t["mincore_cached"]) <= 0.03 * max(1, t["mincore_cached"]), t
assert b["pressure"]["readable"] is False and "CONFIG_PSI" in b["pressure"]["why"], b["pressure"]
assert b["residency"]["method"] == "mincore" and "FAULTLINE_NO_CACHESTAT" in b["residency"]["why"]
' "$E2E_TMP/cs.json" "$E2E_TMP/cs2.json"

e2e_done
