#!/bin/bash
# e2e verdict: faultline --verdict with a tiny budget (70 s: one round of
# 1 s runs over a 128 MiB file, 32 MiB of memory) finishes within budget +
# 10 %, prints the plan before anything runs and a verdict line per
# workload, writes verdict.json (every engine's median is the number of
# its run, the job text of every run parses), the CSV (rows of every
# run) and verdict.html (tests/verdict-html-check: it parses and holds
# every figure and table it names), and removes its scratch file. Then
# what it refuses.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "$(id -u)" != 0 ]; then
	# As nobody there is no cgroup, and reserve_mem needs more than a
	# tiny budget's memory: the refusal is the test.
	expect_exit 2 "a missing job file with --verdict is refused" "$FAULTLINE" --verdict x.job
	e2e_done
	exit
fi

budget=70
t0=$(date +%s.%N)
"$FAULTLINE" --verdict --budget=${budget}s --directory="$E2E_TMP" --output="$E2E_TMP" --quiet \
	>"$E2E_TMP/v.out" 2>"$E2E_TMP/v.err"
rc=$?
t1=$(date +%s.%N)
[ $rc = 0 ] && pass "verdict exits 0" || fail "verdict exits 0" "exit $rc" "$(tail -5 "$E2E_TMP/v.err")"
$PY -c "import sys; sys.exit(0 if $t1 - $t0 <= $budget * 1.1 else 1)" &&
	pass "within budget + 10 % ($(printf '%.0f' "$($PY -c "print($t1 - $t0)")") s of $budget)" ||
	fail "within budget + 10 %" "took $($PY -c "print($t1 - $t0)") s"
head -1 "$E2E_TMP/v.out" | grep -q "^faultline verdict" && sed -n 2p "$E2E_TMP/v.out" | grep -q "^plan: budget 70 s" &&
	grep -q "estimated" "$E2E_TMP/v.out" && pass "the plan and its estimate come first" ||
	fail "the plan and its estimate come first" "$(head -5 "$E2E_TMP/v.out")"
for w in "uniform random 4k reads" "zipf random 4k reads" "scan" "write mix" "async hazard"; do
	grep -qE "^$w[^:]*: .*(wins|tie within noise|keeps up|no verdict|no engine)" "$E2E_TMP/v.out" &&
		pass "a verdict for $w" || fail "a verdict for $w" "$(grep -A2 "^$w" "$E2E_TMP/v.out" | head -3)"
done
# The final block opens with the answer: the line after its title is the
# first workload's verdict, and the five lines from there are one per
# workload, before any detail.
$PY - "$E2E_TMP/v.out" <<'PYEOF' >"$E2E_TMP/a.out" 2>&1
import sys
lines = open(sys.argv[1]).read().split("\n")
i = next(i for i, l in enumerate(lines) if l.startswith("== the verdict"))
first = lines[i + 1:i + 6]
want = ["uniform random 4k reads", "zipf random 4k reads", "scan", "write mix", "async hazard"]
assert all(l.startswith(w) for l, w in zip(first, want)) and len(first) == 5, first
PYEOF
[ $? = 0 ] && pass "the final block begins with one line per workload" ||
	fail "the final block begins with one line per workload" "$(cat "$E2E_TMP/a.out")"
for f in verdict.json verdict.csv verdict.html; do
	[ -s "$E2E_TMP/$f" ] && pass "$f written" || fail "$f written"
done
ls "$E2E_TMP"/faultline-verdict.*.dat >/dev/null 2>&1 && fail "the scratch file is removed" ||
	pass "the scratch file is removed"

# verdict.json: the medians are the runs' numbers; a sentence's number is
# present (never a null shown as text); every job text is a job file.
$PY - "$E2E_TMP/verdict.json" "$E2E_TMP/verdict.csv" >"$E2E_TMP/j.out" 2>&1 <<'PYEOF'
import csv, json, sys
d = json.load(open(sys.argv[1]))
bad = []
assert len(d["workloads"]) == 5, "workloads: %d" % len(d["workloads"])
for w in d["workloads"]:
    vals = {}
    for l in d["lines"]:
        if l["workload"] == w["key"] and l["value"] is not None:
            vals.setdefault(l["engine"], []).append(l["value"])
    for k, e in w["engines"].items():
        if e["ok"]:
            v = sorted(vals.get(k, []))
            if not v or abs(e["median"] - v[len(v) // 2]) > 1e-6 * e["median"] and len(v) % 2:
                bad.append("%s/%s median %s, runs %s" % (w["key"], k, e["median"], v))
        elif not e["error"]:
            bad.append("%s/%s no number and no reason" % (w["key"], k))
    for s in w["evidence"]:
        if s["key"] != "no_result" and s["value"] is None:
            bad.append("%s: sentence without its number: %s" % (w["key"], s["text"]))
rows = list(csv.DictReader(open(sys.argv[2])))
jobs = {r["job"] for r in rows}
for l in d["lines"]:
    if not l["skipped"] and l["job"] not in jobs:
        bad.append("no CSV rows for %s" % l["job"])
    if not l["command"].endswith(l["job"] + ".job"):
        bad.append("command %s" % l["command"])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
[ $? = 0 ] && pass "verdict.json: medians are the runs' numbers, CSV rows for every run" ||
	fail "verdict.json: medians are the runs' numbers, CSV rows for every run" "$(head -5 "$E2E_TMP/j.out")"

# The fair fight: io_uring O_DIRECT at the probed depth in one thread
# beside depth 1 per thread, each engine's concurrency named; the scan's
# pool reads ahead.
pycheck "the depth cell runs at the probed depth, every engine's concurrency is named" '
import json, sys
d = json.load(open(sys.argv[1]))
depth = d["plan"]["io_uring_depth"]
assert isinstance(depth, int) and depth >= 1, d["plan"]
for w in d["workloads"]:
    for k, e in w["engines"].items():
        assert not e["ok"] or e["concurrency"], (w["key"], k, e)
    if w["key"] in ("uniform", "zipf", "scan"):
        e = w["engines"]["io_uring-depth"]
        assert e["ok"] and e["concurrency"] == "1 thread x depth %d" % depth, e
for l in d["lines"]:
    if l["engine"] == "io_uring-depth" and not l["skipped"]:
        assert "iodepth=%d\n" % depth in l["job_text"], l["job_text"]
    if l["workload"] == "scan" and l["engine"] == "bufpool":
        assert "pool_prefetch=%d\n" % d["plan"]["pool_prefetch"] in l["job_text"], l["job_text"]
        assert l["result"]["jobs"][0]["faultline"]["pool"]["pages_prefetched"] > 0, l["result"]["jobs"][0]["faultline"]["pool"]
' "$E2E_TMP/verdict.json"
grep -q "^probe: io_uring O_DIRECT at depth [0-9]* (probed in" "$E2E_TMP/v.out" &&
	pass "the device's queue depth is probed, and said" || fail "the device's queue depth is probed, and said" "$(grep probe "$E2E_TMP/v.out")"

# DAMON's pageout is a host fact exactly when the live host runs one
# (this VM does: a paddr pageout scheme, memory idle 30 s).
pycheck "host facts: DAMON's pageout, with its idle time, exactly when a kdamond runs one" '
import errno, glob, json, os, sys, time
def state(k):                   # EBUSY while another process holds the lock
    for _ in range(600):
        try:
            return open(k + "/state").read().strip()
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            time.sleep(0.005)
    raise TimeoutError(k)
want = None
for k in sorted(glob.glob("/sys/kernel/mm/damon/admin/kdamonds/[0-9]*")):
    if state(k) != "on":
        continue
    for c in sorted(glob.glob(k + "/contexts/[0-9]*")):
        if open(c + "/operations").read().strip() != "paddr":
            continue
        aggr = int(open(c + "/monitoring_attrs/intervals/aggr_us").read())
        for s in sorted(glob.glob(c + "/schemes/[0-9]*")):
            if open(s + "/action").read().strip() == "pageout":
                idle = int(open(s + "/access_pattern/age/min").read()) * aggr / 1e6
                want = idle if want is None else min(want, idle)
facts = [f for f in json.load(open(sys.argv[1]))["host_facts"] if f["key"] == "damon_pageout"]
text = open(sys.argv[2]).read()
if want is None:
    assert not facts, facts
else:
    assert len(facts) == 1 and facts[0]["value"] == want, (want, facts)
    assert "DAMON pages out memory left idle for %.0f s" % want in text, text
' "$E2E_TMP/verdict.json" "$E2E_TMP/v.out"

# The reproduce command works: one run's job file, as written, parses.
job=$(ls "$E2E_TMP"/verdict-jobs/*.job | head -1)
expect_exit 0 "a run's job file parses as written" "$FAULTLINE" --parse-only "$job"

"$here/verdict-html-check" "$E2E_TMP/verdict.html" >"$E2E_TMP/h.out" 2>&1 &&
	pass "verdict.html parses and holds every figure and table it names" ||
	fail "verdict.html parses and holds every figure and table it names" "$(cat "$E2E_TMP/h.out")"
# ... and opens in a real browser, offline, with every figure decoded and
# shown (chromium, headless; make check installs it).
"$here/verdict-html-render" "$E2E_TMP/verdict.html" >"$E2E_TMP/r.out" 2>&1
case $? in
0) pass "verdict.html renders in a headless browser: $(tail -1 "$E2E_TMP/r.out")" ;;
77) echo "# verdict.html not opened in a browser: $(cat "$E2E_TMP/r.out")" ;;
*) fail "verdict.html renders in a headless browser" "$(cat "$E2E_TMP/r.out")" ;;
esac
# ... and the check can fail: a figure taken out.
$PY - "$E2E_TMP/verdict.html" "$E2E_TMP/cut.html" <<'PYEOF'
import re, sys
s = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"<figure id='fig-answer-uniform'>.*?</figure>", "", s, flags=re.S)
                             if "fig-answer-uniform" in s else s.replace("<table id='tab-plan'", "<div id='x'"))
PYEOF
"$here/verdict-html-check" "$E2E_TMP/cut.html" >/dev/null 2>&1 && fail "the HTML check fails on a page missing a figure" ||
	pass "the HTML check fails on a page missing a figure"
$PY - "$E2E_TMP/verdict.html" "$E2E_TMP/broken.html" <<'PYEOF'
import re, sys
s = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"src='data:image/png;base64,[A-Za-z0-9+/=]{8}", "src='data:image/png;base64,AAAAAAAA", s, count=1))
PYEOF
if grep -q "data:image/png" "$E2E_TMP/verdict.html" && command -v chromium >/dev/null; then
	"$here/verdict-html-render" "$E2E_TMP/broken.html" >"$E2E_TMP/r.out" 2>&1 &&
		fail "the browser check fails on a figure that does not decode" "$(cat "$E2E_TMP/r.out")" ||
		pass "the browser check fails on a figure that does not decode"
fi
# ... and fails on a page whose answers are pushed below the first screen.
sed "s|<div id='answers'>|<div style='height:900px'></div><div id='answers'>|" "$E2E_TMP/verdict.html" >"$E2E_TMP/low.html"
if command -v chromium >/dev/null; then
	"$here/verdict-html-render" "$E2E_TMP/low.html" >"$E2E_TMP/r.out" 2>&1 &&
		fail "the browser check fails on answers below the first screen" "$(cat "$E2E_TMP/r.out")" ||
		{ grep -q "not on the first screen" "$E2E_TMP/r.out" &&
			pass "the browser check fails on answers below the first screen" ||
			fail "the browser check fails on answers below the first screen" "$(cat "$E2E_TMP/r.out")"; }
fi
# Without matplotlib the page says so and keeps the tables.
FAULTLINE_PYTHON=/bin/false "$here/../plot/verdict-html" "$E2E_TMP/verdict.json" "$E2E_TMP/verdict.csv" \
	-o "$E2E_TMP/nofig.html" >/dev/null 2>&1 && "$here/verdict-html-check" "$E2E_TMP/nofig.html" >/dev/null &&
	grep -q "id='no-figures'" "$E2E_TMP/nofig.html" && pass "without matplotlib: tables, and why no figures" ||
	fail "without matplotlib: tables, and why no figures"

# An existing file (--filename) is only read: no write mix without
# --write-probe, the file unchanged, no scratch file made beside it.
mkdir -p "$E2E_TMP/given"	# out2 is not made: the verdict makes its --output folder
mkdata "$E2E_TMP/given/data" 128
sum0=$(md5sum <"$E2E_TMP/given/data")
"$FAULTLINE" --verdict --budget=60s --filename="$E2E_TMP/given/data" --output="$E2E_TMP/out2" --quiet \
	>"$E2E_TMP/f.out" 2>"$E2E_TMP/f.err"
rc=$?
[ $rc = 0 ] && pass "verdict on a given file exits 0" || fail "verdict on a given file exits 0" "exit $rc" "$(tail -5 "$E2E_TMP/f.err")"
grep -q "^plan: .*target $E2E_TMP/given/data" "$E2E_TMP/f.out" && grep -q "read only unless --write-probe" "$E2E_TMP/f.out" &&
	grep -qE "^zipf random 4k reads[^:]*: .*(wins|tie within noise)" "$E2E_TMP/f.out" &&
	! grep -q "v-write-" "$E2E_TMP/f.out" &&
	pass "a given file: the plan names it, says why there is no write mix, reads are judged" ||
	fail "a given file: the plan names it, says why there is no write mix, reads are judged" "$(head -4 "$E2E_TMP/f.out")"
[ "$(md5sum <"$E2E_TMP/given/data")" = "$sum0" ] && [ "$(ls "$E2E_TMP/given")" = data ] &&
	pass "a given file is unchanged and nothing is made beside it" ||
	fail "a given file is unchanged and nothing is made beside it" "$(ls "$E2E_TMP/given")"

expect_exit 2 "a missing job file with --verdict is refused" "$FAULTLINE" --verdict x.job
expect_exit 2 "a job option with --verdict is refused" "$FAULTLINE" --verdict --bs=8k

# The user's own workload: a job file. Each job is a workload named after
# it, judged through mmap, bufpool and io_uring O_DIRECT at its own memory
# (mem_limit=32m), within the budget; a write job on the user's own file
# is not judged without --write-probe, and the file is not written; every
# run's job file in verdict-jobs/ runs as written.
mkdir -p "$E2E_TMP/jf"
# A trace to replay: a second of zipf reads of the file, recorded.
expect_exit 0 "a trace recorded (write_iolog)" "$FAULTLINE" --quiet --output=/dev/null --name=rec \
	--filename="$E2E_TMP/given/data" --size=128m --rw=randread --random_distribution=zipf:1.1 \
	--bs=4k --runtime=1s --time_based --write_iolog="$E2E_TMP/trace.log"
cat >"$E2E_TMP/mine.job" <<JOBEOF
; a database's point lookups, and its log
[global]
filename=$E2E_TMP/given/data
size=128m
numjobs=2
[lookups]
rw=randread
bs=4k
random_distribution=zipf:0.9
mem_limit=32m
ioengine=psync
rate_iops=500
[log]
rw=write
bs=16k
[trace]
read_iolog=$E2E_TMP/trace.log
replay_no_stall=1
mem_limit=32m
JOBEOF
expect_exit 2 "a job file and --filename are refused together" "$FAULTLINE" --verdict \
	--filename="$E2E_TMP/given/data" "$E2E_TMP/mine.job"
budget=45
t0=$(date +%s.%N)
"$FAULTLINE" --verdict --budget=${budget}s --output="$E2E_TMP/jf" --quiet "$E2E_TMP/mine.job" \
	>"$E2E_TMP/jf.out" 2>"$E2E_TMP/jf.err"
rc=$?
t1=$(date +%s.%N)
[ $rc = 0 ] && pass "a job-file verdict exits 0" || fail "a job-file verdict exits 0" "exit $rc" "$(tail -5 "$E2E_TMP/jf.err")"
$PY -c "import sys; sys.exit(0 if $t1 - $t0 <= $budget * 1.1 else 1)" &&
	pass "a job-file verdict within budget + 10 % ($(printf '%.0f' "$($PY -c "print($t1 - $t0)")") s of $budget)" ||
	fail "a job-file verdict within budget + 10 %" "took $($PY -c "print($t1 - $t0)") s"
pycheck "verdict.json: a workload named after the job, judged through mmap, bufpool and io_uring O_DIRECT, with a winner" '
import json, sys
d = json.load(open(sys.argv[1]))
w = {x["key"]: x for x in d["workloads"]}
assert set(w) == {"lookups", "log", "trace"}, list(w)
lk = w["lookups"]
assert lk["source"] == "job" and lk["memory_budget_bytes"] == 32 << 20, lk
for k in ("mmap-normal", "mmap-random", "bufpool", "io_uring-direct", "io_uring-depth"):
    assert lk["engines"][k]["ok"], (k, lk["engines"][k])
assert lk["winner"] in lk["engines"], lk["winner"]
assert lk["headline"].startswith("job \x27lookups\x27"), lk["headline"]
# A rate (rate_iops=500, two threads): judged by p99 at that rate.
assert lk["by"] == "p99_us" and lk["better"] == "lower" and lk["rate_iops"] == 1000, lk
assert " at 1000 IOPS" in lk["headline"] and ("lower p99" in lk["headline"] or "tie" in lk["headline"]
                                               or "no engine held" in lk["headline"]), lk["headline"]
assert w["log"]["skipped"] and "--write-probe" in w["log"]["skipped"], w["log"]
assert d["plan"]["jobfile"].endswith("mine.job"), d["plan"]
if d["plan"]["vmcache"]:
    assert lk["engines"]["vmcache"]["ok"], lk["engines"]["vmcache"]
# The replay (replay_no_stall=1): judged by the time to replay all of it,
# through every engine (O_DIRECT from the trace widened to whole blocks),
# the time of each said; the depth cell beside the answer, not in it.
tr = w["trace"]
assert tr["by"] == "time_s" and tr["better"] == "lower" and tr["winner"], tr
assert tr["winner"] != "io_uring-depth" and tr["engines"]["io_uring-depth"]["whatif"], tr
for k in ("mmap-normal", "bufpool", "io_uring-direct", "io_uring-depth"):
    assert tr["engines"][k]["ok"], (k, tr["engines"][k])
assert any(s["key"] == "replay_elapsed_s" for s in tr["evidence"]), tr["evidence"]
for l in d["lines"]:
    if l["workload"] == "trace":
        t = l["job_text"]
        assert "replay_no_stall=1" in t and "time_based" not in t, t
        assert ("direct.iolog" in t) == l["engine"].startswith("io_uring"), t
        continue
    assert l["workload"] == "lookups", l["job"]
    t = l["job_text"]
    assert "random_distribution=zipf:0.9" in t and "numjobs=2" in t and "ioengine=psync" not in t, t
    if l["engine"] == "bufpool":
        assert "pool_size=32m" in t, t
    if l["engine"].startswith("mmap"):
        assert "mem_limit=32m" in t, t
' "$E2E_TMP/jf/verdict.json"
grep -q "^job 'log' of .*: not judged: .*--write-probe" "$E2E_TMP/jf.out" &&
	pass "the write job on the user's file: not judged, and why" ||
	fail "the write job on the user's file: not judged, and why" "$(grep log "$E2E_TMP/jf.out")"
[ "$(md5sum <"$E2E_TMP/given/data")" = "$sum0" ] && pass "the user's file is unchanged" ||
	fail "the user's file is unchanged"
if [ -f "$E2E_TMP/jf/verdict-jobs/v-lookups-bufpool-r1.job" ]; then
	expect_exit 0 "a job-file verdict's run reproduces from verdict-jobs/" "$FAULTLINE" --quiet \
		--output=/dev/null "$E2E_TMP/jf/verdict-jobs/v-lookups-bufpool-r1.job"
else
	fail "a job-file verdict's run is in verdict-jobs/" "$(ls "$E2E_TMP/jf/verdict-jobs")"
fi
"$here/verdict-html-render" "$E2E_TMP/jf/verdict.html" >"$E2E_TMP/r.out" 2>&1
case $? in
0) pass "a job-file verdict.html: the answer on the first screen" ;;
77) ;;
*) fail "a job-file verdict.html: the answer on the first screen" "$(cat "$E2E_TMP/r.out")" ;;
esac
# An untimed trace (fio iolog v2, no timestamps): a real SQLite run's reads
# (tests/fixtures/verdict/README), its file a symbolic link to the data, at
# mem_limit=32m: judged by the time to replay all of it, with a winner and
# its ratio or a tie, never "no verdict", within the budget. The plan, the
# text and verdict.json say what each cell ran.
mkdir -p "$E2E_TMP/sq"
mkdata "$E2E_TMP/sq/data" 41
ln -s data "$E2E_TMP/sq/sqlite.db"
zcat "$here/fixtures/verdict/sqlite-v2.iolog.gz" | sed "s|^sqlite.db |$E2E_TMP/sq/sqlite.db |" \
	>"$E2E_TMP/sq/trace.v2.iolog"
cat >"$E2E_TMP/sq/sq.job" <<JOBEOF
[sqlite]
read_iolog=$E2E_TMP/sq/trace.v2.iolog
mem_limit=32m
JOBEOF
budget=45
t0=$(date +%s.%N)
"$FAULTLINE" --verdict --budget=${budget}s --output="$E2E_TMP/sq" --quiet "$E2E_TMP/sq/sq.job" \
	>"$E2E_TMP/sq.out" 2>"$E2E_TMP/sq.err"
rc=$?
t1=$(date +%s.%N)
[ $rc = 0 ] && pass "an untimed trace's verdict exits 0" ||
	fail "an untimed trace's verdict exits 0" "exit $rc" "$(tail -5 "$E2E_TMP/sq.err")"
$PY -c "import sys; sys.exit(0 if $t1 - $t0 <= $budget * 1.1 else 1)" &&
	pass "an untimed trace's verdict within budget + 10 % ($(printf '%.0f' "$($PY -c "print($t1 - $t0)")") s of $budget)" ||
	fail "an untimed trace's verdict within budget + 10 %" "took $($PY -c "print($t1 - $t0)") s"
grep -qE "^job 'sqlite' .*: .*(replays your trace [0-9.]+x faster than|a tie within noise between .* \([0-9.]+x, )" \
	"$E2E_TMP/sq.out" && ! grep -q "no verdict" "$E2E_TMP/sq.out" &&
	pass "an untimed trace: a winner with its ratio, or a tie, not \"no verdict\"" ||
	fail "an untimed trace: a winner with its ratio, or a tie, not \"no verdict\"" "$(grep "^job 'sqlite'" "$E2E_TMP/sq.out")"
grep -q "^plan:   cells: mmap-normal \[mem_limit 32 MiB, 1 thread x depth 1\]" "$E2E_TMP/sq.out" &&
	pass "the plan says what each cell runs" || fail "the plan says what each cell runs" "$(grep "^plan" "$E2E_TMP/sq.out")"
pycheck "an untimed trace: judged by time, the winner the fastest ranked engine, every cell as it ran" '
import json, sys
d = json.load(open(sys.argv[1]))
(w,) = d["workloads"]
assert w["by"] == "time_s" and w["better"] == "lower" and w["unit"] == "s", w
assert w["trace_ios"] == 14123 and w["streams"] == 1, w
e = w["engines"]
ranked = {k: x["rank"]["median"] for k, x in e.items() if x["ok"] and x["ranked"]}
assert len(ranked) >= 2 and w["winner"] in ranked, (w["winner"], ranked)
assert w["tie"] or min(ranked, key=ranked.get) == w["winner"], (w["winner"], ranked)
assert w["tie"] or w["ratio"] >= 1.0, w
assert not e["io_uring-depth"]["ranked"] and "reads in flight" in e["io_uring-depth"]["whatif"], e["io_uring-depth"]
p = d["plan"]
assert p["threads"] is None, p
cells = {c["engine"]: c for c in p["cells"] if c["workload"] == "sqlite"}
for k in ("mmap-normal", "mmap-random"):
    assert cells[k]["memory_limit"] == "mem_limit" and cells[k]["memory_bytes"] == 32 << 20, cells[k]
assert cells["bufpool"]["memory_limit"] == "pool_size" and cells["bufpool"]["memory_bytes"] == 32 << 20, cells
for k, c in cells.items():
    assert c["threads"] == 1 and (c["iodepth"] == 1) == (k != "io_uring-depth"), c
for l in d["lines"]:
    assert "replay_no_stall=1\n" in l["job_text"], l["job_text"]
    assert "mem_limit=32m\n" in l["job_text"] or not l["engine"].startswith("mmap"), l["job_text"]
' "$E2E_TMP/sq/verdict.json"
"$here/verdict-html-check" "$E2E_TMP/sq/verdict.html" >"$E2E_TMP/h.out" 2>&1 && grep -q "id='tab-cells'" "$E2E_TMP/sq/verdict.html" &&
	pass "an untimed trace: verdict.html holds its figure and what each cell ran" ||
	fail "an untimed trace: verdict.html holds its figure and what each cell ran" "$(cat "$E2E_TMP/h.out")"

# A timed trace of two streams, as --capture writes one (a job per traced
# thread, fio iolog version 3): one workload of both, replayed together as
# one job's two threads, judged both ways (at its own pace by p99 and
# whether each engine keeps up with the trace's own rate, and as fast as it
# goes by time), each answer saying which it is. The streams are the
# fixture's reads dealt alternately, 200 us apart.
$PY - "$E2E_TMP/sq/trace.v2.iolog" "$E2E_TMP/sq" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().split("\n")[1:]
reads = [l for l in lines if " read " in l]
f = reads[0].split(" ")[0]
for k in (0, 1):
    with open("%s/s%d.iolog" % (sys.argv[2], k), "w") as o:
        o.write("fio version 3 iolog\n0 %s add\n0 %s open\n" % (f, f))
        for i, l in enumerate(reads[k::2]):
            o.write("%d %s\n" % (i * 200, l))
PYEOF
printf "[global]\nrw=read\nmem_limit=32m\n[pg-1]\nread_iolog=%s\n[pg-2]\nread_iolog=%s\n" \
	"$E2E_TMP/sq/s0.iolog" "$E2E_TMP/sq/s1.iolog" >"$E2E_TMP/sq/streams.job"
mkdir -p "$E2E_TMP/st"
budget=60
t0=$(date +%s.%N)
"$FAULTLINE" --verdict --budget=${budget}s --output="$E2E_TMP/st" --quiet "$E2E_TMP/sq/streams.job" \
	>"$E2E_TMP/st.out" 2>"$E2E_TMP/st.err"
rc=$?
t1=$(date +%s.%N)
[ $rc = 0 ] && pass "a timed two-stream trace's verdict exits 0" ||
	fail "a timed two-stream trace's verdict exits 0" "exit $rc" "$(tail -5 "$E2E_TMP/st.err")"
$PY -c "import sys; sys.exit(0 if $t1 - $t0 <= $budget * 1.1 else 1)" &&
	pass "a timed trace's verdict within budget + 10 % ($(printf '%.0f' "$($PY -c "print($t1 - $t0)")") s of $budget)" ||
	fail "a timed trace's verdict within budget + 10 %" "took $($PY -c "print($t1 - $t0)") s"
grep -qE "^the 2 streams of .*streams.job \(replayed together, at its own pace\) at [0-9.k]+ IOPS \(the trace's own pace\)" "$E2E_TMP/st.out" &&
	grep -qE "^the 2 streams of .*streams.job \(replayed together, as fast as it goes\): .*(replays your trace [0-9.]+x faster than|a tie within noise)" "$E2E_TMP/st.out" &&
	! grep -q "no verdict" "$E2E_TMP/st.out" &&
	pass "a timed trace: two answers, at its own pace and as fast as it goes, each saying which" ||
	fail "a timed trace: two answers, at its own pace and as fast as it goes, each saying which" "$(grep "^the 2 streams" "$E2E_TMP/st.out")"
pycheck "a timed trace: both streams in every cell, the pace the trace's own, the depth cell only as fast as it goes" '
import json, re, sys
d = json.load(open(sys.argv[1]))
w = {x["key"]: x for x in d["workloads"]}
assert set(w) == {"streams", "streams-fast"}, list(w)
p, f = w["streams"], w["streams-fast"]
assert p["by"] == "p99_us" and p["paced"] and f["by"] == "time_s" and not f["paced"], (p, f)
assert p["streams"] == 2 and f["streams"] == 2 and f["trace_ios"] == 14123, f
# 14123 reads, 7062 and 7061 per stream, 200 us apart: the longer spans
# 7061 * 200 us; the plan bound is well past it.
assert abs(p["rate_iops"] - 14123 / (7061 * 200e-6)) < 1e-6 * p["rate_iops"], p["rate_iops"]
assert "io_uring-depth" not in p["engines"] and f["engines"]["io_uring-depth"]["whatif"], (p, f)
for l in d["lines"]:
    t = l["job_text"]
    assert "numjobs=2\n" in t and len(re.search("read_iolog=(.*)", t).group(1).split(":")) == 2, t
    assert ("replay_no_stall=1\n" in t) == (l["workload"] == "streams-fast"), t
' "$E2E_TMP/st/verdict.json"

# A link to a missing file is named as one, with where it points, never
# "File exists": in a verdict of a trace that reads it, and in a plain job.
ln -s nowhere.db "$E2E_TMP/sq/gone.db"
sed "s|$E2E_TMP/sq/sqlite.db |$E2E_TMP/sq/gone.db |" "$E2E_TMP/sq/trace.v2.iolog" >"$E2E_TMP/sq/gone.iolog"
printf "[gone]\nread_iolog=%s\nmem_limit=32m\n" "$E2E_TMP/sq/gone.iolog" >"$E2E_TMP/sq/gone.job"
expect_exit 2 "a verdict of a trace whose file is a link to nothing is refused" \
	"$FAULTLINE" --verdict --budget=45s --output="$E2E_TMP/sq" --quiet "$E2E_TMP/sq/gone.job"
expect_err_has "gone.db is a symbolic link to nowhere.db, which does not exist" "... naming the link and its target"
grep -q "File exists" "$E2E_TMP/err" && fail "... and not \"File exists\"" "$(cat "$E2E_TMP/err")" || pass "... and not \"File exists\""
expect_exit 2 "a read job on a link to nothing fails" "$FAULTLINE" --quiet --output=/dev/null --name=r \
	--filename="$E2E_TMP/sq/gone.db" --rw=randread --size=4m --runtime=1s
expect_err_has "gone.db is a symbolic link to nowhere.db, which does not exist" "... naming the link and its target"
grep -q "File exists" "$E2E_TMP/err" && fail "... and not \"File exists\"" "$(cat "$E2E_TMP/err")" || pass "... and not \"File exists\""
[ ! -e "$E2E_TMP/sq/nowhere.db" ] && pass "nothing is made through the link" || fail "nothing is made through the link"

# A CSV that cannot be written (a full disk: /dev/full fails every
# write with ENOSPC) is not reported as written: exit 1 naming it, after
# the first run (no other run is worth its time then).
printf '[r]\nfilename=%s\nsize=16m\nrw=randread\nbs=4k\n' "$E2E_TMP/given/data" >"$E2E_TMP/full.job"
mkdir -p "$E2E_TMP/full"
expect_exit 1 "a verdict whose CSV the disk cannot hold exits 1" "$FAULTLINE" --verdict --budget=20s \
	--csv=/dev/full --output="$E2E_TMP/full" --quiet "$E2E_TMP/full.job"
expect_err_has "verdict: --csv=/dev/full: No space left on device" "... naming the CSV and the error"
[ "$(grep -c '^\[ *[0-9]* s\] v-r-' "$E2E_TMP/out")" = 1 ] && pass "... and stops after the run it could not keep" ||
	fail "... and stops after the run it could not keep" "$(grep '^\[' "$E2E_TMP/out")"
expect_exit 2 "too short a budget is refused, before anything runs" \
	"$FAULTLINE" --verdict --budget=10s --directory="$E2E_TMP"
expect_err_has "give at least" "... saying what budget would do"
if [ -d /dev/shm ]; then
	expect_exit 2 "a directory in memory is refused" "$FAULTLINE" --verdict --budget=5m --directory=/dev/shm
fi
e2e_done
