#!/usr/bin/env bash
# Failures at run time: a file truncated under mmap (SIGBUS), a target
# deleted, a block device that goes away, Ctrl-C at a random moment. The
# failing job is reported with its target and offset, the others finish,
# outputs stay whole, and read jobs never modify their target.
. "$(dirname "$0")/lib.sh"

a=$E2E_TMP/a
b=$E2E_TMP/b
mkdata "$a" 64
mkdata "$b" 64

# mmap over a file another process truncates, next to a psync job.
cat >"$E2E_TMP/bus.job" <<JOB
[global]
runtime=3s
time_based
invalidate=0
[victim]
filename=$a
ioengine=mmap
rw=randread
[bystander]
filename=$b
ioengine=psync
rw=randread
JOB
"$FAULTLINE" --quiet --csv="$E2E_TMP/bus.csv" --output-format=json --output="$E2E_TMP/bus.json" \
	"$E2E_TMP/bus.job" 2>"$E2E_TMP/bus.err" &
pid=$!
sleep 1
truncate -s 8192 "$a"
wait $pid
rc=$?
[ $rc = 1 ] && pass "SIGBUS: exit 1" || fail "SIGBUS: exit 1" "exit $rc"
grep -q "SIGBUS" "$E2E_TMP/bus.err" && grep -qF "$a" "$E2E_TMP/bus.err" &&
	pass "SIGBUS: message names the file" || fail "SIGBUS: message names the file" "$(cat "$E2E_TMP/bus.err")"
pycheck "SIGBUS: victim failed with an offset, bystander ran its full time" '
import json, sys
d = {j["jobname"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
v, b = d["victim"], d["bystander"]
assert v["error"] != 0 and "SIGBUS" in v["faultline"]["errmsg"] and "offset" in v["faultline"]["errmsg"], v["faultline"]
assert b["error"] == 0 and b["read"]["runtime"] >= 2900, b["read"]["runtime"]
' "$E2E_TMP/bus.json"
pycheck "SIGBUS: every CSV row complete" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) > 2 and all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
' "$E2E_TMP/bus.csv"

# The same SIGBUS in a helper thread: an offload helper running the mmap
# loop's accesses, and a prefetch helper touching ahead of the reader.
# Each fails its request (or its read-ahead) without killing the
# process; the job then fails with SIGBUS, named, exit 1. (Whether the
# prefetch helper or the reader meets the hole first is a race; either
# way the process must survive and say so.)
for mode in offload prefetch; do
	mkdata "$a" 64
	if [ $mode = offload ]; then
		extra="--loop=4 --offload=2"
	else
		extra="--prefetch=touch:1m"
	fi
	# shellcheck disable=SC2086
	"$FAULTLINE" --quiet --name=$mode --filename="$a" --ioengine=mmap --rw=read --bs=64k \
		--touch=stride:512 --invalidate=0 --runtime=3s --time_based $extra \
		--output-format=json --output="$E2E_TMP/bus-$mode.json" 2>"$E2E_TMP/bus-$mode.err" &
	pid=$!
	sleep 1
	truncate -s 8192 "$a"
	wait $pid
	rc=$?
	[ $rc = 1 ] && pass "SIGBUS in a $mode helper: exit 1" ||
		fail "SIGBUS in a $mode helper: exit 1" "exit $rc: $(cat "$E2E_TMP/bus-$mode.err")"
	pycheck "SIGBUS in a $mode helper: the job failed, naming SIGBUS and the file" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] != 0, j["faultline"]
assert "SIGBUS" in j["faultline"]["errmsg"] and sys.argv[2] in j["faultline"]["errmsg"], j["faultline"]["errmsg"]
# Every access of the offloaded loop runs on a helper: the helper caught it.
assert sys.argv[3] != "offload" or "offload helper" in j["faultline"]["errmsg"], j["faultline"]["errmsg"]
' "$E2E_TMP/bus-$mode.json" "$a" "$mode"
done

# A target deleted while read through pread: the open descriptor still
# reads it (POSIX), so the job completes; nothing hangs.
mkdata "$a" 16
"$FAULTLINE" --quiet --name=del --filename="$a" --rw=randread --runtime=1500ms --time_based \
	--output=/dev/null 2>"$E2E_TMP/del.err" &
pid=$!
sleep 0.5
rm -f "$a"
wait $pid
rc=$?
[ $rc = 0 ] && pass "target deleted mid-run: the open file is still read, exit 0" ||
	fail "target deleted mid-run" "exit $rc" "$(cat "$E2E_TMP/del.err")"

# A block device that goes away: a loop device detached under psync O_DIRECT.
if [ "$(id -u)" = 0 ] && loop=$(losetup -f --show "$b" 2>/dev/null); then
	# A hang is cut short after 15 s (timeout's exit 124 then fails).
	timeout -s INT 15 "$FAULTLINE" --quiet --name=gone --filename="$loop" --rw=randread --direct=1 --runtime=20s \
		--time_based --output-format=json --output="$E2E_TMP/gone.json" 2>"$E2E_TMP/gone.err" &
	pid=$!
	sleep 1
	# A busy loop device is detached lazily (autoclear); force the I/O
	# to fail by dropping its backing file's size to zero.
	losetup -d "$loop"
	truncate -s 0 "$b"
	losetup -c "$loop" 2>/dev/null
	wait $pid
	rc=$?
	[ $rc = 1 ] && pass "block device gone: exit 1" || fail "block device gone: exit 1" "exit $rc"
	pycheck "block device gone: the job failed naming the device" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] != 0 and sys.argv[2] in j["faultline"]["errmsg"], j["faultline"]
' "$E2E_TMP/gone.json" "$loop"
	losetup -d "$loop" 2>/dev/null
fi

# Read jobs never write: hash before and after every engine.
mkdata "$b" 8
sum0=$(md5sum <"$b")
for e in psync mmap io_uring libaio; do
	"$FAULTLINE" --quiet --name=ro --filename="$b" --ioengine=$e --rw=randread --iodepth=4 \
		--runtime=300ms --time_based --output=/dev/null 2>/dev/null
	"$FAULTLINE" --quiet --name=ro --filename="$b" --ioengine=$e --rw=read --direct=$([ $e = mmap ] && echo 0 || echo 1) \
		--output=/dev/null
done
[ "$(md5sum <"$b")" = "$sum0" ] && pass "targets are never modified" || fail "targets are never modified"

# Ctrl-C at random moments: exit 1, whole CSV rows, JSON that parses.
for i in 1 2 3; do
	"$FAULTLINE" --quiet --csv="$E2E_TMP/int.csv" --interval=100ms --output-format=json \
		--output="$E2E_TMP/int.json" --name=i --filename="$b" --rw=randread --numjobs=2 \
		--runtime=30s --time_based >/dev/null 2>&1 &
	pid=$!
	sleep "0.$((RANDOM % 9 + 1))"
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc = 1 ] && pass "SIGINT at a random moment ($i): exit 1" || fail "SIGINT ($i): exit 1" "exit $rc"
	pycheck "SIGINT ($i): CSV rows whole, JSON parses" '
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows and all(len(r) == len(rows[0]) for r in rows), rows
assert json.load(open(sys.argv[2]))["faultline"]["interrupted"] is True
' "$E2E_TMP/int.csv" "$E2E_TMP/int.json"
done

e2e_done
