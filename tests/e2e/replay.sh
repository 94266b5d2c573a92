#!/bin/bash
# tests/e2e/replay.sh - write_iolog and read_iolog (fio's iolog), issue 29:
# a job recorded and replayed gives the same requests and bytes through
# every engine; fio 3.33's replay of the same logs (faultline's, fio's own,
# version 2, blktrace, two files in one log) counts the same; a job whose
# rw= writes replays a log's writes and syncs where fio's replay puts
# them; timed replay takes the log's time, replay_no_stall none,
# replay_time_scale scales it;
# bad logs and contradictions are refused with the file and line.
. "$(dirname "$0")/lib.sh"

T=$E2E_TMP
mkdata "$T/a.dat" 16
mkdata "$T/b.dat" 8
ENGINES="psync mmap io_uring libaio null bufpool vmcache"

# run NAME ARGS...: faultline with JSON in $T/NAME.json
run() {
	local name=$1
	shift
	"$FAULTLINE" --quiet --output-format=json --output="$T/$name.json" "$@" >"$T/$name.out" 2>"$T/$name.err"
}

# ios_bytes FILE.json: "ios bytes" of the first job's reads
ios_bytes() {
	"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["read"]["total_ios"], j["read"]["io_bytes"])' "$1"
}

# fio_replay LOG [ARGS...]: "ios bytes" of fio's replay of LOG
fio_replay() {
	local log=$1
	shift
	fio --name=fr --ioengine=psync --read_iolog="$log" --replay_no_stall=1 "$@" \
		--output-format=json --output="$T/fio.json" >/dev/null 2>"$T/fio.err" || return 1
	ios_bytes "$T/fio.json"
}

pool() { case $1 in bufpool|vmcache) echo "--pool_size=8m" ;; esac; }

# ---- every engine: recorded, then replayed ----------------------------------
for eng in $ENGINES; do
	rm -f "$T/$eng.log"
	if ! run rec-$eng --name=rec --filename="$T/a.dat" --rw=randread --bs=4k --size=4m --io_size=2m \
		--ioengine=$eng $(pool $eng) --iodepth=4 --write_iolog="$T/$eng.log"; then
		fail "$eng: a job with write_iolog runs" "$(head -c 400 "$T/rec-$eng.err")"
		continue
	fi
	rec=$(ios_bytes "$T/rec-$eng.json")
	lines=$(grep -c ' read ' "$T/$eng.log")
	if [ "$(head -1 "$T/$eng.log")" = "fio version 3 iolog" ] && [ "$lines" = "${rec%% *}" ]; then
		pass "$eng: write_iolog has the header and one line per request ($lines)"
	else
		fail "$eng: write_iolog has the header and one line per request" "log $lines lines, job '$rec'"
	fi
	if run rep-$eng --name=rep --read_iolog="$T/$eng.log" --replay_no_stall=1 --ioengine=$eng \
		$(pool $eng) --iodepth=4; then
		got=$(ios_bytes "$T/rep-$eng.json")
		[ "$got" = "$rec" ] && pass "$eng: replay of its own log: same ios and bytes ($got)" ||
			fail "$eng: replay of its own log: same ios and bytes" "recorded '$rec', replayed '$got'"
	else
		fail "$eng: replay runs" "$(head -c 400 "$T/rep-$eng.err")"
	fi
done

# fio replays faultline's log (the psync one) to the same counts.
got=$(fio_replay "$T/psync.log")
want=$(ios_bytes "$T/rec-psync.json")
[ -n "$got" ] && [ "$got" = "$want" ] && pass "fio replays faultline's log: same ios and bytes ($got)" ||
	fail "fio replays faultline's log" "fio '$got', faultline '$want'" "$(head -c 300 "$T/fio.err")"

# ---- fio's own log, two files, replayed by both --------------------------------
rm -f "$T/fio2.log"
fio --name=w --filename="$T/a.dat:$T/b.dat" --rw=randread --bsrange=512-16k --blockalign=512 \
	--size=8m --number_ios=300 --ioengine=psync --write_iolog="$T/fio2.log" >/dev/null 2>&1
want=$(fio_replay "$T/fio2.log")
nfiles=$(awk '$3 == "add"' "$T/fio2.log" | wc -l)
for eng in $ENGINES; do
	# bsrange's requests cross the pools' 4k pages: served page by page.
	run f2-$eng --name=f2 --read_iolog="$T/fio2.log" --replay_no_stall=1 --ioengine=$eng $(pool $eng)
	got=$(ios_bytes "$T/f2-$eng.json" 2>/dev/null)
	[ -n "$want" ] && [ "$got" = "$want" ] && pass "$eng: fio's log of $nfiles files: the same ios and bytes as fio's replay ($got)" ||
		fail "$eng: fio's log of two files" "fio '$want', faultline '$got'" "$(head -c 300 "$T/f2-$eng.err")"
done

# ---- version 2, and a redirect to a scratch file laid out by faultline ------------
{
	echo "fio version 2 iolog"
	echo "/nonexistent/db add"
	echo "/nonexistent/db open"
	for i in $(seq 0 99); do echo "/nonexistent/db read $((i * 12288 + i % 3 * 512)) $((4096 + i % 2 * 512))"; done
	echo "/nonexistent/db wait 50 0"
	echo "/nonexistent/db read 4000000 8192"
	echo "/nonexistent/db close"
} >"$T/v2.log"
for eng in psync mmap io_uring; do
	rm -f "$T/scratch.dat"
	run v2-$eng --name=v2 --read_iolog="$T/v2.log" --replay_redirect="$T/scratch.dat" --ioengine=$eng
	got=$(ios_bytes "$T/v2-$eng.json" 2>/dev/null)
	size=$(stat -c %s "$T/scratch.dat" 2>/dev/null)
	[ "$got" = "101 $((50 * 4096 + 50 * 4608 + 8192))" ] && [ "$size" = 4008192 ] &&
		pass "$eng: version 2 log redirected to a scratch file laid out to its furthest request ($got, $size bytes)" ||
		fail "$eng: version 2 log redirected" "got '$got', file $size bytes" "$(head -c 300 "$T/v2-$eng.err")"
done
want=$(fio_replay "$T/v2.log" --replay_redirect="$T/scratch.dat")
[ "$want" = "$got" ] && pass "fio's replay of the version 2 log counts the same ($want)" ||
	fail "fio's replay of the version 2 log" "fio '$want', faultline '$got'"

# ---- blktrace (blkparse -d output), made here -----------------------------------
"$PY" - "$T/trace.bin" <<'EOF'
import struct, sys
out = open(sys.argv[1], 'wb')
def ev(t, sector, nbytes, action, pdu=b''):
    out.write(struct.pack('<IIQQIIIIIHH', 0x65617407, 0, t, sector, nbytes, action, 1, (8 << 20), 0, 0, len(pdu)) + pdu)
for i in range(200):
    rw = 2 if i % 5 == 0 else 1                      # every 5th a write
    ev(i * 100000, i * 16, 4096 * (1 + i % 3), 1 | ((1 << 4 | rw) << 16))    # queue
    ev(i * 100000 + 50, i * 16, 4096, 8 | ((1 << 7 | rw) << 16))            # complete
    if i % 50 == 0:
        ev(i * 100000 + 60, 0, 0, 0 | (1 << 10 << 16), b'process')          # notify
EOF
rm -f "$T/bt.dat"
run bt --name=bt --read_iolog="$T/trace.bin" --replay_redirect="$T/bt.dat" --ioengine=psync
got=$(ios_bytes "$T/bt.json" 2>/dev/null)
want=$(fio --name=fr --ioengine=psync --read_iolog="$T/trace.bin" --replay_redirect="$T/bt.dat" --replay_no_stall=1 \
	--readonly --output-format=json --output="$T/fio.json" >/dev/null 2>&1 && ios_bytes "$T/fio.json")
[ -n "$got" ] && [ "$got" = "$want" ] && pass "blktrace: the same reads as fio --readonly's replay ($got)" ||
	fail "blktrace: the same reads as fio" "fio '$want', faultline '$got'" "$(head -c 300 "$T/bt.err")"
grep -q "left out of the replay: 40 write" "$T/bt.err" && pass "blktrace: the 40 writes left out, counted in a warning" ||
	fail "blktrace: writes left out with a warning" "$(head -c 300 "$T/bt.err")"

# ---- time: as logged, none, scaled --------------------------------------------------
"$PY" - "$T/timed.log" "$T/a.dat" <<'EOF'
import sys
with open(sys.argv[1], 'w') as f:
    f.write('fio version 3 iolog\n0 %s add\n0 %s open\n' % (sys.argv[2], sys.argv[2]))
    for i in range(201):
        f.write('%d %s read %d 4096\n' % (i * 5000, sys.argv[2], i * 4096))
EOF
runtime_ms() {
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["runtime"])' "$1"
}
run t100 --name=t --read_iolog="$T/timed.log"
run t200 --name=t --read_iolog="$T/timed.log" --replay_time_scale=200
r100=$(runtime_ms "$T/t100.json"); r200=$(runtime_ms "$T/t200.json")
# Only lower bounds on time: the schedule's (a replay cannot run ahead
# of it). How much later than its schedule a replay ends is the host's
# speed and load (replay_no_stall once took 1366 ms beside other tests,
# 1 ms alone), so nothing here asks a replay to be quick.
[ "$r100" -ge 995 ] && pass "a log spanning 1 s takes at least 1 s to replay (${r100} ms)" ||
	fail "a log spanning 1 s takes at least 1 s to replay" "${r100} ms"
[ "$r200" -ge 497 ] && pass "replay_time_scale=200: at least 0.5 s (${r200} ms)" ||
	fail "replay_time_scale=200: at least 0.5 s" "${r200} ms"
# A log spanning 10^4 s (201 reads, 50 s apart), with runtime=300 (a cap
# in which the schedule has 6 reads due; the 201 take milliseconds): every
# read is done only when no_stall ignores the times, or when a scale of
# 1000000 % (10^4 times the rate) brings them within the cap; the scaled
# replay still takes the 1 s its schedule asks.
"$PY" - "$T/long.log" "$T/a.dat" <<'EOF'
import sys
with open(sys.argv[1], 'w') as f:
    f.write('fio version 3 iolog\n0 %s add\n0 %s open\n' % (sys.argv[2], sys.argv[2]))
    for i in range(201):
        f.write('%d %s read %d 4096\n' % (i * 50000000, sys.argv[2], i * 4096))
EOF
run t0 --name=t --read_iolog="$T/long.log" --replay_no_stall=1 --runtime=300
run tmax --name=t --read_iolog="$T/long.log" --replay_time_scale=1000000 --runtime=300
[ "$(ios_bytes "$T/t0.json")" = "201 $((201 * 4096))" ] &&
	pass "replay_no_stall=1: a log spanning 10^4 s replays whole within runtime=300 ($(runtime_ms "$T/t0.json") ms)" ||
	fail "replay_no_stall=1: a log spanning 10^4 s replays whole within runtime=300" "$(ios_bytes "$T/t0.json")"
[ "$(ios_bytes "$T/tmax.json")" = "201 $((201 * 4096))" ] && [ "$(runtime_ms "$T/tmax.json")" -ge 995 ] &&
	pass "replay_time_scale=1000000: 10^4 s of log replayed whole, in at least its 1 s ($(runtime_ms "$T/tmax.json") ms)" ||
	fail "replay_time_scale=1000000: 10^4 s of log replayed whole, in at least 1 s" \
		"$(ios_bytes "$T/tmax.json"), $(runtime_ms "$T/tmax.json") ms"
# An asynchronous engine reaps what is in flight before it waits for the
# next request's time: a read's latency is not the gap to the next. The
# gaps are 500 ms, so the median (under 250 ms) tells the two apart on
# any host that reads a cached 4 KiB in less than a quarter of a second.
# Cached it is: the file read first and invalidate=0 (the default would
# drop it, and a loaded host's disk stalls a cold 4k read for over a
# second), so what is checked is the reaping, not the disk.
"$PY" - "$T/gaps.log" "$T/a.dat" <<'EOF'
import sys
with open(sys.argv[1], 'w') as f:
    f.write('fio version 3 iolog\n0 %s add\n0 %s open\n' % (sys.argv[2], sys.argv[2]))
    for i in range(9):
        f.write('%d %s read %d 4096\n' % (i * 500000, sys.argv[2], i * 4096))
EOF
cat "$T/a.dat" >/dev/null
run tq --name=t --read_iolog="$T/gaps.log" --ioengine=io_uring --iodepth=4 --invalidate=0
p50=$("$PY" -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["jobs"][0]["read"]["lat_ns"]["percentile"]["50.000000"]))' "$T/tq.json")
[ "$p50" -lt 250000000 ] && pass "timed replay, io_uring iodepth=4: median latency below half the 500 ms gap (${p50} ns)" ||
	fail "timed replay, io_uring iodepth=4: median latency below half the gap" "${p50} ns"
[ "$(ios_bytes "$T/t100.json")" = "$(ios_bytes "$T/t200.json")" ] && [ "$(ios_bytes "$T/t100.json")" = "201 $((201 * 4096))" ] &&
	pass "timed and scaled replays issue the same requests" ||
	fail "timed and scaled replays issue the same requests"

# ---- a write job recorded; its reads replayed --------------------------------------
cp "$T/b.dat" "$T/w.dat"
run wrec --name=w --filename="$T/w.dat" --rw=randrw --bs=4k --size=4m --io_size=1m --fsync=8 \
	--write_iolog="$T/w.log"
nw=$(grep -c ' write ' "$T/w.log"); nr=$(grep -c ' read ' "$T/w.log"); ns=$(grep -c ' sync 0 0' "$T/w.log")
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; sys.exit(not (j["write"]["total_ios"] == int(sys.argv[2]) and j["read"]["total_ios"] == int(sys.argv[3]) and j["sync"]["total_ios"] == int(sys.argv[4])))' \
	"$T/wrec.json" "$nw" "$nr" "$ns" && pass "a write job's log has its reads, writes and syncs ($nr, $nw, $ns)" ||
	fail "a write job's log has its reads, writes and syncs" "log: $nr reads, $nw writes, $ns syncs"
run wrep --name=w --read_iolog="$T/w.log" --replay_no_stall=1
[ "$(ios_bytes "$T/wrep.json" | cut -d' ' -f1)" = "$nr" ] && grep -q "left out of the replay: $nw write, $ns sync" "$T/wrep.err" &&
	pass "a read job replays the log's reads and counts what it leaves out" ||
	fail "a read job replays the reads, leaves out the writes" "$(ios_bytes "$T/wrep.json")" "$(head -c 300 "$T/wrep.err")"

# ---- a log's writes and syncs replayed by a job whose rw= writes ----------------------
# fio's own log of a mixed job on two files: requests of 512 B to 16 KiB at
# 512-byte alignment (across the pools' pages), a datasync every 4 writes.
mkdata "$T/wa0.dat" 4
mkdata "$T/wb0.dat" 4
cp "$T/wa0.dat" "$T/wa.dat"
cp "$T/wb0.dat" "$T/wb.dat"
rm -f "$T/fw.log"
fio --name=w --filename="$T/wa.dat:$T/wb.dat" --rw=randrw --bsrange=512-16k --blockalign=512 --size=8m \
	--number_ios=300 --fdatasync=4 --ioengine=psync --write_iolog="$T/fw.log" >/dev/null 2>&1
# counts FILE.json: "reads writes syncs read-bytes write-bytes" (fio counts its
# syncs in lat_ns's N, faultline in total_ios)
counts() {
	"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; r, w, s = j["read"], j["write"], j["sync"]
print(r["total_ios"], w["total_ios"], s["total_ios"] or s.get("lat_ns", {}).get("N", 0), r["io_bytes"], w["io_bytes"])' "$1"
}
# written: every logged write changed its bytes, and no other byte of either file changed
written() {
	"$PY" - "$T/fw.log" "$T/wa0.dat" "$T/wa.dat" "$T/wb0.dat" "$T/wb.dat" <<'PYEOF'
import sys
log, pairs = sys.argv[1], {sys.argv[3]: sys.argv[2], sys.argv[5]: sys.argv[4]}
writes = {f: [] for f in pairs}
for line in open(log):
    f = line.split()
    if len(f) == 5 and f[2] == "write":
        writes[f[1]].append((int(f[3]), int(f[4])))
for f, orig in pairs.items():
    a, b = open(orig, "rb").read(), open(f, "rb").read()
    if len(a) != len(b):
        sys.exit("%s: %d bytes, was %d" % (f, len(b), len(a)))
    for o, l in writes[f]:
        if a[o:o + l] == b[o:o + l]:
            sys.exit("%s: the write of %d at %d did not reach the file" % (f, l, o))
    at = 0
    for o, l in sorted(writes[f]) + [(len(a), 0)]:
        if o > at and a[at:o] != b[at:o]:
            sys.exit("%s: bytes in [%d, %d) changed, no logged write covers them" % (f, at, o))
        at = max(at, o + l)
print(sum(len(w) for w in writes.values()))
PYEOF
}
restore() { cp "$T/wa0.dat" "$T/wa.dat" && cp "$T/wb0.dat" "$T/wb.dat"; }
restore
fio --name=fr --ioengine=psync --read_iolog="$T/fw.log" --replay_no_stall=1 --output-format=json \
	--output="$T/fiow.json" >/dev/null 2>"$T/fiow.err"
want=$(counts "$T/fiow.json" 2>/dev/null)
fio_written=$(written 2>&1)
nsync=$(grep -c ' datasync ' "$T/fw.log")
[ -n "$want" ] && [ "$(echo "$want" | cut -d' ' -f3)" = "$nsync" ] && [ "$fio_written" -gt 0 ] 2>/dev/null &&
	pass "fio replays its mixed log: reads, writes and $nsync datasyncs ($want), its $fio_written writes in the files" ||
	fail "fio replays its mixed log" "fio '$want', $nsync datasync lines, $fio_written" "$(head -c 300 "$T/fiow.err")"
for eng in $ENGINES; do
	restore
	run fw-$eng --name=fw --read_iolog="$T/fw.log" --rw=randrw --replay_no_stall=1 --ioengine=$eng \
		--iodepth=4 $(pool $eng | sed 's/8m/1m/')
	got=$(counts "$T/fw-$eng.json" 2>/dev/null)
	ok=""
	if [ $eng = null ]; then
		why="a file changed"
		cmp -s "$T/wa0.dat" "$T/wa.dat" && cmp -s "$T/wb0.dat" "$T/wb.dat" && ok="the files untouched"
	else
		why=$(written 2>&1) && ok="its $why writes in the files, nothing else changed"
	fi
	[ -n "$want" ] && [ "$got" = "$want" ] && [ -n "$ok" ] &&
		pass "$eng, rw=randrw: fio's mixed log replayed as fio does ($got), $ok" ||
		fail "$eng, rw=randrw: fio's mixed log replayed as fio does" "fio '$want', faultline '$got'" "$why" \
			"$(head -c 300 "$T/fw-$eng.err")"
done
# A logged datasync is an fdatasync, and no fsync reaches the targets.
if command -v strace >/dev/null; then
	restore
	ASAN_OPTIONS=$NOLEAK strace -f -y -e trace=fsync,fdatasync -o "$T/fw.st" "$FAULTLINE" --quiet --name=fw \
		--read_iolog="$T/fw.log" --rw=randrw --replay_no_stall=1 --output-format=json --output="$T/fws.json" 2>/dev/null
	nfd=$(grep -c "fdatasync([0-9]*<$T/w[ab].dat>" "$T/fw.st")
	nfs=$(grep -c "[^a]fsync([0-9]*<$T/w[ab].dat>" "$T/fw.st")
	[ "$nfd" -ge "$nsync" ] && [ "$nfs" = 0 ] && pass "psync: the log's $nsync datasyncs are fdatasync calls ($nfd in all), no fsync" ||
		fail "psync: the log's datasyncs are fdatasync calls" "$nfd fdatasync, $nfs fsync on the targets"
fi
# A log that names a block device with a filesystem: a writing replay is refused
# before anything runs, as any write job's target (devsafety), and writes nothing.
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
	echo "skip - a writing replay of a device with a filesystem: needs root, losetup and mkfs.ext4"
else
	head -c $((16 << 20)) /dev/zero >"$T/fs.img"
	mkfs.ext4 -q -F "$T/fs.img" >/dev/null 2>&1
	if loop_attach loop "$T/fs.img"; then
		printf 'fio version 2 iolog\n%s add\n%s open\n%s write 4096 4096\n%s close\n' $loop $loop $loop $loop >"$T/dev.log"
		sum0=$(md5sum <"$T/fs.img")
		expect_exit 2 "a writing replay of a device with a filesystem: exit 2" "$FAULTLINE" --name=d \
			--read_iolog="$T/dev.log" --rw=randrw --replay_no_stall=1
		expect_err_has "carries an ext4 filesystem" "a writing replay names the filesystem it will not write"
		loop_detach "$loop"
		[ "$(md5sum <"$T/fs.img")" = "$sum0" ] && pass "the device is unchanged, byte for byte" ||
			fail "the device is unchanged, byte for byte"
	else
		echo "skip - a writing replay of a device with a filesystem: no free loop device"
	fi
fi
# The same log, a read job: its writes and syncs left out, both files unchanged.
restore
run fwr --name=fwr --read_iolog="$T/fw.log" --replay_no_stall=1 --ioengine=io_uring
nw=$(grep -c ' write ' "$T/fw.log")
[ "$(counts "$T/fwr.json" | cut -d' ' -f1-3)" = "$(echo "$want" | cut -d' ' -f1) 0 0" ] &&
	grep -q "left out of the replay: $nw write, $nsync datasync" "$T/fwr.err" &&
	cmp -s "$T/wa0.dat" "$T/wa.dat" && cmp -s "$T/wb0.dat" "$T/wb.dat" &&
	pass "a read job replays the mixed log's reads only, counts what it leaves out, and writes nothing" ||
	fail "a read job replays the mixed log's reads only" "$(counts "$T/fwr.json")" "$(head -c 300 "$T/fwr.err")"
"$FAULTLINE" --name=s --read_iolog="$T/fw.log" --rw=rw --replay_no_stall=1 >"$T/sumw.out" 2>&1
grep -q "replay of $T/fw.log: each logged read, write and sync once, as fast as possible" "$T/sumw.out" &&
	pass "the summary says a writing job replays the log's writes and syncs" ||
	fail "the summary says a writing job replays the log's writes and syncs" "$(grep replay "$T/sumw.out")"
expect_exit 2 "read_iolog with verify: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/fw.log" --rw=randrw --verify=crc32c
expect_err_has "contradicts verify" "read_iolog with verify says why"

# ---- numjobs: a log per thread; two logs to two threads ---------------------------
rm -f "$T/nj.log"*
run nj --name=nj --filename="$T/a.dat" --rw=randread --bs=4k --size=4m --io_size=256k --numjobs=2 \
	--write_iolog="$T/nj.log"
[ -s "$T/nj.log.0" ] && [ -s "$T/nj.log.1" ] && [ ! -e "$T/nj.log" ] && pass "numjobs=2: write_iolog FILE.0 and FILE.1" ||
	fail "numjobs=2: write_iolog FILE.0 and FILE.1" "$(ls "$T")"
run nj2 --name=nj --read_iolog="$T/nj.log.0:$T/v2.log" --replay_redirect="$T/a.dat" --numjobs=2 --replay_no_stall=1
[ "$(ios_bytes "$T/nj2.json" | cut -d' ' -f1)" = "$((64 + 101))" ] && pass "read_iolog=a:b with numjobs=2: each thread its own log" ||
	fail "read_iolog=a:b with numjobs=2" "$(ios_bytes "$T/nj2.json")" "$(head -c 300 "$T/nj2.err")"

# ---- a gzip'd log; strace2iolog on a real capture -----------------------------
gzip -c "$T/psync.log" >"$T/psync.log.gz"
run gz --name=gz --read_iolog="$T/psync.log.gz" --replay_no_stall=1
[ "$(ios_bytes "$T/gz.json")" = "$(ios_bytes "$T/rec-psync.json")" ] && pass "a gzip'd log replays like the plain one" ||
	fail "a gzip'd log replays like the plain one" "$(head -c 300 "$T/gz.err")"
top=$(cd "$(dirname "$0")/../.." && pwd)
# A recorded two-thread trace (tests/fixtures/strace/README): strace -f splits
# calls into halves, a pwrite64's offset in the first, its result in the second.
fx=$top/tests/fixtures/strace/two-threads.txt
if [ -x "$top/jobs/strace2iolog" ] && [ -e "$fx" ]; then
	"$top/jobs/strace2iolog" --only db.dat "$fx" >"$T/fx.log" 2>"$T/fx.err"
	want_w=$(seq 0 79 | awk '{print $1 * 4096, 4096}' | sort)
	want_r=$(seq 0 39 | awk '{print $1 * 4096, 4096; print $1 * 4096, 4096}' | sort)
	[ "$(awk '$3 == "write" {print $4, $5}' "$T/fx.log" | sort)" = "$want_w" ] &&
		[ "$(awk '$3 == "read" {print $4, $5}' "$T/fx.log" | sort)" = "$want_r" ] &&
		[ "$(grep -c ' datasync ' "$T/fx.log")" = 8 ] && ! grep -q libc "$T/fx.log" &&
		grep -q '0 calls dropped' "$T/fx.err" &&
		pass "strace2iolog: a two-thread trace's split calls joined: 80 writes, 80 reads, 8 datasyncs where they were" ||
		fail "strace2iolog: a two-thread trace's split calls joined" "$(cat "$T/fx.err")"
	# --split: a log per thread and a job replaying them together.
	"$top/jobs/strace2iolog" --only db.dat --split "$T/fxs" "$fx" 2>"$T/fxs.err"
	req() { awk '$3 ~ /^(read|write|sync|datasync)$/ {print $1, $2, $3, $4, $5}' "$@" | sort; }
	[ "$(ls "$T/fxs")" = "capture.job
strace-9590.iolog
strace-9591.iolog" ] && [ "$(req "$T/fxs"/*.iolog)" = "$(req "$T/fx.log")" ] &&
		[ "$(grep -c ' read ' "$T/fxs/strace-9590.iolog")" = 40 ] &&
		[ "$(grep -c ' datasync ' "$T/fxs/strace-9591.iolog")" = 4 ] &&
		grep -q "thread 9591: 40 reads, 40 writes, 0 syncs, 4 datasyncs" "$T/fxs.err" &&
		"$FAULTLINE" --parse-only "$T/fxs/capture.job" >/dev/null 2>&1 &&
		pass "strace2iolog --split: a log per thread (each call where it was) and a capture.job" ||
		fail "strace2iolog --split: a log per thread and a capture.job" "$(ls "$T/fxs")" "$(cat "$T/fxs.err")"
fi
if [ ! -x "$top/jobs/strace2iolog" ]; then
	# make e2e-unprivileged copies tests/ and man/ only.
	echo "skip - strace2iolog: no jobs/ beside tests/ here"
elif command -v strace >/dev/null; then
	# faultline's own preads of a.dat, captured and converted, then replayed.
	ASAN_OPTIONS=$NOLEAK strace -f -ttt -y -s 0 -e trace=pread64 -e signal=none -o "$T/st.txt" \
		"$FAULTLINE" --quiet --name=st --filename="$T/a.dat" --rw=randread --bs=4k --size=4m --io_size=400k \
		--output-format=json --output="$T/st.json" 2>/dev/null
	"$top/jobs/strace2iolog" --only "$T/a.dat" "$T/st.txt" >"$T/st.log" 2>"$T/st.err"
	run str --name=str --read_iolog="$T/st.log" --replay_no_stall=1
	got=$(ios_bytes "$T/str.json" 2>/dev/null)
	[ -n "$got" ] && [ "$got" = "$(ios_bytes "$T/st.json")" ] && [ "$got" = "$(fio_replay "$T/st.log")" ] &&
		pass "strace2iolog: a captured run's preads replay to its counts, in faultline and fio ($got)" ||
		fail "strace2iolog: a captured run's preads replay to its counts" "replayed '$got', captured run '$(ios_bytes "$T/st.json")'" "$(cat "$T/st.err")"
	# A run that writes, its preads, pwrites and fdatasyncs captured (invalidate=0: no
	# fdatasync of its own before the run), then replayed by a writing job and by fio.
	cp "$T/wa0.dat" "$T/cap.dat"
	ASAN_OPTIONS=$NOLEAK strace -f -ttt -y -s 0 -e trace=pread64,pwrite64,fsync,fdatasync -e signal=none \
		-o "$T/stw.txt" "$FAULTLINE" --quiet --name=stw --filename="$T/cap.dat" --rw=randrw --bs=4k \
		--size=4m --io_size=400k --fdatasync=8 --invalidate=0 --output-format=json --output="$T/stw.json" 2>/dev/null
	"$top/jobs/strace2iolog" --only "$T/cap.dat" "$T/stw.txt" >"$T/stw.log" 2>"$T/stw.err"
	cp "$T/wa0.dat" "$T/cap.dat"
	run strw --name=strw --read_iolog="$T/stw.log" --rw=randrw --replay_no_stall=1
	cp "$T/wa0.dat" "$T/cap.dat"
	fio --name=fr --ioengine=psync --read_iolog="$T/stw.log" --replay_no_stall=1 --output-format=json \
		--output="$T/fiostw.json" >/dev/null 2>&1
	got=$(counts "$T/strw.json" 2>/dev/null)
	[ -n "$got" ] && [ "$(echo "$got" | cut -d' ' -f2)" -gt 0 ] && [ "$(echo "$got" | cut -d' ' -f3)" -gt 0 ] &&
		[ "$got" = "$(counts "$T/stw.json")" ] && [ "$got" = "$(counts "$T/fiostw.json")" ] &&
		pass "strace2iolog: a captured run's preads, pwrites and fdatasyncs replay to its counts, in faultline and fio ($got)" ||
		fail "strace2iolog: a captured run that writes replays to its counts" "replayed '$got'," \
			"captured run '$(counts "$T/stw.json")', fio '$(counts "$T/fiostw.json")'" "$(cat "$T/stw.err")"
else
	fail "strace2iolog: strace is missing (Makefile DEB_PKGS has it)"
fi

# ---- a thread that began late begins late: capture.job's startdelay -----------
# A hand-written trace of two threads, the second's first read 300 ms after
# the first's. --split gives each its log and capture.job a startdelay of its
# thread's first call (a replay counts a log from its first line, as fio's
# does); the replay, traced by strace for each call's time, issues the
# second's first read no earlier than 300 ms after the run opened the first's
# file: every job's targets are open before the jobs start together, and
# the second's startdelay counts from that start (a bound the schedule
# sets, whatever this host's speed; the first's own first read comes after
# its thread starts, so it is not the mark).
if [ -x "$top/jobs/strace2iolog" ] && command -v strace >/dev/null; then
	printf '%s\n' "101  1000.000000 pread64(3<$T/a.dat>, \"\"..., 4096, 8192) = 4096" \
		"101  1000.000100 pread64(3<$T/a.dat>, \"\"..., 4096, 12288) = 4096" \
		"102  1000.300000 pread64(4<$T/b.dat>, \"\"..., 4096, 8192) = 4096" \
		"102  1000.300100 pread64(4<$T/b.dat>, \"\"..., 4096, 12288) = 4096" >"$T/late.txt"
	"$top/jobs/strace2iolog" --split "$T/late" "$T/late.txt" 2>"$T/late.err"
	ASAN_OPTIONS=$NOLEAK strace -f -ttt -y -s 0 -e trace=openat,pread64 -e signal=none -o "$T/late.st" \
		"$FAULTLINE" --quiet --output-format=json --output="$T/late.json" "$T/late/capture.job" 2>/dev/null
	pycheck "capture.job: the thread that began 300 ms late issues its first read >= 300 ms after the run opened the first's file" '
import re, sys
T = sys.argv[1]
job = open(T + "/late/capture.job").read()
assert re.search(r"\[strace-102\]\nstartdelay=300000us\n", job), job
opened, first = None, {}
for l in open(T + "/late.st"):
    m = re.match(r"\d+\s+(\d+\.\d+) (openat|pread64)\(.*?<?" + re.escape(T) + r"/([ab])\.dat>?", l)
    if not m:
        continue
    t, call, f = float(m.group(1)), m.group(2), m.group(3)
    if call == "openat" and f == "a" and opened is None:
        opened = t
    if call == "pread64" and f not in first:
        first[f] = t
assert opened is not None and set(first) == {"a", "b"}, (opened, first)
assert first["b"] - opened >= 0.3, "b read %.3f s after a.dat was opened" % (first["b"] - opened)
print("b after a.dat opened: %.3f s; after a\x27s first read: %.3f s" % (first["b"] - opened, first["b"] - first["a"]))
' "$T"
fi

# ---- the bundled trace: every read once (the null engine needs no 305 MiB copy) ----
if [ ! -e "$top/jobs/sqlite-trace.iolog.gz" ]; then
	echo "skip - the bundled trace: no jobs/ beside tests/ here"
else
run bundled --name=b --read_iolog="$top/jobs/sqlite-trace.iolog.gz" --ioengine=null --replay_no_stall=1
[ "$(ios_bytes "$T/bundled.json" 2>/dev/null)" = "136809 437957508" ] &&
	pass "jobs/sqlite-trace.iolog.gz: 136809 reads, 437957508 bytes (jobs/README)" ||
	fail "jobs/sqlite-trace.iolog.gz replays its 136809 reads" "$(ios_bytes "$T/bundled.json")" "$(head -c 300 "$T/bundled.err")"
expect_exit 0 "jobs/sqlite-replay.job parses" "$FAULTLINE" --parse-only "$top/jobs/sqlite-replay.job"
fi

# ---- processes (thread=0): each replays the whole log, as each fio clone does ----
run proc --name=p --read_iolog="$T/psync.log" --replay_no_stall=1 --thread=0 --numjobs=2
want=$(ios_bytes "$T/rec-psync.json")
[ "$(ios_bytes "$T/proc.json" 2>/dev/null)" = "$(( ${want%% *} * 2 )) $(( ${want##* } * 2 ))" ] &&
	pass "thread=0 numjobs=2: each process replays the log once" ||
	fail "thread=0 numjobs=2: each process replays the log once" "$(ios_bytes "$T/proc.json")" "$(head -c 300 "$T/proc.err")"

# ---- the summary says what is replayed and at what pace ----------------------------
"$FAULTLINE" --quiet --name=s --read_iolog="$T/timed.log" --replay_time_scale=400 >"$T/sum.out" 2>&1
grep -q "replay of $T/timed.log: each logged read once, at 400 % of the log's rate" "$T/sum.out" &&
	pass "the summary names the replayed log and its pace" ||
	fail "the summary names the replayed log and its pace" "$(head -5 "$T/sum.out")"

# ---- refused, with the file and line ------------------------------------------------
printf 'fio version 3 iolog\n0 %s add\n1 %s read 0 4096\n2 %s read 4096\n' "$T/a.dat" "$T/a.dat" "$T/a.dat" >"$T/bad.log"
expect_exit 2 "a malformed line: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/bad.log"
expect_err_has "bad.log:4: expected 'TIME FILE ACTION'" "a malformed line is named by file and line"
expect_exit 2 "read_iolog with time_based: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/psync.log" --time_based --runtime=1
expect_err_has "contradicts time_based" "read_iolog with time_based says why"
expect_exit 2 "read_iolog of a missing file: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/nope.log"
expect_err_has "nope.log: No such file" "a missing log is named"
expect_exit 2 "direct=1 with an unaligned request: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/v2.log" \
	--replay_redirect="$T/scratch.dat" --direct=1
expect_err_has "logical block size" "direct=1 with an unaligned request says why"
expect_exit 0 "direct=1 with replay_align=4k runs" "$FAULTLINE" --quiet --name=b --read_iolog="$T/v2.log" \
	--replay_redirect="$T/scratch.dat" --direct=1 --replay_align=4k --replay_no_stall=1
expect_exit 2 "replay_align not a power of two: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/v2.log" --replay_align=3000
expect_exit 2 "replay_skip of an unknown kind: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/v2.log" --replay_skip=flush
expect_exit 2 "everything skipped: exit 2" "$FAULTLINE" --name=b --read_iolog="$T/v2.log" \
	--replay_redirect="$T/scratch.dat" --replay_skip=read
expect_err_has "nothing to replay" "everything skipped says so"

e2e_done
