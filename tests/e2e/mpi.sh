#!/bin/bash
# tests/e2e/mpi.sh - many hosts (SPEC 14) on this one machine: three
# ranks of an Open MPI launch on localhost, each reading its own scratch
# file, make one CSV (every rank's rows with host and rank, and rank=all
# rows that are their sum) and one JSON (three ranks' jobs and an
# aggregate); a rank that dies ends the launch within seconds with the
# rows whole; Ctrl-C on mpirun completes the outputs; errors name their
# rank. Started without mpirun, nothing of MPI shows.
. "$(dirname "$0")/lib.sh"

if ! command -v mpirun >/dev/null; then
	echo "mpi.sh: skipped: no mpirun (make deps installs openmpi-bin)"
	exit 0
fi
# Under make check-asan: Open MPI 4.1 leaves memory of MPI_Init unfreed
# at MPI_Finalize; tests/lsan-mpi.supp suppresses leaks with a frame in
# its libraries (which need the slow unwinder to show), nothing else.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
	# After what check-asan set: of two suppressions= the later is read.
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/.." && pwd)/lsan-mpi.supp:print_suppressions=0"
fi
# Three ranks on two CPUs: --oversubscribe; root needs --allow-run-as-root.
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -n 3)
host=$(hostname)
SZ=${E2E_MPI_SIZE:-24m}

# ---- without mpirun: as before ------------------------------------------

"$FAULTLINE" --quiet --csv="$E2E_TMP/solo.csv" --interval=100ms --output=/dev/null --name=s --ioengine=null \
	--size=1m --runtime=1 --time_based 2>"$E2E_TMP/solo.err" &
pid=$!
# Once the run is under way (its CSV's first row), whatever the host's pace.
for _ in $(seq 600); do [ "$( { wc -l <"$E2E_TMP/solo.csv"; } 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
maps=$(cat /proc/$pid/maps 2>/dev/null)
wait $pid
rc=$?
[ $rc = 0 ] && [ ! -s "$E2E_TMP/solo.err" ] && pass "alone: runs, nothing on stderr" \
	|| fail "alone: runs, nothing on stderr" "exit $rc" "$(head -c 400 "$E2E_TMP/solo.err")"
case $maps in
*libmpi*) fail "alone: libmpi is not loaded" ;;
'') fail "alone: libmpi is not loaded" "could not read /proc/$pid/maps" ;;
*) pass "alone: libmpi is not loaded" ;;
esac
solo_header=$(head -n 1 "$E2E_TMP/solo.csv")
case ",$solo_header," in
*,host,*|*,rank,*) fail "alone: no host or rank column" "$solo_header" ;;
*) pass "alone: no host or rank column" ;;
esac

# ---- three ranks, one CSV, one JSON -------------------------------------

cd "$E2E_TMP" || exit 1
"${MPIRUN[@]}" "$FAULTLINE" --quiet --csv=m.csv --output-format=json --output=m.json \
	--name=r --filename="$E2E_TMP/f.\${RANK}" --size=$SZ --rw=randread --runtime=5 --time_based \
	>m.out 2>m.err
rc=$?
[ $rc = 0 ] && pass "mpirun -n 3: exit 0" || fail "mpirun -n 3: exit 0" "exit $rc" "$(head -c 600 m.err)"
[ -e f.0 ] && [ -e f.1 ] && [ -e f.2 ] && pass "each rank lays out its own \${RANK} file" \
	|| fail "each rank lays out its own \${RANK} file" "$(ls)"

mpi_header=$(head -n 1 m.csv)
[ "$mpi_header" = "$solo_header,host,rank" ] && pass "the header is the same plus host,rank at the end" \
	|| fail "the header is the same plus host,rank at the end" "alone: $solo_header" "mpi:   $mpi_header"

pycheck "rows of ranks 0, 1, 2 and all; every all row is the sum of the ranks' rows" '
import csv, sys
host = sys.argv[2]
rows = list(csv.DictReader(open(sys.argv[1])))
ranks = set(r["rank"] for r in rows)
assert ranks == {"0", "1", "2", "all"}, ranks
assert all(r["host"] == host for r in rows if r["rank"] != "all"), "host column"
pending, nall = [], 0
for r in rows:
    if r["rank"] != "all":
        pending.append(r)
        continue
    mine = [p for p in pending if p["job"] == r["job"]]
    assert mine, "an all row without rank rows"
    for col in ("iops", "mib_s", "minflt_per_s"):
        s = sum(float(p[col]) for p in mine)
        assert abs(s - float(r[col])) <= 0.01 * len(mine) + 1e-9, (col, s, r[col])
    assert int(r["threads"]) == sum(int(p["threads"]) for p in mine)
    assert float(r["t_s"]) == max(float(p["t_s"]) for p in mine)
    pending = [p for p in pending if p["job"] != r["job"]]
    nall += 1
assert not pending, "rank rows after the last all row"
full = [r for r in rows if r["rank"] == "all" and r["threads"] == "3"]
assert nall >= 4 and len(full) >= 3, (nall, len(full))
' m.csv "$host"

pycheck "JSON: three ranks' jobs and an aggregate whose counts add up" '
import json, sys
d = json.load(open(sys.argv[1]))
jobs = d["jobs"]
per = {j["faultline"]["rank"]: j for j in jobs}
assert sorted(per, key=str) == [0, 1, 2, "all"], list(per)
assert len(jobs) == 4
agg = per["all"]["read"]
assert agg["total_ios"] == sum(per[r]["read"]["total_ios"] for r in (0, 1, 2)) > 0
assert agg["io_bytes"] == sum(per[r]["read"]["io_bytes"] for r in (0, 1, 2))
# A percentile of the merged distribution lies between the ranks own.
for p in ("50.000000", "99.000000"):
    v = [per[r]["read"]["lat_ns"]["percentile"][p] for r in (0, 1, 2)]
    assert min(v) <= agg["lat_ns"]["percentile"][p] <= max(v), (p, v, agg["lat_ns"]["percentile"][p])
files = sorted(per[r]["faultline"]["options"]["filename"] for r in (0, 1, 2))
assert [f[-4:] for f in files] == ["/f.0", "/f.1", "/f.2"], files
assert d["faultline"]["nranks"] == 3 and len(d["faultline"]["ranks"]) == 3
assert all(r["host_facts"]["hostname"] for r in d["faultline"]["ranks"])
' m.json

pycheck "the all rows add up to the JSON aggregate (ops within 3 %)" '
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rank"] == "all"]
ops = sum(float(r["iops"]) * float(r["dt_s"]) for r in rows)
total = [j for j in json.load(open(sys.argv[2]))["jobs"] if j["faultline"]["rank"] == "all"][0]["read"]["total_ios"]
assert abs(ops - total) <= 0.03 * total, (ops, total)
' m.csv m.json

# ---- a rank that dies ---------------------------------------------------

# This suite's launches and ranks writing CSV $1: their command lines name
# its scratch files, so another clone's mpi.sh beside it is never matched
# (a host-wide pattern once matched it and killed its mpirun).
ours() { # csv
	pgrep -f -- "--csv=$1 .*--filename=$E2E_TMP/f\\." || true
}
# The rank's pid, by its launcher's environment.
rank_pid() { # rank csv
	local p
	for p in $(ours "$2"); do
		tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo $p; return; }
	done
}
"${MPIRUN[@]}" "$FAULTLINE" --quiet --csv=k.csv --output=k.out --name=r \
	--filename="$E2E_TMP/f.\${RANK}" --size=$SZ --rw=randread --runtime=120 --time_based \
	>/dev/null 2>k.err &
mpid=$!
for _ in $(seq 600); do [ "$(grep -c ',all$' k.csv 2>/dev/null)" -ge 2 ] 2>/dev/null && break; sleep 0.1; done
victim=$(rank_pid 1 k.csv)
if [ -z "$victim" ]; then
	fail "a rank killed: the launch ends, not running its 120 s" "no rank 1 found"
	kill $mpid 2>/dev/null
else
	kill -9 "$victim"
	t0=$SECONDS
	# Open MPI ends the launch when a rank dies; the job would run its
	# 120 s otherwise, so 60 s tell the two apart at any host's pace.
	for _ in $(seq 600); do kill -0 $mpid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $mpid 2>/dev/null; then
		fail "a rank killed: the launch ends, not running its 120 s" "still running"
		kill $mpid
	else
		pass "a rank killed: the launch ends, not running its 120 s ($((SECONDS - t0)) s)"
	fi
fi
wait $mpid 2>/dev/null
left=$(ours k.csv)
[ -z "$left" ] && pass "a rank killed: no rank keeps running" || { fail "a rank killed: no rank keeps running" "$left"; kill -9 $left; }
pycheck "a rank killed: the CSV has whole rows only, and the rows before the kill" '
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "ends mid-row"
n = lines[0].count(",")
assert all(l.count(",") == n for l in lines[1:-1]), "a row of another width"
assert sum(l.endswith(",all") for l in lines) >= 2
' k.csv

# ---- Ctrl-C on mpirun -----------------------------------------------------

# A terminal's Ctrl-C: one SIGINT to the launch's process group (mpirun
# and its ranks). (Not timeout(1): it signals mpirun twice, and a second
# Ctrl-C makes Open MPI's mpirun abort at once.)
setsid "${MPIRUN[@]}" "$FAULTLINE" --quiet --csv=c.csv --output-format=json --output=c.json \
	--name=r --filename="$E2E_TMP/f.\${RANK}" --size=$SZ --rw=randread --runtime=60 --time_based \
	>/dev/null 2>c.err &
mpid=$!
for _ in $(seq 600); do [ "$(grep -c ',all$' c.csv 2>/dev/null)" -ge 2 ] 2>/dev/null && break; sleep 0.1; done
kill -INT -- -"$(ps -o pgid= $mpid | tr -d ' ')"
t0=$SECONDS
wait $mpid
rc=$?
[ "$rc" != 0 ] && pass "Ctrl-C: mpirun exits non-zero within $((SECONDS - t0)) s" \
	|| fail "Ctrl-C: mpirun exits non-zero" "exit 0"
pycheck "Ctrl-C: the JSON is complete, interrupted, with every rank and the aggregate" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["faultline"]["interrupted"] is True
assert sorted((j["faultline"]["rank"] for j in d["jobs"]), key=str) == [0, 1, 2, "all"]
' c.json
pycheck "Ctrl-C: the CSV ends with whole rows" '
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "" and all(l.count(",") == lines[0].count(",") for l in lines[1:-1])
' c.csv
[ -z "$(ours c.csv)" ] && pass "Ctrl-C: no rank keeps running" \
	|| fail "Ctrl-C: no rank keeps running"

# ---- errors -------------------------------------------------------------

# bs=0k on rank 0 only: invalid there, so nothing runs anywhere (exit 2),
# said once, naming the rank.
"${MPIRUN[@]}" "$FAULTLINE" --quiet --csv=e.csv --name=r --ioengine=null --size=1m \
	--bs='${RANK}k' --runtime=1 >/dev/null 2>e.err
rc=$?
[ $rc = 2 ] && pass "a job error on one rank: exit 2" || fail "a job error on one rank: exit 2" "exit $rc"
[ "$(grep -c 'must be at least' e.err)" = 1 ] && grep -q "rank 0 ($host) of 3" e.err \
	&& pass "a job error on one rank: reported once, with rank and host" \
	|| fail "a job error on one rank: reported once, with rank and host" "$(head -c 600 e.err)"
[ ! -s e.csv ] && pass "a job error on one rank: no rows" || fail "a job error on one rank: no rows"

# Rank 0's CSV cannot be made: no rank runs anything.
"${MPIRUN[@]}" "$FAULTLINE" --quiet --csv="$E2E_TMP/no/such/dir.csv" --name=r --ioengine=null \
	--size=1m --runtime=1 >/dev/null 2>n.err
rc=$?
[ $rc = 2 ] && grep -q "nothing was run on any of the 3 ranks" n.err \
	&& pass "rank 0's CSV cannot be made: exit 2, nothing run" \
	|| fail "rank 0's CSV cannot be made: exit 2, nothing run" "exit $rc" "$(head -c 600 n.err)"

# Rank 2's file is cut short under its mmap job: that job fails (SIGBUS),
# named with rank and host; ranks 0 and 1 go on to the end.
"${MPIRUN[@]}" "$FAULTLINE" --quiet --csv=b.csv --output-format=json --output=b.json --name=r \
	--ioengine=mmap --filename="$E2E_TMP/f.\${RANK}" --size=$SZ --rw=randread --invalidate=1 \
	--runtime=5 --time_based >/dev/null 2>b.err &
mpid=$!
# Once the jobs run (an all row written), not before: a slow (sanitized)
# start would otherwise lay the file out again.
for _ in $(seq 600); do [ "$(grep -c ',all$' b.csv 2>/dev/null)" -ge 1 ] 2>/dev/null && break; sleep 0.1; done
truncate -s 0 "$E2E_TMP/f.2"
wait $mpid
rc=$?
[ $rc != 0 ] && pass "a job failing on rank 2: the launch exits non-zero" \
	|| fail "a job failing on rank 2: the launch exits non-zero"
grep -q "rank 2 ($host): job 'r' failed" b.err && pass "a job failing on rank 2: stderr names rank and host" \
	|| fail "a job failing on rank 2: stderr names rank and host" "$(head -c 600 b.err)"
pycheck "a job failing on rank 2: the others ran to the end; the aggregate names the rank" '
import json, sys
d = json.load(open(sys.argv[1]))
per = {j["faultline"]["rank"]: j for j in d["jobs"]}
assert per[2]["error"] != 0 and per[0]["error"] == 0 and per[1]["error"] == 0
assert per[0]["read"]["runtime"] >= 4500 and per[1]["read"]["runtime"] >= 4500
assert per["all"]["error"] != 0 and "rank 2 (" in per["all"]["faultline"]["errmsg"], per["all"]["faultline"]
' b.json

e2e_done
