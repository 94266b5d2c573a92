#!/usr/bin/env bash
# fio's per-request options (issue 29), each checked where doing nothing
# would show: cmdprio_percentage's share in log_prio's column and its
# requests' latencies apart, prioclass in that column for a sync engine,
# the realtime class refused without the capability, zonemode=strided's
# offsets in write_iolog, verify=crc64 (and md5) catching a corrupted
# block, atomic=1's fallback said, dedupe_percentage's copies and
# buffer_compress_percentage's ratio in the written file,
# continue_on_error's counted errors.
. "$(dirname "$0")/lib.sh"

data=$E2E_TMP/data
mkdata "$data" 16
cd "$E2E_TMP" || exit 1

# cmdprio_percentage=20 with best effort 0 against the job's idle class:
# a fifth of the requests (iops log, by priority column) carry
# 2<<13|0 = 16384, the rest 3<<13|0 = 24576. No realtime class, so it
# runs unprivileged too.
# The job ends at 4096 requests (runtime only a cap against a hang), paced
# to 2048 a second: how many requests the share is taken over, and that
# they fill whole 200 ms windows (the iops log has rates of whole windows
# only), are then the job's, not the host's. A 2 s run on a loaded host
# whose disk stalls had a handful of requests (a noisy share), or none in
# a whole window (no entry of a priority). The share is bounded by the
# spread of a count of N requests each picked with p = 0.2: 4 standard
# deviations, sqrt(0.16 / N), and at least the 0.03 of 4096 well spread.
for eng in io_uring libaio; do
	rm -f prio_*.log
	expect_exit 0 "$eng: cmdprio_percentage runs" "$FAULTLINE" --quiet --output=/dev/null \
		--interval=200ms --log_avg_msec=200 --name=p --filename="$data" --size=16m --rw=randread --bs=4k --direct=1 \
		--ioengine=$eng --iodepth=8 --number_ios=4096 --runtime=120 --rate_iops=2048 --prioclass=3 \
		--cmdprio_percentage=20 --cmdprio_class=2 --cmdprio=0 --log_prio=1 \
		--write_iops_log=prio --write_lat_log=prio --randseed=7
	pycheck "$eng: a fifth of the requests carry cmdprio's value in log_prio's column" '
import math, sys
n = {}
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    n[int(f[4])] = n.get(int(f[4]), 0) + int(f[1])
assert set(n) == {16384, 24576}, n
share = n[16384] / (n[16384] + n[24576])
# requests counted: rates of 200 ms windows (the last, cut short, is not in)
N = (n[16384] + n[24576]) * 0.2
assert abs(share - 0.2) <= max(0.03, 4 * math.sqrt(0.16 / N)), (share, N, n)
' "$E2E_TMP/prio_iops.1.log"
	pycheck "$eng: each priority has its own latency entries" '
import sys
p = {int(l.split(",")[4]) for l in open(sys.argv[1]) if l.strip()}
assert p == {16384, 24576}, p
' "$E2E_TMP/prio_clat.1.log"
done

# prioclass/prio for a sync engine: ioprio_set on the thread; log_prio's
# column holds its value (2<<13|5 = 16389), and without log_prio fio's 0.
# The job ends at 256 requests (runtime a cap against a hang), and the
# latency log has an entry for the last window too, cut short or not:
# that it has entries is then the job's. A 1 s run whose reads a loaded
# host's disk stalled past the second had no whole window with I/O, and
# the iops log (rates of whole windows only) no entry at all.
rm -f sp_*.log
expect_exit 0 "psync: prioclass=2 prio=5 runs" "$FAULTLINE" --quiet --output=/dev/null \
	--name=s --filename="$data" --size=16m --rw=randread --bs=4k --ioengine=psync \
	--number_ios=256 --runtime=60 --prioclass=2 --prio=5 --log_prio=1 --write_iops_log=sp \
	--write_lat_log=sp
pycheck "psync: log_prio's column is the job's ioprio" '
import sys
col = lambda path: {int(l.split(",")[4]) for l in open(path) if l.strip()}
assert col(sys.argv[1]) == {16389}, col(sys.argv[1])
assert col(sys.argv[2]) <= {16389}, col(sys.argv[2])
' "$E2E_TMP/sp_lat.1.log" "$E2E_TMP/sp_iops.1.log"

# cmdprio on a sync engine is fio's engine option of io_uring and libaio.
expect_exit 2 "cmdprio_percentage with psync is refused" "$FAULTLINE" --parse-only \
	--name=s --filename="$data" --size=16m --rw=randread --ioengine=psync --cmdprio_percentage=10
# The realtime class needs CAP_SYS_ADMIN or CAP_SYS_NICE: refused before
# anything runs without it (the kernel would fail every request).
if [ "$(id -u)" != 0 ]; then
	expect_exit 2 "realtime cmdprio_class without the capability is refused" "$FAULTLINE" \
		--quiet --output=/dev/null --name=r --filename="$data" --size=16m --rw=randread \
		--direct=1 --ioengine=io_uring --runtime=1 --cmdprio_percentage=10 --cmdprio_class=1
	grep -q CAP_SYS_NICE "$E2E_TMP/err" && pass "the refusal names the capability" ||
		fail "the refusal names the capability" "$(head -c 300 "$E2E_TMP/err")"
else
	expect_exit 0 "realtime cmdprio_class runs as root" "$FAULTLINE" --quiet --output=/dev/null \
		--name=r --filename="$data" --size=16m --rw=randread --direct=1 --ioengine=io_uring \
		--time_based --runtime=1 --cmdprio_percentage=10 --cmdprio_class=1
fi

# zonemode=strided: 16k in a zone, then 48k skipped (fio 3.33's own
# write_iolog of this job starts 0 4 8 12 64 68 ...).
rm -f zones.log
expect_exit 0 "zonemode=strided runs" "$FAULTLINE" --quiet --output=/dev/null --name=z \
	--filename="$data" --size=1m --bs=4k --rw=read --zonemode=strided --zonesize=16k \
	--zoneskip=48k --ioengine=psync --write_iolog=zones.log
pycheck "zonemode=strided: write_iolog's offsets follow zonesize and zoneskip" '
import sys
offs = [int(l.split()[3]) // 1024 for l in open(sys.argv[1]) if " read " in l]
assert offs[:10] == [0, 4, 8, 12, 64, 68, 72, 76, 128, 132], offs[:10]
assert len(offs) == 256, len(offs)
assert all(o % 64 < 16 for o in offs), offs
' "$E2E_TMP/zones.log"

# verify=crc64: a write job's blocks check at its end; a byte changed
# afterwards in one block is the one mismatch faultline --verify finds.
for sum in crc64 md5; do
	rm -f "$E2E_TMP/vd"
	printf '[w]\nfilename=%s\nsize=2m\nbs=4k\nrw=write\nioengine=psync\nverify=%s\n' \
		"$E2E_TMP/vd" "$sum" >"$E2E_TMP/v.fio"
	expect_exit 0 "verify=$sum: the job's read-back finds nothing wrong" "$FAULTLINE" --quiet \
		--output-format=json --output="$E2E_TMP/v.json" "$E2E_TMP/v.fio"
	pycheck "verify=$sum: every block checked with $sum" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["mode"] == sys.argv[2] and v["blocks_checked"] == 512 and v["mismatches"] == 0, v
' "$E2E_TMP/v.json" "$sum"
	# Every bit of one byte flipped: writing a fixed 'X' left the block
	# intact once, where the block's random byte was an 'X' (1 in 256).
	"$PY" -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))' \
		"$E2E_TMP/vd" $((4096 * 7 + 1000))
	expect_exit 1 "verify=$sum: a corrupted block fails faultline --verify" "$FAULTLINE" --verify "$E2E_TMP/v.fio"
	grep -q "1 mismatches" "$E2E_TMP/out" && grep -q "offset 28672" "$E2E_TMP/out" &&
		pass "verify=$sum: the mismatch is the corrupted block" ||
		fail "verify=$sum: the mismatch is the corrupted block" "$(head -c 400 "$E2E_TMP/out")"
done

# atomic=1: RWF_ATOMIC where statx says the target takes it; elsewhere
# (this host's disks) one warning naming what statx said, and the job
# runs with plain writes.
expect_exit 0 "atomic=1 runs" "$FAULTLINE" --quiet --output=/dev/null --name=a --filename="$data" \
	--size=4m --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=4 --atomic=1 \
	--verify=crc64 --verify_write_sequence=0 --numjobs=2
if grep -q "atomic=1" "$E2E_TMP/err"; then
	grep -q "without RWF_ATOMIC" "$E2E_TMP/err" && pass "atomic=1: the fallback is said" ||
		fail "atomic=1: the fallback is said" "$(head -c 300 "$E2E_TMP/err")"
else
	pass "atomic=1: the target takes RWF_ATOMIC writes (no warning)"
fi
expect_exit 2 "atomic=1 with mmap is refused" "$FAULTLINE" --parse-only --name=a \
	--filename="$data" --size=4m --rw=write --ioengine=mmap --atomic=1

# dedupe_percentage=50 with buffer_compress_percentage=50: about half the
# written 4k blocks are copies of others, and the data compresses to
# about half (zlib over a file of unique blocks: compress alone).
rm -f "$E2E_TMP/dd"
expect_exit 0 "dedupe_percentage=50 runs" "$FAULTLINE" --quiet --output=/dev/null --name=d \
	--filename="$E2E_TMP/dd" --size=8m --bs=4k --rw=write --ioengine=libaio --iodepth=8 \
	--dedupe_percentage=50 --buffer_compress_percentage=50
pycheck "dedupe_percentage=50: about half the blocks repeat others" '
import hashlib, sys
d = open(sys.argv[1], "rb").read()
b = [hashlib.sha1(d[i:i + 4096]).digest() for i in range(0, len(d), 4096)]
share = len(set(b)) / len(b)
assert 0.45 < share < 0.55, share
assert all(d[i + 256:i + 512] == bytes(256) for i in range(0, len(d), 512)), "no zeros"
' "$E2E_TMP/dd"
rm -f "$E2E_TMP/cc"
expect_exit 0 "buffer_compress_percentage=70 runs" "$FAULTLINE" --quiet --output=/dev/null --name=c \
	--filename="$E2E_TMP/cc" --size=4m --bs=4k --rw=write --ioengine=psync --buffer_compress_percentage=70
pycheck "buffer_compress_percentage=70: the data compresses to about 30 %" '
import sys, zlib
d = open(sys.argv[1], "rb").read()
r = len(zlib.compress(d, 6)) / len(d)
assert 0.27 < r < 0.36, r
' "$E2E_TMP/cc"
expect_exit 2 "verify with dedupe_percentage is refused" "$FAULTLINE" --parse-only --name=v \
	--filename="$E2E_TMP/cc" --size=4m --rw=write --verify=crc32c --dedupe_percentage=10

# continue_on_error=read: a target cut short under a running job gives
# short reads; they are counted (fio's total_err, first_error) and the
# job goes on and ends well; without it the first one fails the job.
# With ignore_error naming other errnos for reads, a short read (EIO)
# is not one to go on after, as in fio (its default list: EIO, EILSEQ).
for coe in read none read:EAGAIN; do
	ign=${coe#*:}
	[ "$ign" = "$coe" ] && ign= || coe=${coe%%:*}
	head -c $((4 << 20)) /dev/urandom >"$E2E_TMP/tr"
	"$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/tr.json" --name=t \
		--filename="$E2E_TMP/tr" --size=4m --rw=randread --bs=4k --ioengine=psync \
		--time_based --runtime=3 --continue_on_error=$coe ${ign:+--ignore_error=$ign} \
		2>"$E2E_TMP/err" &
	pid=$!
	for _ in $(seq 100); do
		ls -l /proc/$pid/task/*/fd 2>/dev/null | grep -q "$E2E_TMP/tr" && break
		sleep 0.05
	done
	truncate -s 64k "$E2E_TMP/tr"
	wait $pid
	rc=$?
	if [ $coe = read ] && [ -z "$ign" ]; then
		[ $rc = 0 ] && pass "continue_on_error=read: the job ends well" ||
			fail "continue_on_error=read: the job ends well" "exit $rc" "$(head -c 300 "$E2E_TMP/err")"
		pycheck "continue_on_error=read: the short reads are counted" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0 and j["total_err"] > 0 and j["first_error"] == 5, (j["error"], j.get("total_err"))
' "$E2E_TMP/tr.json"
	else
		[ $rc = 1 ] && pass "continue_on_error=$coe${ign:+ ignore_error=$ign}: the first short read fails the job" ||
			fail "continue_on_error=$coe${ign:+ ignore_error=$ign}: the first short read fails the job" "exit $rc"
	fi
done

e2e_done
