#!/bin/bash
# e2e: alone
# tests/e2e/capture.sh - faultline --capture: bad input refused with
# nothing made; a command's requests captured exactly (faultline itself,
# a job of known reads and writes) and replayed from capture.job; a
# Ctrl-C leaving whole logs; a real PostgreSQL (tests/pg-scratch)
# answering pgbench -S under --capture: one stream per backend, its reads
# against the server's own counts, and a short verdict of the capture.
#
# Alone: it may mount tracefs (and unmounts it again), which another
# suite's --mount-tracefs would race with, and its server takes both
# CPUs for a few seconds.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	expect_exit 2 "not root: refused" "$FAULTLINE" --capture="$E2E_TMP/nr" -- true
	expect_err_has "needs root" "not root: says why"
	[ ! -e "$E2E_TMP/nr" ] && pass "not root: nothing made" || fail "not root: nothing made"
	e2e_done
	exit
fi

pgdir=$E2E_TMP/pg
capture_pid=""
cleanup() {
	[ -n "$capture_pid" ] && kill -INT "$capture_pid" 2>/dev/null && wait "$capture_pid" 2>/dev/null
	[ -d "$pgdir" ] && "$E2E_TESTS/pg-scratch" stop "$pgdir"
	[ -n "${cmd_pid:-}" ] && kill "$cmd_pid" 2>/dev/null
	rm -rf "$E2E_TMP"
}
trap '[ "$BASHPID" = "$E2E_MAIN" ] && cleanup' EXIT
chmod 711 "$E2E_TMP"

# ---- bad input: exit 2, nothing made or touched --------------------------
expect_exit 2 "not root: refused" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$FAULTLINE" --capture="$E2E_TMP/nr" -- true
expect_err_has "needs root" "not root: says why"
[ ! -e "$E2E_TMP/nr" ] && pass "not root: nothing made" || fail "not root: nothing made"

nopid=4194000
while kill -0 "$nopid" 2>/dev/null; do nopid=$((nopid + 1)); done
expect_exit 2 "a pid that does not exist: refused" "$FAULTLINE" --capture="$E2E_TMP/np" --pid=1,$nopid
expect_err_has "--pid=$nopid: no such process" "a pid that does not exist: named"
[ ! -e "$E2E_TMP/np" ] && pass "a pid that does not exist: nothing made" || fail "a pid that does not exist: nothing made"

mkdir "$E2E_TMP/old"
echo "[keep]" >"$E2E_TMP/old/capture.job"
expect_exit 2 "a DIR holding a capture: refused" "$FAULTLINE" --capture="$E2E_TMP/old" -- true
expect_err_has "holds an earlier capture" "a DIR holding a capture: says so"
[ "$(cat "$E2E_TMP/old/capture.job")" = "[keep]" ] && [ "$(ls "$E2E_TMP/old")" = capture.job ] &&
	pass "a DIR holding a capture: untouched" || fail "a DIR holding a capture: untouched" "$(ls -l "$E2E_TMP/old")"

# No tracefs: a mount namespace whose /sys/kernel is an empty tmpfs.
expect_exit 2 "no tracefs: refused" unshare -m sh -c \
	'umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null;
	 mount -t tmpfs none /sys/kernel && exec "$0" --capture="$1" -- true' "$FAULTLINE" "$E2E_TMP/nt"
expect_err_has "no tracefs" "no tracefs: says so"
[ ! -e "$E2E_TMP/nt" ] && pass "no tracefs: nothing made" || fail "no tracefs: nothing made"

expect_exit 2 "--capture without what to trace: refused" "$FAULTLINE" --capture="$E2E_TMP/nw"
expect_exit 2 "--capture with --pid and a command: refused" "$FAULTLINE" --capture="$E2E_TMP/nw" --pid=1 -- true
[ ! -e "$E2E_TMP/nw" ] && pass "bad options: nothing made" || fail "bad options: nothing made"

# ---- a command of known requests ------------------------------------------
# faultline itself: 256 random reads of 4 KiB over 1 MiB (each block
# once), then 64 writes of 4 KiB with an fdatasync every 16. Paced, so
# the file stays open across reads of the buffers (a descriptor opened
# and closed between two reads cannot be named: see faultline(1)).
data=$E2E_TMP/data
mkdata "$data" 1
expect_exit 0 "-- COMMAND: a read job captured" "$FAULTLINE" --capture="$E2E_TMP/rd" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=r --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=psync --invalidate=0 --rate_iops=1024 --write_iolog="$E2E_TMP/rd.own"
cp "$E2E_TMP/out" "$E2E_TMP/rd.summary"
wdata=$E2E_TMP/wdata
expect_exit 0 "-- COMMAND: a write job captured" "$FAULTLINE" --capture="$E2E_TMP/wr" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=w --filename="$wdata" --size=256k --bs=4k --rw=write \
	--ioengine=psync --fdatasync=16 --rate_iops=256 --write_iolog="$E2E_TMP/wr.own"
pycheck "-- COMMAND: exactly the job's requests (its own write_iolog), in one stream, whole lines" '
import glob, os, sys
def streams(d, path):
    out = {}
    for f in glob.glob(d + "/*.iolog"):
        text = open(f).read()
        assert text.endswith("\n"), f
        lines = text.split("\n")[:-1]
        assert lines[0] == "fio version 3 iolog", f
        reqs = []
        for l in lines[1:]:
            t = l.split()
            assert len(t) in (3, 5), (f, l)
            if t[1] == path and t[2] in ("read", "write", "sync", "datasync"):
                reqs.append((int(t[0]), t[2], int(t[3]), int(t[4])))
        if reqs:
            out[f] = reqs
    return out
def own(log):
    # what faultline itself issued (write_iolog)
    return [(t[2], int(t[3]), int(t[4])) for t in (l.split() for l in open(log).read().split("\n")[1:-1])
            if t[2] in ("read", "write", "sync", "datasync")]
rd, wr = sys.argv[1:3]
s = streams(rd, os.path.realpath(sys.argv[3]))
assert len(s) == 1, s.keys()
r = list(s.values())[0]
assert [x[1:] for x in r] == own(sys.argv[5]), "the reads, as the job issued them"
assert len(r) == 256 and all(x[1] == "read" and x[3] == 4096 for x in r)
assert [x[0] for x in r] == sorted(x[0] for x in r), "timestamps in order"
# The main thread lays the file out (and syncs it) before the worker
# writes: a stream of its own.
s = {f: r for f, r in streams(wr, os.path.realpath(sys.argv[4])).items() if any(x[1] == "write" for x in r)}
assert len(s) == 1, s.keys()
w = list(s.values())[0]
ops = [x[1] for x in w]
assert ops.count("write") == 64 and ops.count("datasync") == 4, ops
assert [x[1:] for x in w] == own(sys.argv[6]), "the writes and syncs, as the job issued them"
' "$E2E_TMP/rd" "$E2E_TMP/wr" "$data" "$wdata" "$E2E_TMP/rd.own" "$E2E_TMP/wr.own"
grep -qE "^ +256 +0 +0 +1\.0 +0\.0 .* $(realpath "$data")$" "$E2E_TMP/rd.summary" &&
	pass "-- COMMAND: the summary counts the file's 256 reads and 1 MiB" ||
	fail "-- COMMAND: the summary counts the file's 256 reads and 1 MiB" "$(cat "$E2E_TMP/rd.summary")"
grep -q "^lost: " "$E2E_TMP/rd.summary" && grep -q "io_uring: 0 io_uring_enter" "$E2E_TMP/rd.summary" &&
	pass "-- COMMAND: the summary says what was lost and what cannot be seen" ||
	fail "-- COMMAND: the summary says what was lost and what cannot be seen"
# The job replays it: the read stream's 256 reads, nothing more.
expect_exit 0 "capture.job replays" "$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/rd.json" \
	"$E2E_TMP/rd/capture.job"
pycheck "capture.job: the replay read the 256 requests" '
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(j["read"]["total_ios"] for j in d["jobs"])
b = sum(j["read"]["io_bytes"] for j in d["jobs"])
assert n == 256 and b == 1 << 20, (n, b)
' "$E2E_TMP/rd.json"

# An io_uring program: its submissions counted, said unseeable.
expect_exit 0 "-- COMMAND: io_uring requests counted" "$FAULTLINE" --capture="$E2E_TMP/ur" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=u --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=io_uring --iodepth=4 --invalidate=0
pycheck "io_uring: its submissions counted and said to be missing" '
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"io_uring: (\d+) io_uring_enter calls submitting (\d+) requests: NOT in the logs", t)
assert m and int(m.group(2)) >= 256, t
' "$E2E_TMP/out"

# ---- --comm: a task that takes the name after the capture began --------------
cat >"$E2E_TMP/named.py" <<'EOF'
import os, sys, time
open("/proc/self/comm", "w").write("flcapturetest")
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(100):
    os.pread(fd, 4096, i * 4096)
time.sleep(0.3)
os.close(fd)
EOF
"$FAULTLINE" --capture="$E2E_TMP/cm" --comm=flcapturetest --runtime=3s >"$E2E_TMP/cm.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$E2E_TMP/cm.out" && break; sleep 0.1; done
"$PY" "$E2E_TMP/named.py" "$data"
wait "$capture_pid"
rc=$?
capture_pid=""
[ "$rc" = 0 ] && [ "$(ls "$E2E_TMP/cm" | grep -c '^flcapturetest-[0-9]*\.iolog$')" = 1 ] &&
	[ "$(cat "$E2E_TMP"/cm/flcapturetest-*.iolog | grep -c " $(realpath "$data") read ")" = 100 ] &&
	pass "--comm: the task of that name, its 100 reads in a stream of its own (and --runtime ends it)" ||
	fail "--comm: the task of that name, its 100 reads" "exit $rc" "$(head -n 5 "$E2E_TMP/cm.out")"

# ---- Ctrl-C in the middle: whole logs, capture.job written ------------------
"$FAULTLINE" --quiet --output=/dev/null --name=long --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=psync --invalidate=0 --rate_iops=2000 --time_based --runtime=30s &
cmd_pid=$!
"$FAULTLINE" --capture="$E2E_TMP/int" --pid=$cmd_pid >"$E2E_TMP/int.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$E2E_TMP/int.out" && break; sleep 0.1; done
# The 1000 reads checked below, done since the capture began: 2000 read
# calls of the command's (its own reads of /proc are a few dozen a
# second beside its 2000 preads), however long the host takes to give
# them (60 s, a guard).
syscr() { awk '/^syscr:/ {print $2}' "/proc/$cmd_pid/io" 2>/dev/null || echo 0; }
base=$(syscr)
for _ in $(seq 600); do [ $(($(syscr) - base)) -ge 2000 ] && break; sleep 0.1; done
kill -INT "$capture_pid"
wait "$capture_pid"
rc=$?
capture_pid=""
kill "$cmd_pid" 2>/dev/null
wait "$cmd_pid" 2>/dev/null
cmd_pid=""
[ "$rc" = 0 ] && pass "Ctrl-C: the capture ends, exit 0" || fail "Ctrl-C: the capture ends, exit 0" "exit $rc"
pycheck "Ctrl-C: whole logs and a capture.job naming each" '
import glob, os, sys
d = sys.argv[1]
logs = sorted(glob.glob(d + "/*.iolog"))
assert logs, os.listdir(d)
job = open(d + "/capture.job").read()
reads = 0
for f in logs:
    text = open(f).read()
    assert text.endswith("\n"), f
    for l in text.split("\n")[1:-1]:
        assert len(l.split()) in (3, 5), l
        reads += l.split()[1:3][1:] == ["read"]
    assert ("read_iolog=" + f) in job, f
assert reads >= 1000, reads
' "$E2E_TMP/int"

# ---- PostgreSQL under pgbench -S ---------------------------------------------
if ! command -v setpriv >/dev/null || ! ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1; then
	fail "PostgreSQL: Debian's postgresql package (make check-deps) is not installed"
	e2e_done
	exit
fi
mkdir "$pgdir"
if ! "$E2E_TESTS/pg-scratch" start "$pgdir" 10 >"$E2E_TMP/pg.err" 2>&1; then
	fail "PostgreSQL: a scratch server starts" "$(tail -n 5 "$E2E_TMP/pg.err")"
	e2e_done
	exit
fi
pass "PostgreSQL: a scratch server starts (initdb as postgres, a unix socket in the scratch directory)"
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
psql_q() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$pgbin/psql" -h "$pgdir" -U postgres -At -c "$1" postgres; }
pm=$("$E2E_TESTS/pg-scratch" pid "$pgdir")
psql_q "select pg_stat_force_next_flush()" >/dev/null 2>&1
before=$(psql_q "select coalesce(sum(heap_blks_read + coalesce(idx_blks_read, 0)), 0) from pg_statio_user_tables")
"$FAULTLINE" --capture="$E2E_TMP/pgcap" --pid="$pm" >"$E2E_TMP/pgcap.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$E2E_TMP/pgcap.out" && break; sleep 0.1; done
# The backends' pids, asked while pgbench runs: once both are connected
# (on a loaded host that may take seconds of the run's 5).
( for _ in $(seq 100); do
	psql_q "select pid from pg_stat_activity where application_name = 'pgbench'" >"$E2E_TMP/backends.now"
	[ "$(wc -l <"$E2E_TMP/backends.now")" -ge 2 ] && break
	sleep 0.05
  done; mv "$E2E_TMP/backends.now" "$E2E_TMP/backends" ) &
"$E2E_TESTS/pg-scratch" bench "$pgdir" 5 >"$E2E_TMP/tps"
wait $!
sleep 0.5
kill -INT "$capture_pid"
wait "$capture_pid"
rc=$?
capture_pid=""
[ "$rc" = 0 ] && pass "PostgreSQL: captured pgbench -S ($(cut -d' ' -f1 "$E2E_TMP/tps") tps)" ||
	fail "PostgreSQL: captured pgbench -S" "exit $rc" "$(tail -n 5 "$E2E_TMP/pgcap.out")"
sleep 1.5	# the server's statistics, flushed (at most every second)
after=$(psql_q "select coalesce(sum(heap_blks_read + coalesce(idx_blks_read, 0)), 0) from pg_statio_user_tables")
oids=$(psql_q "select relfilenode from pg_class where relname like 'pgbench_%'" | tr '\n' ' ')
pycheck "PostgreSQL: one stream per backend, each with reads; their reads of pgbench's tables are the server's own count" '
import glob, os, sys
d, backends, before, after, oids = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
pids = open(backends).read().split()
assert len(pids) == 2, pids
reads = {}
for f in glob.glob(d + "/*.iolog"):
    n = 0
    for l in open(f).read().split("\n")[1:-1]:
        t = l.split()
        if t[2] == "read" and os.path.basename(t[1]).split(".")[0].split("_")[0] in oids:
            assert int(t[4]) == 8192, l
            n += 1
    reads[os.path.basename(f)] = n
for p in pids:
    assert reads.get("postgres-%s.iolog" % p, 0) > 100, (p, reads)
total = sum(reads.values())
# pg_statio counts every block read into shared buffers, the logs every
# pread of them; the summary counts the reads it could not name (a
# descriptor opened and closed between two reads of the buffers: the
# connection pgbench asks the scale on).
import re
m = re.search(r"^not logged: \d+ requests \((\d+) reads, \d+ writes, \d+ syncs\) on descriptors closed",
              open(sys.argv[6]).read(), re.M)
unnamed = int(m.group(1)) if m else 0
assert total <= after - before <= total + unnamed, (total, unnamed, after - before, reads)
' "$E2E_TMP/pgcap" "$E2E_TMP/backends" "$before" "$after" "$oids" "$E2E_TMP/pgcap.out"
grep -q "^lost: none" "$E2E_TMP/pgcap.out" && pass "PostgreSQL: no record lost" ||
	fail "PostgreSQL: no record lost" "$(grep '^lost' "$E2E_TMP/pgcap.out")"

# What the verdict does with it today, on a short budget.
mkdir "$E2E_TMP/verdict"
expect_exit 0 "PostgreSQL: faultline --verdict of the capture finishes" "$FAULTLINE" --quiet --verdict \
	--budget=40s --output="$E2E_TMP/verdict" "$E2E_TMP/pgcap/capture.job"
[ -s "$E2E_TMP/verdict/verdict.json" ] && pass "PostgreSQL: the verdict wrote verdict.json" ||
	fail "PostgreSQL: the verdict wrote verdict.json" "$(tail -n 5 "$E2E_TMP/err")"
"$E2E_TESTS/pg-scratch" stop "$pgdir"
[ ! -f "$pgdir/data/postmaster.pid" ] && pass "PostgreSQL: stopped" || fail "PostgreSQL: stopped"

e2e_done
