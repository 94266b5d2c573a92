#!/usr/bin/env bash
# Concurrency models and prefetch (SPEC 9) on small real files: loop=N
# with every engine, offload with and without permits, every prefetch
# mode, the single-thread baseline of the async-hazard job, and the
# contradictions refused before anything runs. The JSON's per-stream
# bytes must add up to the job's.
. "$(dirname "$0")/lib.sh"

n=4
files=""
for i in $(seq 0 $((n - 1))); do
	mkdata "$E2E_TMP/f$i" 8
	files="$files${files:+:}$E2E_TMP/f$i"
done
total=$((n * 8 * 1024 * 1024))

# check NAME JSON STREAMS [key=value ...]: exit 0 already checked; the
# job read everything once, its streams add up, and the given
# jobs[].faultline fields hold (prefetch.requests>0 style checks too).
check() {
	local name=$1 json=$2 streams=$3
	shift 3
	pycheck "$name: streams add up to the total" '
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
f = j["faultline"]
total, nstreams = int(sys.argv[2]), int(sys.argv[3])
assert j["error"] == 0, f["errmsg"]
assert j["read"]["io_bytes"] == total, (j["read"]["io_bytes"], total)
assert len(f["streams"]) == nstreams, f["streams"]
if nstreams:
    assert sum(s["bytes"] for s in f["streams"]) == total, f["streams"]
    assert sum(s["ops"] for s in f["streams"]) == j["read"]["total_ios"]
    assert all(s["bytes"] == s["len"] for s in f["streams"]), f["streams"]
for kv in sys.argv[4:]:
    k, op, v = kv.partition(">")[0], ">" if ">" in kv else "=", kv.partition(">")[2] or kv.partition("=")[2]
    if op == "=":
        k = kv.partition("=")[0]
    x = f
    for part in k.split("."):
        x = x[part]
    if op == ">":
        assert x > float(v), (k, x, v)
    else:
        assert str(x) == v, (k, x, v)
' "$json" "$total" "$streams" "$@"
}

run() { # name args...
	local name=$1
	shift
	expect_exit 0 "$name runs" "$FAULTLINE" --quiet --name="$name" --rw=read --bs=64k \
		--touch=stride:512 --output-format=json --output="$E2E_TMP/$name.json" "$@"
}

for engine in psync mmap io_uring libaio; do
	run "loop-$engine" --filename="$files" --ioengine=$engine --loop=$n
	check "loop-$engine" "$E2E_TMP/loop-$engine.json" $n loop=$n helper_threads=0
done
# A synchronous engine submits nothing: its batch is 1, loop or not.
for engine in psync mmap; do
	check "loop-$engine" "$E2E_TMP/loop-$engine.json" $n iodepth_batch_submit=1
done

# io_uring with two requests per stream in flight.
run loop-uring-d2 --filename="$files" --ioengine=io_uring --loop=$n --iodepth=2
check loop-uring-d2 "$E2E_TMP/loop-uring-d2.json" $n

# iodepth_batch_submit: auto is 1 with direct=1 and the depth when
# buffered; a value is used as given, 0 is the depth. Each run must read
# one whole pass (8 MiB in 4 KiB requests): no request lost or counted
# twice between the worker's mid-batch pushes and reap()'s.
for engine in io_uring libaio; do
	for v in "auto::8" "auto:1:1" "3::3" "3:1:3" "0:1:8" "1::1"; do
		IFS=: read -r batch direct want <<<"$v"
		name="batch-$engine-$batch-${direct:-0}"
		expect_exit 0 "$name runs" "$FAULTLINE" --quiet --name="$name" --rw=randread \
			--bs=4k --filename="$E2E_TMP/f0" --ioengine=$engine --iodepth=8 \
			--iodepth_batch_submit="$batch" --direct="${direct:-0}" \
			--output-format=json --output="$E2E_TMP/$name.json"
		pycheck "$name: iodepth_batch_submit=$want, one whole pass" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j
assert j["faultline"]["iodepth_batch_submit"] == int(sys.argv[2]), j["faultline"]
assert j["read"]["io_bytes"] == 8 << 20, j["read"]["io_bytes"]
' "$E2E_TMP/$name.json" "$want"
	done
	# In a loop, whose streams share the worker's slots.
	run "loop-$engine-batch3" --filename="$files" --ioengine=$engine --loop=$n --iodepth=4 \
		--iodepth_batch=3
	check "loop-$engine-batch3" "$E2E_TMP/loop-$engine-batch3.json" $n iodepth_batch_submit=3
done

# One target cut into slices; the null engine's virtual target too.
run loop-slices --filename="$E2E_TMP/f0" --ioengine=mmap --loop=4
pycheck "loop over slices of one file" '
import json, sys
f = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]
s = f["streams"]
assert len(s) == 4 and sum(x["bytes"] for x in s) == 8 << 20, s
assert [x["offset"] for x in s] == [0, 2 << 20, 4 << 20, 6 << 20], s
' "$E2E_TMP/loop-slices.json"
expect_exit 0 "loop with the null engine" "$FAULTLINE" --quiet --name=n --ioengine=null \
	--size=64m --bs=4k --loop=8 --output-format=json --output="$E2E_TMP/null.json"

# Offload: every request on a helper; permits below the helpers.
run off-mmap --filename="$files" --ioengine=mmap --loop=$n --offload=4
check off-mmap "$E2E_TMP/off-mmap.json" $n offload=4 offload_permits=4 helper_threads=4
run off-psync --filename="$files" --ioengine=psync --loop=$n --offload=3 --offload_permits=2
check off-psync "$E2E_TMP/off-psync.json" $n offload=3 offload_permits=2
run off-null --ioengine=null --size=16m --loop=2 --offload=2 --bs=4k
pycheck "offloaded no-ops: latency measured" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["read"]["total_ios"] == 4096 and j["read"]["lat_ns"]["mean"] > 0, j["read"]
' "$E2E_TMP/off-null.json"

# Every prefetch mode, cold, in a loop and in an ordinary worker.
for mode in willneed populate touch readahead; do
	run "pf-$mode" --filename="$files" --ioengine=mmap --loop=$n --prefetch=$mode:2m
	check "pf-$mode" "$E2E_TMP/pf-$mode.json" $n "prefetch.mode=$mode" "prefetch.requests>0" \
		"prefetch.bytes>0"
done
pycheck "helper modes count their helper, hint modes have none" '
import json, sys
h = {m: json.load(open(f"{sys.argv[1]}/pf-{m}.json"))["jobs"][0]["faultline"]["helper_threads"]
     for m in ("willneed", "populate", "touch", "readahead")}
assert h == {"willneed": 0, "populate": 1, "touch": 1, "readahead": 0}, h
' "$E2E_TMP"
run pf-threads --filename="$files" --ioengine=mmap --numjobs=2 --scan=partitioned \
	--prefetch=touch:1m
check pf-threads "$E2E_TMP/pf-threads.json" 0 "prefetch.requests>0" helper_threads=2

# The hazard job's single-thread baseline: files one after another.
run one-thread --filename="$files" --ioengine=io_uring --file_service_type=sequential
check one-thread "$E2E_TMP/one-thread.json" 0 loop=0

# Ramp time: stream totals leave the ramp out, as the job's do. The two
# snapshots at the ramp's end are taken microseconds apart while the loop
# runs, so they may differ by a few requests. The measured part lasts 2 s,
# not 300 ms, so that on a starved host (nice 19 beside a make check) the
# worker and the controller, held off the CPU around the ramp's end, still
# leave some measured I/O for the check below.
expect_exit 0 "loop with ramp_time" "$FAULTLINE" --quiet --name=ramp --filename="$files" \
	--ioengine=mmap --loop=$n --bs=64k --invalidate=0 --time_based --ramp_time=200ms \
	--runtime=2s --output-format=json --output="$E2E_TMP/ramp.json"
pycheck "ramp: streams add up to the measured bytes" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
s = j["faultline"]["streams"]
got, want = sum(x["bytes"] for x in s), j["read"]["io_bytes"]
assert want > 0 and abs(got - want) <= 64 * 65536, (s, want)
' "$E2E_TMP/ramp.json"

# The summary says what ran.
expect_exit 0 "summary shows loop and prefetch" "$FAULTLINE" --quiet --name=sum \
	--filename="$files" --ioengine=mmap --loop=$n --offload=2 --prefetch=willneed:1m \
	--output="$E2E_TMP/sum.txt"
if grep -q "loop: $n streams, offloaded to 2 helpers" "$E2E_TMP/sum.txt" &&
	grep -q "prefetch=willneed" "$E2E_TMP/sum.txt"; then
	pass "summary lines"
else
	fail "summary lines" "$(cat "$E2E_TMP/sum.txt")"
fi

# Contradictions: exit 2, nothing run, the message names the options.
bad() { # name text args...
	local name=$1 text=$2
	shift 2
	expect_exit 2 "refused: $name" "$FAULTLINE" --quiet --name=b --size=8m --output=/dev/null "$@"
	expect_err_has "$text" "refused: $name says why"
}
bad "loop with numjobs=2" "needs numjobs=1" --filename="$files" --loop=$n --numjobs=2
bad "loop=3 over 4 files" "give 3 files" --filename="$files" --loop=3
bad "offload without loop" "needs loop=N" --filename="$files" --offload=2
bad "offload with io_uring" "already asynchronous" --filename="$files" --loop=$n \
	--ioengine=io_uring --offload=2
bad "permits above helpers" "exceeds offload" --filename="$files" --loop=$n --offload=2 \
	--offload_permits=3
bad "permits without offload" "needs offload" --filename="$files" --offload_permits=1
bad "prefetch with psync" "contradicts ioengine=psync" --filename="$files" \
	--prefetch=willneed:1m
bad "prefetch with randread" "needs rw=read" --filename="$files" --ioengine=mmap \
	--rw=randread --prefetch=touch:1m
bad "prefetch without a window" "needs a window" --filename="$files" --ioengine=mmap \
	--prefetch=willneed
bad "prefetch window below a page" "at least 4k" --filename="$files" --ioengine=mmap \
	--prefetch=touch:100

# One window per figure (SPEC 8, issue 30): an event loop over warm
# mappings with ramp_time and startdelay, threads and a worker process:
# the reader's CPU and blocked time cover the measured window, not the
# ramp before it, and the CSV's measured rows add up to the JSON's ios.
for t in 1 0; do
	expect_exit 0 "loop with ramp_time and startdelay, thread=$t" "$FAULTLINE" --quiet \
		--output-format=json --output="$E2E_TMP/win$t.json" --csv="$E2E_TMP/win$t.csv" \
		--name=win --filename="$files" --ioengine=mmap --loop=$n --thread=$t --touch=all \
		--prewarm=1 --invalidate=0 --ramp_time=2 --startdelay=1 --runtime=3 --time_based
	pycheck "thread=$t: reader_cpu_ns and reader_blocked_ns within the measured window; CSV rows add up to total_ios (1 %)" '
import csv, json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
f, win = j["faultline"], j["read"]["runtime"] * 1e6
assert f["reader_cpu_ns"] <= win * 1.01, ("reader_cpu_ns", f["reader_cpu_ns"], "window", win)
assert f["reader_cpu_ns"] + f["reader_blocked_ns"] <= win * 1.01, (f["reader_cpu_ns"], f["reader_blocked_ns"], win)
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["ramp"] == "0"]
ios = sum(float(r["iops"]) * float(r["dt_s"]) for r in rows)
tot = j["read"]["total_ios"]
# 1 %, or the cells'"'"' own rounding where that is more (iops to 0.1,
# dt_s to 0.001): a loaded host once left the job 1 request, which
# its row held as 1.0186
err = sum(0.05 * float(r["dt_s"]) + float(r["iops"]) * 0.0005 for r in rows)
assert abs(ios - tot) <= max(0.01 * tot, err), ("csv", ios, "json", tot, "rounding", err)
' "$E2E_TMP/win$t.json" "$E2E_TMP/win$t.csv"
done

# An async job reaps its queue when its runtime ends, on the interval's
# boundary: requests that complete after the boundary's reading, and
# less than a millisecond (dt_s's resolution) before the job's end, are
# in its totals and must be in a row too. Its rows add up to the
# JSON's count within their cells' rounding alone (not 1 %: the 32
# requests of iodepth 16 x 2 are lost in that). Not every run ends in
# that window (the old code lost them in 6 of 10 runs here): three.
for t in 1 2 3; do
	expect_exit 0 "libaio iodepth=16 numjobs=2, run $t" "$FAULTLINE" --quiet --name=q --filename="$E2E_TMP/f0" \
		--ioengine=libaio --direct=1 --iodepth=16 --numjobs=2 --rw=randread --bs=4k --runtime=1 \
		--time_based --output-format=json --output="$E2E_TMP/q$t.json" --csv="$E2E_TMP/q$t.csv"
	pycheck "libaio iodepth=16 numjobs=2, run $t: the rows hold every request reaped at the end" '
import csv, json, sys
want = json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"]
got = err = 0.0
for r in csv.DictReader(open(sys.argv[2])):
    if r["ramp"] == "0":
        iops, dt = float(r["iops"]), float(r["dt_s"])
        got += iops * dt
        err += 0.05 * dt + iops * 0.0005    # iops to 0.1, dt_s to 0.001
assert abs(got - want) <= err + 1, ("rows", got, "json", want, "rounding", err)
' "$E2E_TMP/q$t.json" "$E2E_TMP/q$t.csv"
done

expect_exit 0 "parse-only shows the options" "$FAULTLINE" --parse-only --name=p \
	--filename="$files" --ioengine=mmap --loop=$n --offload=2 --prefetch=populate:16m
if grep -q "^prefetch=populate:16m" "$E2E_TMP/out" && grep -q "^loop=$n" "$E2E_TMP/out"; then
	pass "parse-only: loop and prefetch"
else
	fail "parse-only: loop and prefetch" "$(cat "$E2E_TMP/out")"
fi

e2e_done
