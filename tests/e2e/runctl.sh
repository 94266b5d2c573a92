#!/usr/bin/env bash
# fio's run control (issue 29): steadystate ends a job once its measure
# settles, exitall / exitall_on_error / exit_what stop other jobs when
# one ends, flow holds jobs to their weights' ratio, latency_target
# searches the queue depth. Each check would fail if the option did
# nothing (a job would run its 20 s, the ratio would be the engines').
# Only lower bounds on time are asserted (a job cannot end before its
# deadline unless stopped); the only upper bound is a 20 s job's own
# runtime: ending before it is what being stopped means. Counts are
# compared with counts, never with what a host does in a second.
. "$(dirname "$0")/lib.sh"

# run NAME JOBFILE-TEXT [EXIT]: the job file, run to $E2E_TMP/NAME.json
run() {
	local name=$1 text=$2 want=${3:-0} got
	printf '%s\n' "$text" >"$E2E_TMP/$name.fio"
	"$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/$name.json" "$E2E_TMP/$name.fio" \
		>"$E2E_TMP/out" 2>"$E2E_TMP/err"
	got=$?
	[ "$got" = "$want" ] && return 0
	fail "$name: exit $got, wanted $want" "$(head -c 600 "$E2E_TMP/err")"
	return 1
}

# jcheck NAME FILE PYTHON: assertions over the run's jobs, by name (J).
jcheck() {
	pycheck "$1" '
import json, sys
d = json.load(open(sys.argv[1]))
J = {j["jobname"]: j for j in d["jobs"]}
F = {n: j["faultline"] for n, j in J.items()}
def secs(n): return F[n]["runtime_ns"] / 1e9
'"$3" "$E2E_TMP/$2.json"
}

null='[global]
ioengine=null
size=16m
time_based'

# ---- exitall, exit_what ------------------------------------------------

# That a stopped job ran is what its JSON says (ran), not its count: a
# stop is honoured before a thread's first request, and on a starved host
# long's thread may first get the CPU after short's 300 ms, with 0 done.

run exitall "$null
exitall=1
[long]
runtime=20
[short]
runtime=300ms" &&
	jcheck "exitall: a 20 s job stops when a 300 ms one ends, and says by which" exitall '
assert secs("long") < 20, secs("long")
assert F["long"]["stopped_by"] == "exitall" and F["long"]["stopped_by_job"] == "short", F["long"]
assert F["short"]["stopped_by"] is None and F["short"]["ran"]
assert F["long"]["ran"] and J["long"]["error"] == 0, (F["long"], J["long"]["error"])'

# exit_what=group: new_group starts another group, which goes on.
run group "$null
exitall=1
[short]
runtime=300ms
[mate]
runtime=20
[other]
new_group
runtime=1500ms" &&
	jcheck "exit_what=group: the ended job's group mate stops, a job of another group (new_group) runs its time" group '
assert secs("mate") < 20 and F["mate"]["stopped_by"] == "exitall", (secs("mate"), F["mate"]["stopped_by"])
assert secs("other") >= 1.4 and F["other"]["stopped_by"] is None, (secs("other"), F["other"]["stopped_by"])'

for what in stonewall all; do
	run "what_$what" "$null
exitall=1
exit_what=$what
[short]
runtime=300ms
[other]
new_group
runtime=20
[later]
stonewall
runtime=300ms" &&
		jcheck "exit_what=$what: every running job stops; the next stonewall group $([ $what = all ] && echo 'never starts' || echo 'still runs')" "what_$what" '
assert secs("other") < 20 and F["other"]["stopped_by"] == "exitall", secs("other")
want = sys.argv[1].endswith("what_stonewall.json")
assert F["later"]["ran"] == want, F["later"]
assert (F["later"]["ops"] > 0) == want'
done

# exitall_on_error: a job that fails (rate_iops_min not met after fio's
# 2 s settle) stops the others; the run still says a job failed.
run onerror "$null
[fails]
runtime=20
rate_iops_min=1000000000
rate_cycle=100
exitall_on_error=1
[other]
runtime=20" 1 &&
	jcheck "exitall_on_error: a failing job stops the others (exit 1)" onerror '
assert J["fails"]["error"] != 0, J["fails"]["error"]
assert secs("other") < 20 and F["other"]["stopped_by"] == "exitall" and F["other"]["stopped_by_job"] == "fails", (secs("other"), F["other"])
assert J["other"]["error"] == 0'

# ---- steadystate -----------------------------------------------------

for crit in iops:90% bw_slope:90% lat:90%; do
	run "ss_${crit%%:*}" "$null
[ss]
runtime=20
ss=$crit
ss_dur=2" &&
		jcheck "steadystate=$crit ends a 20 s job on a steady engine; fio's JSON says attained" "ss_${crit%%:*}" '
assert secs("ss") < 20, secs("ss")
assert F["ss"]["stopped_by"] == "steadystate"
s = J["ss"]["steadystate"]
assert s["attained"] == 1 and s["duration"] == 2, s
assert len(s["data"]["iops"]) == 2 and len(s["data"]["bw"]) == 2 and s["data"]["iops_mean"] > 0, s
assert ("lat_ns" in s["data"]) == s["ss"].startswith("lat"), s'
done

run ss_never "$null
[ss]
runtime=3
ss=iops:0%
ss_dur=2" &&
	jcheck "steadystate not attained (a limit of 0): the job runs its runtime, attained 0" ss_never '
assert secs("ss") >= 2.9 and F["ss"]["stopped_by"] is None, secs("ss")
s = J["ss"]["steadystate"]
assert s["attained"] == 0 and len(s["data"]["iops"]) == 2, s'

run ss_ramp "$null
[ss]
runtime=20
ss=iops:90%
ss_dur=2
ss_ramp=1" &&
	jcheck "ss_ramp: the window starts after it (not before 3 s), then the job ends" ss_ramp '
assert 2.9 <= secs("ss") < 20, secs("ss")
assert J["ss"]["steadystate"]["attained"] == 1'

# ---- flow ---------------------------------------------------------------

# The ratio by counts, not by time: the first job does a fixed number of
# requests, the second (3x the weight, and slowed by thinktime, so that
# without flow the first would be done before it had done any) has done
# about 3x as many when the first ends and exitall stops it. Its count
# cannot pass its own io_size, nor the first's fall behind its share.
f=$E2E_TMP/data
mkdata "$f" 16
run flow_sync "[global]
ioengine=null
size=16m
exitall=1
[a]
flow=1
io_size=400k
[b]
flow=3
io_size=1200k
thinktime=5ms" &&
	jcheck "flow=1 and flow=3 (null engine): the jobs' requests go 1:3" flow_sync '
assert F["a"]["ops"] == 100 and 285 <= F["b"]["ops"] <= 300, (F["a"]["ops"], F["b"]["ops"])'

# Warm: reads from the cache, at any disk's pace.
cat "$f" >/dev/null
run flow_async "[global]
invalidate=0
ioengine=libaio
iodepth=8
filename=$f
size=16m
rw=randread
flow_sleep=100
exitall=1
[a]
flow=1
io_size=400k
[b]
flow=2
io_size=800k
iodepth=1
thinktime=5ms" &&
	jcheck "flow with libaio and flow_sleep: 1:2" flow_async '
assert F["a"]["ops"] == 100 and 190 <= F["b"]["ops"] <= 200, (F["a"]["ops"], F["b"]["ops"])'

# flow_id: a job whose flow partner has not started (startdelay=60; its
# weight counts from set-up, its requests are 0) is held in that flow, and
# free in another: its 2000 reads are done long before its 30 s runtime,
# which only keeps the test from hanging if it were held.
for fid in 0 1; do
	run "flow_id$fid" "[global]
invalidate=0
ioengine=libaio
iodepth=8
filename=$f
size=16m
rw=randread
exitall=1
exit_what=all
[late]
flow_id=$fid
flow=1
startdelay=60
time_based
runtime=1
[alone]
flow_id=1
flow=5
io_size=8000k
runtime=$([ $fid = 0 ] && echo 30 || echo 2)"
done
jcheck "flow_id: a job alone in its flow_id is not held (2000 reads done)" flow_id0 '
assert F["alone"]["ops"] == 2000 and F["alone"]["stopped_by"] is None, F["alone"]
assert F["late"]["ops"] == 0, F["late"]'
jcheck "flow_id: the same job sharing a flow_id with one that has done nothing is held (2 s: few of its 2000)" flow_id1 '
assert F["alone"]["ops"] < 100, F["alone"]'

# ---- latency_target -----------------------------------------------------

lt="[global]
ioengine=libaio
iodepth=32
filename=$f
size=16m
rw=randread
time_based
latency_window=100ms
direct=1"
run lt_easy "$lt
[lt]
runtime=20
latency_target=10s" &&
	jcheck "latency_target met at every depth: the search doubles to iodepth=32, one window there, and the job ends" lt_easy '
assert J["lt"]["latency_depth"] == 32 and J["lt"]["latency_target"] == 10 * 10**9, J["lt"]["latency_depth"]
assert F["lt"]["stopped_by"] == "latency_target" and secs("lt") < 20, (F["lt"]["stopped_by"], secs("lt"))
lv = J["lt"]["iodepth_level"]
assert lv["32"] + lv[">=64"] > 0, lv'

run lt_hard "$lt
[lt]
runtime=1
latency_target=1us
latency_percentile=50" &&
	jcheck "latency_target missed at every depth (percentile 50): the depth stays 1 for the whole runtime" lt_hard '
assert J["lt"]["latency_depth"] == 1, J["lt"]["latency_depth"]
assert F["lt"]["stopped_by"] is None and secs("lt") >= 0.9, secs("lt")
lv = J["lt"]["iodepth_level"]
assert lv["1"] >= 99.0, lv'

run lt_fatal "$lt
[lt]
runtime=20
latency_target=1us" 1 &&
	jcheck "latency_target missed at depth 1 with percentile 100: the job fails (ETIMEDOUT), as fio" lt_fatal '
assert J["lt"]["error"] == 110 and "latency_target" in F["lt"]["errmsg"], (J["lt"]["error"], F["lt"]["errmsg"])'

expect_exit 2 "latency_target with a synchronous engine is refused" \
	"$FAULTLINE" --quiet --name=x --ioengine=psync --filename="$f" --size=16m --latency_target=1ms
expect_err_has "latency_target" "the refusal names latency_target"

printf '%s\n' "$null
exitall=1
[long]
runtime=20
ss=iops:0%
ss_dur=2
[short]
runtime=300ms" >"$E2E_TMP/text.fio"
"$FAULTLINE" --quiet --output="$E2E_TMP/text.out" "$E2E_TMP/text.fio" 2>"$E2E_TMP/err"
if grep -q "stopped by exitall: job 'short' ended" "$E2E_TMP/text.out" &&
	grep -q "steadystate: attained=no, no sample taken" "$E2E_TMP/text.out"; then
	pass "the summary says what stopped a job and its steady state"
else
	fail "the summary says what stopped a job and its steady state" "$(grep -A3 '^long' "$E2E_TMP/text.out")"
fi

e2e_done
