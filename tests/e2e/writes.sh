#!/usr/bin/env bash
# Writes and durability (SPEC 10): every engine writes, mixes and flushes
# on a real file, counts what it did in fio's JSON, reads back what it
# wrote; faultline --verify finds a block corrupted by hand; writes stay
# inside the region; a block device carrying ext4 is refused unless
# allow_destructive=1.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 16

# An engine's own options: bufpool's pool is an eighth of the region, so
# dirty pages are evicted (written back) as well as flushed.
eopt() { [ "$1" = bufpool ] && echo "--pool_size=2m"; }

# One job's JSON, checked: writes happened, reads when mixed, flushes as
# many as the policy says, the read-back clean.
check() { # name json rw engine policy
	pycheck "$1: writes counted, flushes as the policy says, verify clean" '
import json, sys
name, rw, engine, policy = sys.argv[2:6]
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, (j["error"], j["faultline"]["errmsg"])
w, r, s = j["write"], j["read"], j["sync"]
assert w["total_ios"] > 0 and w["io_bytes"] == w["total_ios"] * 4096, w
assert w["iops"] > 0 and w["bw_bytes"] > 0, w
assert w["lat_ns"]["N"] == w["total_ios"], w["lat_ns"]
if rw in ("randrw", "rw"):
    assert r["total_ios"] > 0, r
else:
    assert r["total_ios"] == 0, r
n = w["total_ios"]
if policy == "fsync=8" or policy == "fdatasync=8":
    assert s["total_ios"] == n // 8, (s["total_ios"], n)
elif policy == "end_fsync":
    assert s["total_ios"] == 1, s
elif policy == "none" or policy == "sync=1":
    assert s["total_ios"] == 0, s
elif policy == "sync_interval":
    # 1 s of writes, a flush when 100 ms have passed since the last: at
    # most 10 (and the end'"'"'s), by the schedule; at least the first. How
    # many in between is the disk'"'"'s and the host'"'"'s pace, not checked.
    assert 1 <= s["total_ios"] <= 12, s
if s["total_ios"] > 0:
    assert s["lat_ns"]["N"] == s["total_ios"] and s["lat_ns"]["min"] > 0, s["lat_ns"]
o = j["faultline"]["options"]
assert o["rw"] == rw and o["ioengine"] == engine, o
v = j["faultline"]["verify"]
if engine == "null":
    assert v is None, v
else:
    assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
    assert v["first_bad_offset"] is None, v
' "$2" "$1" "$3" "$4" "$5"
}

for engine in psync mmap io_uring libaio posixaio null bufpool; do
	vfy=--verify=crc32c
	[ $engine = null ] && vfy=
	# A count of requests, not a time: a mixed run must hold both
	# directions, and a 300 ms randrw run beside make check's other
	# lanes once ended without a single write. 1024 requests write up
	# to 4 MiB, past bufpool's pool; runtime only bounds a run that hangs.
	for rw in randwrite randrw write; do
		name="$engine-$rw"
		expect_exit 0 "$name runs" "$FAULTLINE" --quiet --name="$name" --filename="$f" \
			--ioengine=$engine $(eopt $engine) --rw=$rw --bs=4k --iodepth=8 --fsync=8 $vfy \
			--number_ios=1024 --runtime=60s --output-format=json --output="$E2E_TMP/$name.json"
		check "$name" "$E2E_TMP/$name.json" $rw $engine fsync=8
	done
done

# Each flush policy, each engine that flushes something.
for engine in psync mmap io_uring libaio posixaio bufpool; do
	for policy in fdatasync=8 end_fsync sync_interval sync=1 none; do
		case $policy in
		fdatasync=8) opt="--fdatasync=8" secs=300ms ;;
		end_fsync) opt="--end_fsync=1" secs=300ms ;;
		sync_interval) opt="--sync_interval=100ms" secs=1s ;;
		sync=1) opt="--sync=1" secs=300ms ;;
		none) opt="" secs=300ms ;;
		esac
		[ $engine = mmap ] || [ $engine = bufpool ] && [ $policy = sync=1 ] && continue
		name="$engine-${policy%%=*}"
		expect_exit 0 "$name runs" "$FAULTLINE" --quiet --name="$name" --filename="$f" \
			--ioengine=$engine $(eopt $engine) --rw=randwrite --bs=4k --iodepth=8 $opt --verify=crc32c \
			--runtime=$secs --time_based --output-format=json --output="$E2E_TMP/$name.json"
		check "$name" "$E2E_TMP/$name.json" randwrite $engine $policy
	done
done

# sync=1 is the O_DSYNC open; sync=sync fio's O_SYNC.
if command -v strace >/dev/null; then
	for s in 1:O_DSYNC sync:O_SYNC; do
		env ASAN_OPTIONS="$NOLEAK" strace -f -qq -e trace=openat -o "$E2E_TMP/strace" "$FAULTLINE" --quiet --name=s \
			--filename="$f" --rw=randwrite --sync="${s%%:*}" --io_size=64k --output=/dev/null
		if grep -F "$f" "$E2E_TMP/strace" | grep -q "O_RDWR.*${s#*:}"; then
			pass "sync=${s%%:*} opens the target O_RDWR|${s#*:}"
		else
			fail "sync=${s%%:*} opens the target O_RDWR|${s#*:}" "$(grep -F "$f" "$E2E_TMP/strace")"
		fi
	done
else
	echo "skip - sync=1's O_DSYNC open: strace is not installed"
fi

# Several threads on one file, with a store engine: no block torn by the
# job's own threads, and fsync counted per thread.
expect_exit 0 "mmap randwrite, 2 threads sharing a file" "$FAULTLINE" --quiet --name=m2 \
	--filename="$f" --ioengine=mmap --rw=randwrite --numjobs=2 --fsync=8 --verify=crc32c \
	--runtime=500ms --time_based --output-format=json --output="$E2E_TMP/m2.json"
pycheck "2 threads: verify clean, floor(writes_i / 8) flushes per thread" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
v = j["faultline"]["verify"]
assert v["mismatches"] == 0 and v["blocks_checked"] > 0, v
n, s = j["write"]["total_ios"], j["sync"]["total_ios"]
assert n // 8 - 2 < s <= n // 8, (n, s)
' "$E2E_TMP/m2.json"
expect_exit 0 "io_uring rw (sequential), 2 threads, 16k blocks" "$FAULTLINE" --quiet --name=u2 \
	--filename="$f" --ioengine=io_uring --iodepth=16 --rw=rw --bs=16k --numjobs=2 \
	--verify=crc32c --runtime=500ms --time_based --output-format=json --output="$E2E_TMP/u2.json"
pycheck "2 sequential writers: verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0 and j["faultline"]["verify"]["mismatches"] == 0, j["faultline"]
' "$E2E_TMP/u2.json"

# thread=0: the same with worker processes, each with its own engine
# set-up (mmap: its own PROT_WRITE mapping, msync of its own range), for
# every engine; the two processes share the file, write only their own
# blocks, flush per process, and each reads back what it wrote. While it
# runs, the workers are two processes forked by the run.
for engine in psync mmap io_uring libaio posixaio null; do
	vfy=--verify=crc32c
	[ $engine = null ] && vfy=
	# The processes the run forks, counted from its clone calls (strace
	# -f), not by looking for children while it runs: on a loaded host a
	# look can miss a 700 ms run's workers altogether.
	env ASAN_OPTIONS="$NOLEAK" strace -f -qq -e trace=clone,clone3,fork,vfork -e signal=none -o "$E2E_TMP/clones" \
		"$FAULTLINE" --quiet --name=p2 --filename="$f" --ioengine=$engine --rw=randwrite \
		--iodepth=4 --numjobs=2 --thread=0 --fsync=8 $vfy --runtime=700ms --time_based \
		--output-format=json --output="$E2E_TMP/p2-$engine.json" 2>"$E2E_TMP/err"
	rc=$?
	kids=$(grep -E '(clone3?|v?fork)\(' "$E2E_TMP/clones" | grep -v CLONE_THREAD | grep -vc 'resumed>')
	pycheck "thread=0 $engine randwrite fsync=8, 2 processes ($kids children seen, exit $rc): verify clean, flushes per process" '
import json, sys
engine, kids, rc = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
assert rc == 0 and kids == 2, (rc, kids)
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["faultline"]["errmsg"]
assert j["faultline"]["options"]["thread"] == "0", j["faultline"]["options"]
n, s = j["write"]["total_ios"], j["sync"]["total_ios"]
assert n > 0 and n // 8 - 2 < s <= n // 8, (n, s)
v = j["faultline"]["verify"]
if engine == "null":
    assert v is None, v
else:
    assert v["complete"] and v["mismatches"] == 0 and v["blocks_checked"] > 0, v
' "$E2E_TMP/p2-$engine.json" $engine "$kids" $rc
done

# rwmixread decides the mix: 100 only reads, 0 only writes.
for mix in 100 0; do
	expect_exit 0 "randrw rwmixread=$mix" "$FAULTLINE" --quiet --name=mix --filename="$f" \
		--rw=randrw --rwmixread=$mix --io_size=1m --output-format=json --output="$E2E_TMP/mix$mix.json"
done
pycheck "rwmixread=100 reads only, 0 writes only, io_size counts both" '
import json, sys
a = json.load(open(sys.argv[1]))["jobs"][0]
b = json.load(open(sys.argv[2]))["jobs"][0]
assert a["write"]["total_ios"] == 0 and a["read"]["total_ios"] == 256, (a["read"], a["write"])
assert b["read"]["total_ios"] == 0 and b["write"]["total_ios"] == 256, (b["read"], b["write"])
' "$E2E_TMP/mix100.json" "$E2E_TMP/mix0.json"

# The CSV shows the writes, and the device and the page cache writing back.
expect_exit 0 "psync randwrite with --csv" "$FAULTLINE" --quiet --name=c --filename="$f" \
	--rw=randwrite --fsync=4 --runtime=1500ms --time_based --interval=500ms \
	--csv="$E2E_TMP/w.csv" --output=/dev/null
pycheck "CSV: write and flush columns filled, device writes seen" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(x["rw"] == "randwrite" for x in rows), rows
for x in rows:
    for k in ("w_iops", "w_mib_s", "w_lat_p50_us", "w_lat_p99_us", "flush_per_s",
              "flush_lat_p99_us", "writeback_mib", "dev_write_mib_s", "dev_write_iops"):
        # A latency is empty in a row where nothing of its kind completed
        # (the last few ms of the job, say), and only there.
        if k.startswith("w_lat") and float(x["w_iops"]) == 0 or \
           k == "flush_lat_p99_us" and float(x["flush_per_s"]) == 0:
            assert x[k] == "", (k, x)
            continue
        assert x[k] != "", (k, x)
    assert float(x["iops"]) == 0 and x["lat_p50_us"] == "", x
assert sum(float(x["w_iops"]) for x in rows) > 0
assert sum(float(x["flush_per_s"]) for x in rows) > 0
# fsync makes the device write
assert sum(float(x["dev_write_iops"]) for x in rows) > 0, rows
' "$E2E_TMP/w.csv"

# sync=1 with mmap: refused, with the reason.
expect_exit 2 "sync=1 with mmap is refused" "$FAULTLINE" --name=ms --filename="$f" \
	--ioengine=mmap --rw=randwrite --sync=1
expect_err_has "no O_DSYNC" "says stores have no O_DSYNC"

# faultline --verify: an intact file verifies; a block corrupted by hand
# is found, named with its target and offset.
v=$E2E_TMP/v.dat
cat >"$E2E_TMP/v.job" <<JOB
[w]
filename=$v
size=4m
rw=write
bs=4k
ioengine=psync
JOB
expect_exit 0 "a sequential write job fills its region" "$FAULTLINE" --quiet --output=/dev/null "$E2E_TMP/v.job"
expect_exit 0 "--verify: the intact file verifies" "$FAULTLINE" --verify "$E2E_TMP/v.job"
if grep -q "1024 blocks: 1024 valid, 0 mismatches, 0 never written" "$E2E_TMP/out"; then
	pass "--verify counts every block valid"
else
	fail "--verify counts every block valid" "$(cat "$E2E_TMP/out")"
fi
dd if=/dev/urandom of="$v" bs=1 count=64 seek=$((4096 * 300 + 2000)) conv=notrunc status=none
expect_exit 1 "--verify: a corrupted block fails it" "$FAULTLINE" --verify "$E2E_TMP/v.job"
if grep -q "mismatch: $v offset $((4096 * 300)): crc mismatch" "$E2E_TMP/out" &&
   grep -q "1023 valid, 1 mismatches" "$E2E_TMP/out"; then
	pass "--verify names the target and offset of the bad block"
else
	fail "--verify names the target and offset of the bad block" "$(cat "$E2E_TMP/out")"
fi
rm -f "$E2E_TMP/missing.dat"
sed "s|$v|$E2E_TMP/missing.dat|" "$E2E_TMP/v.job" >"$E2E_TMP/m.job"
expect_exit 2 "--verify: a missing target is an error" "$FAULTLINE" --verify "$E2E_TMP/m.job"
expect_err_has "missing.dat" "names the missing target"
[ ! -e "$E2E_TMP/missing.dat" ] && pass "--verify creates nothing" || fail "--verify creates nothing"

# verify=crc32c in the job catches blocks that do not read back as
# written: another job keeps overwriting the same region with 8k blocks
# while this one writes 4k blocks, slowly (an fsync each), and then reads
# them back.
cat >"$E2E_TMP/clash.job" <<JOB
[global]
filename=$f
size=1m
ioengine=psync
[clobber]
rw=write
bs=8k
runtime=4s
time_based
[victim]
rw=randwrite
bs=4k
io_size=1m
verify=crc32c
fsync=1
startdelay=300ms
JOB
expect_exit 1 "verify=crc32c: overwritten blocks fail the job" "$FAULTLINE" --quiet \
	--output-format=json --output="$E2E_TMP/clash.json" "$E2E_TMP/clash.job"
expect_err_has "job 'victim' failed: verify:" "the failure says verify"
pycheck "verify counts the mismatches and names the first" '
import json, sys
d = {j["jobname"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
v = d["victim"]
assert v["error"] == 84, v["error"]   # EILSEQ, as fio
f = v["faultline"]["verify"]
assert f["mismatches"] > 0 and f["blocks_checked"] >= f["mismatches"], f
assert f["first_bad_target"] == sys.argv[2] and f["first_bad_offset"] % 4096 == 0, f
assert d["clobber"]["error"] == 0
' "$E2E_TMP/clash.json" "$f"

# Writes stay inside offset..offset+size: a file with a sentinel
# pattern around the region keeps it.
s=$E2E_TMP/sentinel
python3 -c '
import sys
open(sys.argv[1], "wb").write(bytes([0xA5]) * (8 << 20))' "$s"
for engine in psync mmap io_uring libaio posixaio bufpool; do
	for rw in randwrite write; do
		"$FAULTLINE" --quiet --name=in --filename="$s" --offset=1m --size=4m --ioengine=$engine \
			$([ $engine = bufpool ] && echo --pool_size=1m --pool_page=64k) --rw=$rw --bs=64k --iodepth=4 --numjobs=2 --runtime=200ms --time_based \
			--output=/dev/null 2>"$E2E_TMP/err"
	done
done
pycheck "writes of every engine stayed inside offset..offset+size" '
import sys
d = open(sys.argv[1], "rb").read()
assert len(d) == 8 << 20, len(d)
assert d[:1 << 20] == bytes([0xA5]) * (1 << 20), "bytes before offset changed"
assert d[5 << 20:] == bytes([0xA5]) * (3 << 20), "bytes after offset+size changed"
inside = d[1 << 20:5 << 20]
assert inside.count(b"FAULTLN1") > 0, "nothing written inside"
' "$s"

# A block device carrying ext4: refused, naming ext4; written only with
# allow_destructive=1. Root only (loop devices).
if [ "$(id -u)" != 0 ]; then
	echo "skip - ext4 loop device refusal: needs root for losetup"
elif ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
	echo "skip - ext4 loop device refusal: mkfs.ext4 or losetup missing"
else
	img=$E2E_TMP/ext4.img
	truncate -s 32m "$img"
	mkfs.ext4 -q -F "$img" >/dev/null 2>&1
	loop_attach loop "$img" || loop=
	if [ -z "$loop" ]; then
		echo "skip - ext4 loop device refusal: no loop device available"
	else
		trap '[ "$BASHPID" = "$E2E_MAIN" ] && { loop_detach "$loop"; rm -rf "$E2E_TMP"; }' EXIT
		sum0=$(sha256sum <"$loop")
		expect_exit 2 "write job on a loop device carrying ext4: exit 2" "$FAULTLINE" --name=dev \
			--filename="$loop" --rw=randwrite --size=4m --io_size=64k
		expect_err_has "ext4" "the refusal names ext4"
		expect_err_has "$loop" "the refusal names the device"
		[ "$(sha256sum <"$loop")" = "$sum0" ] && pass "the refused device is untouched" ||
			fail "the refused device is untouched"
		expect_exit 0 "with allow_destructive=1 it runs" "$FAULTLINE" --quiet --name=dev \
			--filename="$loop" --rw=randwrite --size=4m --io_size=64k --allow_destructive=1 \
			--verify=crc32c --output-format=json --output="$E2E_TMP/dev.json"
		pycheck "the device was written and verified" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0 and j["write"]["total_ios"] == 16, j["write"]
assert j["faultline"]["verify"]["mismatches"] == 0, j["faultline"]["verify"]
' "$E2E_TMP/dev.json"
		loop_detach "$loop"
		trap '[ "$BASHPID" = "$E2E_MAIN" ] && rm -rf "$E2E_TMP"' EXIT
	fi
fi

# io_uring, O_DIRECT, a mix with a drained fsync every 8 writes: on a
# ring with DEFER_TASKRUN this hung about one run in two (Linux 6.18),
# so a flushing job's ring is set up without it. Ten short runs, each
# killed if it takes more than 10 s.
hung=0
for i in $(seq 10); do
	timeout -s KILL 10 "$FAULTLINE" --quiet --name=drain --filename="$f" --size=16m --rw=randrw \
		--bs=4k --ioengine=io_uring --iodepth=16 --direct=1 --fsync=8 --runtime=300ms \
		--time_based --output=/dev/null 2>/dev/null || hung=$((hung + 1))
done
if [ $hung = 0 ]; then pass "io_uring O_DIRECT randrw with fsync=8: 10 runs end"
else fail "io_uring O_DIRECT randrw with fsync=8" "$hung of 10 runs hung or failed"; fi

e2e_done
