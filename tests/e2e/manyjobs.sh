#!/usr/bin/env bash
# e2e: alone (bounds where in time 200 jobs' I/O lands)
# Many jobs at once (issue 27): each row's counts belong to its own
# interval even when the sampler is slow. 200 psync jobs read one warm
# file for 1 s at --interval=100ms while FAULTLINE_SAMPLER_DELAY_US makes
# every row wait, as thousands of jobs would: a sample then takes four
# seconds. A sampler that read a job's counters only when it reached
# its row would put the I/O of the next seconds into the first 100 ms;
# reading every job's counters first keeps each row's I/O in its span.
# No timing is asserted: only where the I/O lands, and that the
# sampler's own cost is reported (summary, JSON, warning).
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 16
cat "$f" >/dev/null		# warm: the jobs read the page cache
njobs=200
{
	printf '[global]\nfilename=%s\nioengine=psync\nrw=randread\nbs=4k\nruntime=1s\ntime_based\ninvalidate=0\n' "$f"
	for i in $(seq "$njobs"); do printf '[j%d]\n' "$i"; done
} >"$E2E_TMP/many.job"

# 20 ms per row: a sample of 200 jobs takes four seconds, longer than
# the jobs run. Read late, the first rows would hold about 90 % of the
# run's I/O; read first, about 10 % (a job's first 100 ms of its 1 s).
# The bounds (70 %) leave room for a host that starves the jobs.
expect_exit 0 "$njobs jobs with a slow sampler" env FAULTLINE_SAMPLER_DELAY_US=20000 "$FAULTLINE" --quiet \
	--interval=100ms --csv="$E2E_TMP/many.csv" --output-format=normal,json --output="$E2E_TMP/many.out" \
	"$E2E_TMP/many.job"
cp "$E2E_TMP/err" "$E2E_TMP/many.err"
# Every job has rows and they add up to its JSON total; argv: the CSV,
# the summary then the JSON, the number of jobs.
totals_py='
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
txt = open(sys.argv[2]).read()
doc = json.loads(txt[txt.index("\n{") + 1:])	# the summary, then the JSON
n = int(sys.argv[3])
jobs = {j["jobname"]: j["read"]["total_ios"] for j in doc["jobs"]}
assert len(jobs) == n, len(jobs)
got, err = {}, {}
for r in rows:
    iops, dt = float(r["iops"]), float(r["dt_s"])
    got[r["job"]] = got.get(r["job"], 0) + iops * dt
    # The cells are rounded (iops to 0.1, dt_s to 1 ms): the count of a row
    # is known to within half a unit of each.
    err[r["job"]] = err.get(r["job"], 0) + 0.05 * dt + iops * 0.0005
assert set(got) == set(jobs), (len(got), len(jobs))
for j, tot in jobs.items():
    assert abs(got[j] - tot) <= max(2, tot * 0.002) + err[j], (j, got[j], tot, err[j])
'
pycheck "every job has rows, and its rows add up to its JSON total" \
	"$totals_py" "$E2E_TMP/many.csv" "$E2E_TMP/many.out" "$njobs"
# Where a run's I/O lands in time: the share of all I/O in the busiest
# 100 ms, spreading each row's I/O evenly over its span; argv: the CSV,
# the bound, and 1 to also bound the first rows (each 0.1 s of 1 s).
bins_py='
import csv, math, sys
iv, bound, first_too = 0.1, float(sys.argv[2]), sys.argv[3] == "1"
rows = list(csv.DictReader(open(sys.argv[1])))
bins, total = {}, 0.0
for r in rows:
    t, dt = float(r["t_s"]), float(r["dt_s"])
    ios = float(r["iops"]) * dt
    if dt <= 0:
        continue
    total += ios
    a = t - dt
    k = math.floor(a / iv)
    while k * iv < t:
        lo, hi = max(a, k * iv), min(t, (k + 1) * iv)
        if hi > lo:
            bins[k] = bins.get(k, 0.0) + ios * (hi - lo) / dt
        k += 1
assert total > 0
worst = max(bins, key=bins.get)
share = bins[worst] / total
assert share <= bound, ("one interval holds", share, "of all I/O", worst * iv)
# A job'"'"'s first row that ends at the first boundary spans its first
# 100 ms of a 1 s run: read late, it would hold nearly all of the job'"'"'s
# I/O. (A first pass held up and taken again ends later: its rows are
# longer, and the bins above say where their I/O landed.)
first, whole = {}, {}
for r in rows:
    ios = float(r["iops"]) * float(r["dt_s"])
    whole[r["job"]] = whole.get(r["job"], 0) + ios
    if r["job"] not in first:
        first[r["job"]] = ios if float(r["dt_s"]) <= 1.5 * iv else None
short = [j for j, v in first.items() if v is not None]
held = sum(first[j] for j in short)
assert not first_too or not short or held <= bound * sum(whole[j] for j in short), \
    ("first rows hold", held / sum(whole[j] for j in short))
'
# A timing bound: the root pass checks it; under AddressSanitizer every
# request is several times slower and the 200 delayed rows' 20 ms each
# weigh more, so that pass checks the counts above, not this share.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	echo "# the 70 % bound: checked by the root pass, not under ASan (a timing bound)"
else
pycheck "no 100 ms of the run holds 70 % of its I/O; nor do the first rows (0.1 s of 1 s)" \
	"$bins_py" "$E2E_TMP/many.csv" 0.7 1
fi
pycheck "the sampler reports its own time: a sample of $njobs delayed rows takes at least $njobs x 20 ms, its CPU time far less" '
import json, sys
txt = open(sys.argv[1]).read()
doc = json.loads(txt[txt.index("\n{") + 1:])
s = doc["faultline"]["sampler"]
n = int(sys.argv[2])
assert s["samples"] >= 1, s
assert s["time_max_ms"] >= n * 20 * 0.95, s
assert s["time_median_ms"] <= s["time_p99_ms"] <= s["time_max_ms"] * 1.01, s
assert s["over_quarter_interval"] >= 1, s
# the delayed rows sleep: wall time that is not the CPU time of the sampling thread
assert s["samples_blocked"] >= 1 and s["samples_blocked"] <= s["samples"], s
assert 0 < s["cpu_median_ms"] <= s["cpu_max_ms"] < s["time_max_ms"] / 2, s
assert s["thread_policy"] == "SCHED_FIFO 1" or s["thread_policy"].startswith("SCHED_OTHER nice "), s
# every job counted right at the boundary, whatever the rows cost after
assert s["read_skew_max_ms"] < s["time_max_ms"], s
assert "sampler:" in txt and "OVER a quarter of the interval" in txt, "summary line"
assert "CPU" in txt.split("sampler:")[1].split("\n")[0] and "preempted in" in txt, "summary line"
' "$E2E_TMP/many.out" "$njobs"
if grep -q "the sampler took more than a quarter of the 100 ms interval" "$E2E_TMP/many.err"; then
	pass "a warning says the sampler is the bottleneck"
else
	fail "a warning says the sampler is the bottleneck" "$(head -c 600 "$E2E_TMP/many.err")"
fi

# A pass over the jobs' counters held up: the controller preempted for
# 800 ms halfway through the first one (FAULTLINE_SAMPLER_STALL_US, as on
# a loaded host among 200 busy workers; seen once in a fresh clone's CI,
# where the first rows held 98 % of the run's I/O). Kept, the rows would
# end at the pass's start while the later half of the jobs were read
# 800 ms on: about half the run's I/O in one 100 ms. Taken again, the
# rows end where the pass kept began, and no 100 ms holds much more than
# its tenth.
expect_exit 0 "$njobs jobs, the sampler stalled 800 ms in its first pass" \
	env FAULTLINE_SAMPLER_STALL_US=800000 "$FAULTLINE" --quiet \
	--interval=100ms --csv="$E2E_TMP/stall.csv" --output-format=normal,json --output="$E2E_TMP/stall.out" \
	"$E2E_TMP/many.job"
pycheck "every job's rows add up to its total" \
	"$totals_py" "$E2E_TMP/stall.csv" "$E2E_TMP/stall.out" "$njobs"
pycheck "the held-up pass was taken again, and the JSON says so" '
import json, sys
txt = open(sys.argv[1]).read()
s = json.loads(txt[txt.index("\n{") + 1:])["faultline"]["sampler"]
assert s["reads_retaken"] >= 1, s
' "$E2E_TMP/stall.out"
if [ -n "${ASAN_OPTIONS:-}" ]; then
	echo "# the stalled pass's 35 % bound: checked by the root pass, not under ASan (a timing bound)"
else
pycheck "after the stalled pass, no 100 ms of the run holds 35 % of its I/O" \
	"$bins_py" "$E2E_TMP/stall.csv" 0.35 0
fi

# More jobs than a sample reads kernel counters of (12 pairs): each job's
# job_* cells only in rows whose end is one of its read boundaries
# (k = the boundary's index + the job's, read when k % N is 0 or N - 1),
# or its last row; N (5 at 60 jobs) in the JSON and a note. Checked on
# the rows' own boundaries, whatever the host's load skips.
n60=60
{
	printf '[global]\nfilename=%s\nioengine=psync\nrw=randread\nbs=4k\nruntime=1s\ntime_based\ninvalidate=0\n' "$f"
	for i in $(seq "$n60"); do printf '[j%d]\n' "$i"; done
} >"$E2E_TMP/sixty.job"
expect_exit 0 "$n60 jobs" "$FAULTLINE" --quiet --interval=100ms --csv="$E2E_TMP/sixty.csv" \
	--output-format=json --output="$E2E_TMP/sixty.json" "$E2E_TMP/sixty.job"
cp "$E2E_TMP/err" "$E2E_TMP/sixty.err"
pycheck "each job's kernel counters are read one interval in 5, and its cells are only there" '
import csv, json, math, sys
s = json.load(open(sys.argv[2]))["faultline"]["sampler"]
every = s["job_counters_read_every"]
assert every == 5, s
rows = list(csv.DictReader(open(sys.argv[1])))
last = {r["job"]: float(r["t_s"]) for r in rows}
seen = 0
for r in rows:
    if r["job_csw_per_s"] == "":
        continue
    seen += 1
    # The boundary as the sampler numbers it: (row end - t0 + half an
    # interval) / interval, whole. t_s is that end to the millisecond, and
    # the ticks can sit any offset from t0 (set-up time): at about 50 ms
    # half a millisecond decides, so both whole numbers either side are
    # the row'"'"'s (Python'"'"'s round() of t_s / 0.1, the check before, rounds
    # 2.5 to 2 where the sampler takes 3: one clone in many failed).
    ms = float(r["t_s"]) * 1000
    ks = {math.floor((ms + d + 50) / 100) + int(r["job"][1:]) - 1 for d in (-0.5, 0.5)}
    assert any(k % every in (0, every - 1) for k in ks) or float(r["t_s"]) == last[r["job"]], (r["job"], r["t_s"])
# 24 reads at most a boundary, and those of pairs: some job has a row
# without cells whenever the host has the counter at all.
assert seen < len(rows), (seen, len(rows))
# ... and a note says so, where the counters could be opened at all.
assert not seen or "each job\x27s are read over one interval in 5" in open(sys.argv[3]).read()
' "$E2E_TMP/sixty.csv" "$E2E_TMP/sixty.json" "$E2E_TMP/sixty.err"

e2e_done
