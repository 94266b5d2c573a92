#!/usr/bin/env bash
# Every engine x rw x several touch modes runs on a real file, reports
# I/O, and writes fio-shaped JSON holding the resolved options, totals and
# latency percentiles.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 32

for engine in psync mmap io_uring libaio posixaio null; do
	for rw in read randread; do
		for touch in copy page stride:512 all; do
			name="$engine-$rw-${touch%%:*}"
			expect_exit 0 "$name runs" "$FAULTLINE" --quiet --name="$name" --filename="$f" \
				--ioengine=$engine --rw=$rw --bs=16k --iodepth=4 --touch=$touch \
				--runtime=300ms --time_based --output-format=json --output="$E2E_TMP/$name.json"
			pycheck "$name JSON: ops > 0, options, percentiles" '
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
assert j["error"] == 0, j["error"]
r = j["read"]
assert r["total_ios"] > 0 and r["io_bytes"] == r["total_ios"] * 16384, r
assert r["iops"] > 0 and r["bw_bytes"] > 0
o = j["faultline"]["options"]
assert o["ioengine"] == sys.argv[2] and o["rw"] == sys.argv[3], o
assert o["touch"] == sys.argv[4], o
p = r["lat_ns"]["percentile"]
assert p["50.000000"] <= p["99.000000"] <= r["lat_ns"]["max"], p
assert r["lat_ns"]["min"] <= p["50.000000"]
' "$E2E_TMP/$name.json" "$engine" "$rw" "$touch"
		done
	done
done

# O_DIRECT through every engine that has it.
for engine in psync io_uring libaio posixaio; do
	expect_exit 0 "$engine direct=1 runs" "$FAULTLINE" --quiet --name=d --filename="$f" \
		--ioengine=$engine --rw=randread --bs=4k --iodepth=8 --direct=1 --runtime=300ms \
		--time_based --output-format=json --output="$E2E_TMP/d.json"
	pycheck "$engine direct=1 did I/O" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
assert r["total_ios"] > 0
' "$E2E_TMP/d.json"
done

# One pass without time_based reads exactly the file once.
expect_exit 0 "psync one pass" "$FAULTLINE" --quiet --name=once --filename="$f" --rw=read \
	--bs=64k --output-format=json --output="$E2E_TMP/once.json"
pycheck "one pass reads the whole file exactly once" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
assert r["io_bytes"] == 32 * 1024 * 1024, r["io_bytes"]
' "$E2E_TMP/once.json"

# A shared scan by 4 threads still reads the file once in all.
expect_exit 0 "shared scan, 4 threads" "$FAULTLINE" --quiet --name=scan --filename="$f" \
	--rw=read --bs=64k --numjobs=4 --scan=shared --scan_chunk=1m --ioengine=mmap \
	--output-format=json --output="$E2E_TMP/scan.json"
pycheck "shared scan covers the file once" '
import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
assert r["io_bytes"] == 32 * 1024 * 1024, r["io_bytes"]
' "$E2E_TMP/scan.json"

# Scratch files: created with real data in directory=, one set per thread.
expect_exit 0 "scratch files in directory=" "$FAULTLINE" --quiet --name=scr --directory="$E2E_TMP" \
	--size=4m --nrfiles=2 --numjobs=2 --rw=read --output-format=json --output="$E2E_TMP/scr.json"
if [ -f "$E2E_TMP/scr.0.0" ] && [ -f "$E2E_TMP/scr.1.1" ] && \
   [ "$(stat -c %s "$E2E_TMP/scr.1.1")" = $((2 * 1024 * 1024)) ]; then
	pass "scratch files are <dir>/<job>.<n>.<file>, size/nrfiles each"
else
	fail "scratch files are <dir>/<job>.<n>.<file>, size/nrfiles each" "$(ls -l "$E2E_TMP")"
fi

# Same seed, same offsets: two runs of a one-pass random job read the same
# blocks in the same order (their logs, timestamps aside), and another
# seed reads another order: total_ios alone is io_size's, whatever the seed.
for s in 42a 42b 43; do
	"$FAULTLINE" --quiet --name=seed --filename="$f" --rw=randread --bs=4k --io_size=1m \
		--randseed=${s%[ab]} --touch=all --output-format=json --output="$E2E_TMP/seed$s.json" \
		--write_iolog="$E2E_TMP/seed$s.log" >/dev/null 2>&1
done
pycheck "randseed repeats the run: the same 256 offsets in the same order; another seed, another order" '
import json, sys
def reads(p):
    return [l.split()[2:] for l in open(p) if l.split()[2:3] == ["read"]]
a, b, c = (reads(p) for p in sys.argv[1:4])
n = [json.load(open(p))["jobs"][0]["read"]["total_ios"] for p in sys.argv[4:7]]
assert n == [256] * 3 and len(a) == 256, (n, len(a))
assert a == b, "seed 42 twice: the first difference at request %d" % next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
assert a != c, "seed 43 read the same order as seed 42"
assert len(set(x[1] for x in a)) > 128, "hardly random: %d distinct offsets" % len(set(x[1] for x in a))
' "$E2E_TMP/seed42a.log" "$E2E_TMP/seed42b.log" "$E2E_TMP/seed43.log" \
	"$E2E_TMP/seed42a.json" "$E2E_TMP/seed42b.json" "$E2E_TMP/seed43.json"

# Several jobs: stonewall serialises, the summary ends with a comparison.
cat >"$E2E_TMP/two.job" <<JOB
[global]
filename=$f
runtime=300ms
time_based
rw=randread
[a]
ioengine=psync
[b]
stonewall
ioengine=mmap
JOB
expect_exit 0 "two stonewalled jobs" "$FAULTLINE" --quiet "$E2E_TMP/two.job"
if grep -q "^a " "$E2E_TMP/out" || grep -qi "comparison\|job .*engine" "$E2E_TMP/out"; then
	pass "summary has a comparison table"
else
	fail "summary has a comparison table" "$(tail -n 8 "$E2E_TMP/out")"
fi

e2e_done
