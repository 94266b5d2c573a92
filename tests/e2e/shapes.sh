#!/usr/bin/env bash
# fio's workload shapes and pace (issue 29) through the binary: a shape is
# the same requests for every engine; rate_iops holds a thread at its rate,
# with latency counted from the schedule (JSON latency_from, CSV lat_from);
# rate_iops_min fails a job that cannot keep up; thinktime stalls; loops and
# number_ios count. The generator's shares against fio's own write_iolog are
# tests/test_genshape.c's.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 32

# One shape, every engine: the same seed gives the same requests, so the
# same count and bytes (bssplit, zoned, blockalign as the pools need).
shape="--rw=randread --bssplit=4k/50:8k/50 --blockalign=8k --random_distribution=zoned:60/10:40/90 --randseed=7 --io_size=4m --invalidate=0"
for e in psync mmap io_uring libaio null bufpool vmcache; do
	extra=""
	case $e in
	bufpool | vmcache) extra="--pool_size=16m --pool_page=8k" ;;
	io_uring | libaio) extra="--iodepth=4" ;;
	esac
	"$FAULTLINE" --help >/dev/null 2>&1
	if ! "$FAULTLINE" --cmdhelp=ioengine | grep -q "^    $e "; then
		continue
	fi
	expect_exit 0 "a shaped job runs through $e" "$FAULTLINE" --quiet --name=s --filename="$f" --size=32m \
		--ioengine=$e $extra $shape --output-format=json --output="$E2E_TMP/s-$e.json"
done
pycheck "every engine saw the same requests (count and bytes)" '
import glob, json, sys
seen = {}
for p in sorted(glob.glob(sys.argv[1] + "/s-*.json")):
    r = json.load(open(p))["jobs"][0]["read"]
    seen[p.rsplit("-", 1)[1][:-5]] = (r["total_ios"], r["io_bytes"])
assert len(seen) >= 5, seen
assert len(set(seen.values())) == 1, seen
ios, b = next(iter(seen.values()))
assert b >= 4 << 20 and b < (4 << 20) + 8192 and 4 * ios < b / 1024 < 8 * ios, seen
' "$E2E_TMP"

# rate_iops=2000 for 8000 requests: not done before the schedule's 4 s
# (7999 gaps of 0.5 ms; a host behind it issues late, never early, so
# only this bound is the schedule's), latency from the schedule.
expect_exit 0 "rate_iops=2000 for 8000 requests" "$FAULTLINE" --quiet --name=r --filename="$f" --size=32m \
	--rw=randread --ioengine=psync --invalidate=0 --rate_iops=2000 --number_ios=8000 \
	--output-format=json --output="$E2E_TMP/r.json" --csv="$E2E_TMP/r.csv"
pycheck "8000 requests in no less than 4 s, latency_from due, CSV lat_from due" '
import csv, json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
n, ms = j["read"]["total_ios"], j["read"]["runtime"]
assert n == 8000 and ms >= 3995, (n, ms)
assert j["faultline"]["latency_from"] == "due", j["faultline"]
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows and all(r["lat_from"] == "due" for r in rows), rows[:1]
' "$E2E_TMP/r.json" "$E2E_TMP/r.csv"

# Poisson arrivals at 500 IOPS: the 1000th is due near 2 s (2 s +- 63 ms,
# one standard deviation): not done before 1.7 s.
expect_exit 0 "rate_iops=500 poisson, libaio offload" "$FAULTLINE" --quiet --name=p --filename="$f" \
	--size=32m --rw=randread --ioengine=libaio --iodepth=4 --io_submit_mode=offload --invalidate=0 \
	--rate_iops=500 --rate_process=poisson --number_ios=1000 --output-format=json \
	--output="$E2E_TMP/p.json"
pycheck "poisson at 500 IOPS: 1000 requests in no less than 1.7 s" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
assert r["total_ios"] == 1000 and r["runtime"] >= 1700, (r["total_ios"], r["runtime"])
' "$E2E_TMP/p.json"

expect_exit 0 "a plain job" "$FAULTLINE" --quiet --name=u --filename="$f" --size=32m --rw=randread \
	--invalidate=0 --number_ios=100 --output-format=json --output="$E2E_TMP/u.json"
pycheck "unpaced: latency_from issue; number_ios=100 does 100" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["faultline"]["latency_from"] == "issue", j["faultline"]
assert j["read"]["total_ios"] == 100, j["read"]["total_ios"]
' "$E2E_TMP/u.json"

expect_exit 0 "loops=3" "$FAULTLINE" --quiet --name=l --filename="$f" --size=1m --rw=read \
	--invalidate=0 --loops=3 --output-format=json --output="$E2E_TMP/l.json"
pycheck "loops=3 reads the region three times" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
assert r["io_bytes"] == 3 << 20 and r["total_ios"] == 768, r["io_bytes"]
' "$E2E_TMP/l.json"

# thinktime=10ms after every request: at most 101 requests in a second
# (the schedule's bound; fewer on a loaded host, whose sleeps overrun).
expect_exit 0 "thinktime=10ms" "$FAULTLINE" --quiet --name=t --filename="$f" --size=32m \
	--rw=randread --invalidate=0 --thinktime=10ms --runtime=1 --time_based --output-format=json \
	--output="$E2E_TMP/t.json"
pycheck "thinktime holds a thread to at most 100 requests a second" '
import json, sys
n = json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"]
assert 1 <= n <= 101, n
' "$E2E_TMP/t.json"

# A minimum the job cannot meet (it is paced below it): the job fails.
expect_exit 1 "rate_iops_min not met (thinktime holds the job under it) fails the job" "$FAULTLINE" --quiet --name=m \
	--filename="$f" --size=32m --rw=randread --invalidate=0 --rate_iops=100 --rate_iops_min=50 \
	--rate_cycle=500 --thinktime=50ms --runtime=5 --time_based --output=/dev/null
expect_err_has "rate_iops_min" "names the minimum not met"

expect_exit 2 "rate and rate_iops together are refused" "$FAULTLINE" --quiet --name=x \
	--filename="$f" --size=32m --rate=1m --rate_iops=100 --output=/dev/null
expect_exit 2 "zoned_abs past the region is refused" "$FAULTLINE" --quiet --name=z \
	--filename="$f" --size=32m --rw=randread --random_distribution=zoned_abs:50/16m:50/64m \
	--output=/dev/null

e2e_done
