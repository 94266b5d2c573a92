#!/bin/bash
# e2e: alone
# tests/e2e/capture.sh - faultline --capture: bad input refused with
# nothing made; a command's requests captured exactly (faultline itself,
# a job of known reads and writes) and replayed from capture.job; a
# Ctrl-C leaving whole logs; a real PostgreSQL (tests/pg-scratch)
# answering pgbench -S under --capture: one stream per backend, its reads
# against the server's own counts, and a short verdict of the capture.
# Every capture check runs under each syscall method (--capture_method=bpf
# and tracepoint), the pagecache method's own checks and PostgreSQL's
# under all three; auto's fallback is checked where BTF is hidden.
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

# No tracefs: a mount namespace whose /sys/kernel is an empty tmpfs (no
# BTF either, so auto cannot fall back on bpf).
for m in tracepoint auto; do
	expect_exit 2 "no tracefs ($m): refused" unshare -m sh -c \
		'umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null;
		 mount -t tmpfs none /sys/kernel && exec "$0" --capture="$1" --capture_method="$2" -- true' \
		"$FAULTLINE" "$E2E_TMP/nt" "$m"
	expect_err_has "no tracefs" "no tracefs ($m): says so"
	[ ! -e "$E2E_TMP/nt" ] && pass "no tracefs ($m): nothing made" || fail "no tracefs ($m): nothing made"
done
expect_err_has "bpf could not load" "no tracefs (auto): says why bpf could not serve either"
expect_exit 2 "--capture_method=bpf without BTF: refused" unshare -m sh -c \
	'mount -t tmpfs none /sys/kernel/btf && exec "$0" --capture="$1" --capture_method=bpf -- true' \
	"$FAULTLINE" "$E2E_TMP/nb"
expect_err_has "this kernel has no BTF" "--capture_method=bpf without BTF: says why"
[ ! -e "$E2E_TMP/nb" ] && pass "--capture_method=bpf without BTF: nothing made" ||
	fail "--capture_method=bpf without BTF: nothing made"
# auto without BTF: the tracepoints, and the summary and capture.job say so.
expect_exit 0 "auto without BTF: captures" unshare -m sh -c \
	'mount -t tmpfs none /sys/kernel/btf && exec "$0" --capture="$1" -- true' "$FAULTLINE" "$E2E_TMP/fb"
grep -q "^method: tracepoint .*bpf could not serve" "$E2E_TMP/out" &&
	grep -q "^; Traced by tracepoint .*bpf could not serve" "$E2E_TMP/fb/capture.job" &&
	pass "auto without BTF: the tracepoint method, said in the summary and capture.job" ||
	fail "auto without BTF: the tracepoint method, said in the summary and capture.job" "$(cat "$E2E_TMP/out")"
expect_exit 2 "--capture_method=other: refused" "$FAULTLINE" --capture="$E2E_TMP/nm" --capture_method=ebpf -- true
expect_err_has "--capture_method=ebpf: expected pagecache, bpf, tracepoint or auto" "--capture_method=other: names the choices"
[ ! -e "$E2E_TMP/nm" ] && pass "--capture_method=other: nothing made" || fail "--capture_method=other: nothing made"

expect_exit 2 "--capture without what to trace: refused" "$FAULTLINE" --capture="$E2E_TMP/nw"
expect_exit 2 "--capture with --pid and a command: refused" "$FAULTLINE" --capture="$E2E_TMP/nw" --pid=1 -- true
[ ! -e "$E2E_TMP/nw" ] && pass "bad options: nothing made" || fail "bad options: nothing made"

# The checks of a capture, under method $1.
method_checks() {
local m=$1 T=$E2E_TMP/$1 rc
mkdir "$T"
# ---- a command of known requests ------------------------------------------
# faultline itself: 256 random reads of 4 KiB over 1 MiB (each block
# once), then 64 writes of 4 KiB with an fdatasync every 16. Paced, so
# the file stays open across reads of the buffers (with the tracepoint
# method, a descriptor opened and closed between two reads cannot be
# named: see faultline(1)).
data=$T/data
mkdata "$data" 1
expect_exit 0 "$m: -- COMMAND: a read job captured" "$FAULTLINE" --capture_method="$m" --capture="$T/rd" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=r --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=psync --invalidate=0 --rate_iops=1024 --write_iolog="$T/rd.own"
cp "$E2E_TMP/out" "$T/rd.summary"
wdata=$T/wdata
expect_exit 0 "$m: -- COMMAND: a write job captured" "$FAULTLINE" --capture_method="$m" --capture="$T/wr" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=w --filename="$wdata" --size=256k --bs=4k --rw=write \
	--ioengine=psync --fdatasync=16 --rate_iops=256 --write_iolog="$T/wr.own"
pycheck "$m: -- COMMAND: exactly the job's requests (its own write_iolog), in one stream, whole lines" '
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
# writes: a stream of its own (logged where its descriptor is named: by
# bpf, which names it at the open; the tracepoint method may count it
# as not logged, closed before it was read).
s = {f: r for f, r in streams(wr, os.path.realpath(sys.argv[4])).items() if any(x[1] == "write" for x in r)}
w = [r for r in s.values() if [x[1:] for x in r] == own(sys.argv[6])]
assert len(w) == 1 and len(s) <= 2, ("one stream holds the writes and syncs as the job issued them", s.keys())
ops = [x[1] for x in w[0]]
assert ops.count("write") == 64 and ops.count("datasync") == 4, ops
' "$T/rd" "$T/wr" "$data" "$wdata" "$T/rd.own" "$T/wr.own"
grep -qE "^ +256 +0 +0 +1\.0 +0\.0 .* $(realpath "$data")$" "$T/rd.summary" &&
	pass "$m: -- COMMAND: the summary counts the file's 256 reads and 1 MiB" ||
	fail "$m: -- COMMAND: the summary counts the file's 256 reads and 1 MiB" "$(cat "$T/rd.summary")"
grep -q "^lost: " "$T/rd.summary" && grep -q "io_uring: 0 io_uring_enter" "$T/rd.summary" &&
	pass "$m: -- COMMAND: the summary says what was lost and what cannot be seen" ||
	fail "$m: -- COMMAND: the summary says what was lost and what cannot be seen"
# The job replays it: the read stream's 256 reads, nothing more.
expect_exit 0 "$m: capture.job replays" "$FAULTLINE" --quiet --output-format=json --output="$T/rd.json" \
	"$T/rd/capture.job"
pycheck "$m: capture.job: the replay read every read the logs hold (the 256 of the data file among them)" '
import glob, json, sys
d = json.load(open(sys.argv[1]))
n = sum(j["read"]["total_ios"] for j in d["jobs"])
b = sum(j["read"]["io_bytes"] for j in d["jobs"])
# With bpf the reads of libraries by the program loader (a short-lived
# descriptor each) are logged too.
logged = [l.split() for f in glob.glob(sys.argv[2] + "/*.iolog") for l in open(f).read().split("\n")[1:-1]]
reads = [int(t[4]) for t in logged if t[2] == "read"]
assert n == len(reads) and b == sum(reads), (n, b, len(reads), sum(reads))
assert sum(1 for t in logged if t[2] == "read" and t[1] == sys.argv[3]) == 256
' "$T/rd.json" "$T/rd" "$(realpath "$data")"
# A replay counts a log from its first line (as fio's does), so each job
# starts as late as its thread began: startdelay is its log's first time.
pycheck "$m: capture.job: each job's startdelay is its stream's first timestamp" '
import re, sys
n = 0
for d in sys.argv[1:]:
    for sec in re.split(r"\n(?=\[)", open(d + "/capture.job").read())[1:]:
        if sec.startswith("[global]"):
            continue
        m = re.search(r"^startdelay=(\d+)us$", sec, re.M)
        log = re.search(r"^read_iolog=(.*)$", sec, re.M).group(1)
        first = int(open(log).read().split("\n")[1].split()[0])
        assert m and int(m.group(1)) == first, (sec, first)
        n += 1
assert n >= 1, n
' "$T/rd" "$T/wr"

# An io_uring program: its submissions counted, said unseeable.
expect_exit 0 "$m: -- COMMAND: io_uring requests counted" "$FAULTLINE" --capture_method="$m" --capture="$T/ur" -- \
	"$FAULTLINE" --quiet --output=/dev/null --name=u --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=io_uring --iodepth=4 --invalidate=0
pycheck "$m: io_uring: its submissions counted and said to be missing" '
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"io_uring: (\d+) io_uring_enter calls submitting (\d+) requests: NOT in the logs", t)
assert m and int(m.group(2)) >= 256, t
' "$E2E_TMP/out"

# ---- --comm: a task that takes the name after the capture began --------------
cat >"$T/named.py" <<'EOF'
import os, sys, time
open("/proc/self/comm", "w").write("flcapturetest")
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(100):
    os.pread(fd, 4096, i * 4096)
time.sleep(0.3)
os.close(fd)
EOF
# 10 s: the task must start, name itself, read and close inside the
# capture's runtime, and a loaded host can take seconds to start Python.
"$FAULTLINE" --capture_method="$m" --capture="$T/cm" --comm=flcapturetest --runtime=10s >"$T/cm.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$T/cm.out" && break; sleep 0.1; done
"$PY" "$T/named.py" "$data"
wait "$capture_pid"
rc=$?
capture_pid=""
[ "$rc" = 0 ] && [ "$(ls "$T/cm" | grep -c '^flcapturetest-[0-9]*\.iolog$')" = 1 ] &&
	[ "$(cat "$T"/cm/flcapturetest-*.iolog | grep -c " $(realpath "$data") read ")" = 100 ] &&
	pass "$m: --comm: the task of that name, its 100 reads in a stream of its own (and --runtime ends it)" ||
	fail "$m: --comm: the task of that name, its 100 reads" "exit $rc" "$(head -n 5 "$T/cm.out")"

# ---- Ctrl-C in the middle: whole logs, capture.job written ------------------
"$FAULTLINE" --quiet --output=/dev/null --name=long --filename="$data" --size=1m --bs=4k --rw=randread \
	--ioengine=psync --invalidate=0 --rate_iops=2000 --time_based --runtime=30s &
cmd_pid=$!
"$FAULTLINE" --capture_method="$m" --capture="$T/int" --pid=$cmd_pid >"$T/int.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$T/int.out" && break; sleep 0.1; done
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
[ "$rc" = 0 ] && pass "$m: Ctrl-C: the capture ends, exit 0" || fail "$m: Ctrl-C: the capture ends, exit 0" "exit $rc"
pycheck "$m: Ctrl-C: whole logs and a capture.job naming each" '
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
' "$T/int"

# ---- descriptors opened, read and closed between two reads of the trace --
# 20 files, each opened by a relative path, read 4 times and closed
# within a millisecond: every read is logged (bpf: the open names its
# descriptor) or counted as not logged (tracepoint: /proc no longer has
# it when the events are taken), never lost between the two.
mkdir "$T/short"
for i in $(seq 20); do head -c 16384 /dev/urandom >"$T/short/f$i"; done
cat >"$T/short.py" <<'EOF'
import os, sys
os.chdir(sys.argv[1])
for i in range(1, 21):
    fd = os.open("f%d" % i, os.O_RDONLY)
    for k in range(4):
        os.pread(fd, 4096, k * 4096)
    os.close(fd)
EOF
expect_exit 0 "$m: short-lived descriptors: captured" "$FAULTLINE" --capture_method="$m" --capture="$T/sh" -- \
	"$PY" "$T/short.py" "$T/short"
pycheck "$m: short-lived descriptors: each read logged on its file, or counted as not logged" '
import glob, os, re, sys
d, files, method = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[4]
logged = {}
for f in glob.glob(d + "/*.iolog"):
    for l in open(f).read().split("\n")[1:-1]:
        t = l.split()
        if t[2] == "read" and os.path.dirname(t[1]) == files:
            logged[t[1]] = logged.get(t[1], 0) + 1
out = open(sys.argv[3]).read()
m = re.search(r"^not logged: \d+ requests \((\d+) reads", out, re.M)
unnamed = int(m.group(1)) if m else 0
n = sum(logged.values())
assert all(v == 4 for v in logged.values()), logged
if method == "bpf":
    assert n == 80 and unnamed == 0, (n, unnamed, out)
else:
    assert n + unnamed >= 80, (n, unnamed, out)
' "$T/sh" "$T/short" "$E2E_TMP/out" "$m"
}

method_checks bpf
method_checks tracepoint

# ---- the pagecache method: the file I/O path, no system call hooked --------
# A read job of known reads whose blocks (6 KiB) straddle pages: the log
# holds each read once, rounded out to whole pages, as many as the job's
# JSON counts. While it runs, the capture's own BPF links are read from
# /proc (fdinfo's tp_name): the file I/O path's tracepoints and the
# scheduler's, never the system calls' (which would put every system call
# of the host on the slow path), and no tracefs instance or syscall event
# enabled. Fails under --capture_method=bpf (sys_enter among the links).
pagecache_checks() {
local m=pagecache T=$E2E_TMP/pagecache rc links sysc
mkdir "$T"
mkdata "$T/data" 2
"$FAULTLINE" --capture_method=$m --capture="$T/rd" -- "$FAULTLINE" --quiet --output-format=json \
	--output="$T/rd.json" --name=r --filename="$T/data" --size=1536k --bs=6k --rw=randread --ioengine=psync \
	--invalidate=0 --rate_iops=256 --write_iolog="$T/rd.own" >"$T/rd.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$T/rd.out" && break; sleep 0.1; done
sleep 0.3
links=$(cat /proc/$capture_pid/fdinfo/* 2>/dev/null | awk '/^tp_name:/ {print $2}' | sort -u | tr '\n' ' ')
sysc=$(cat /sys/kernel/tracing/events/syscalls/*/enable /sys/kernel/tracing/events/raw_syscalls/*/enable \
	2>/dev/null | sort -u | tr '\n' ' ')
[ -e "/sys/kernel/tracing/instances/faultline-capture-$capture_pid" ] && sysc="$sysc instance"
wait "$capture_pid"
rc=$?
capture_pid=""
[ "$rc" = 0 ] && pass "$m: -- COMMAND: a read job captured" || fail "$m: -- COMMAND: a read job captured" \
	"exit $rc" "$(tail -n 5 "$T/rd.out")"
case " $links " in
*" mm_filemap_get_pages "*)
	case " $links " in
	*" sys_enter "* | *" sys_exit "*) fail "$m: no system-call tracepoint hooked" "links: $links" ;;
	*) pass "$m: no system-call tracepoint hooked (links: $links)" ;;
	esac ;;
*) fail "$m: no system-call tracepoint hooked" "the file I/O path is not hooked either: $links" ;;
esac
[ -z "$sysc" ] || [ "$sysc" = "0 " ] && pass "$m: no syscall event enabled, no tracefs instance" ||
	fail "$m: no syscall event enabled, no tracefs instance" "$sysc"
pycheck "$m: -- COMMAND: the job's reads, each once, rounded out to pages, as many as its JSON counts" '
import glob, json, os, sys
d, data, own, js = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3], sys.argv[4]
page = os.sysconf("SC_PAGESIZE")
logged = []
for f in glob.glob(d + "/*.iolog"):
    for l in open(f).read().split("\n")[1:-1]:
        t = l.split()
        if t[1] == data and t[2] == "read":
            logged.append((int(t[3]), int(t[4])))
issued = [(int(t[3]), int(t[4])) for t in (l.split() for l in open(own).read().split("\n")[1:-1]) if t[2] == "read"]
def pages(o, n):
    a = o // page * page
    return (a, -(-(o + n) // page) * page - a)
assert logged == [pages(o, n) for o, n in issued], (logged[:5], issued[:5])
n = sum(j["read"]["total_ios"] for j in json.load(open(js))["jobs"])
assert len(logged) == n == 256, (len(logged), n)
' "$T/rd" "$T/data" "$T/rd.own" "$T/rd.json"
grep -q "^method: pagecache " "$T/rd.out" && grep -q "^seen differently (pagecache method)" "$T/rd.out" &&
	pass "$m: the summary names the method and what it sees differently" ||
	fail "$m: the summary names the method and what it sees differently" "$(tail -n 12 "$T/rd.out")"
}
pagecache_checks

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
# A capture of pgbench -S under method $1, checked against the server's
# own counts, and its verdict.
pg_checks() {
local m=$1 T=$E2E_TMP/$1 rc before after oids
psql_q "select pg_stat_force_next_flush()" >/dev/null 2>&1
before=$(psql_q "select coalesce(sum(heap_blks_read + coalesce(idx_blks_read, 0)), 0) from pg_statio_user_tables")
"$FAULTLINE" --capture_method="$m" --capture="$T/pgcap" --pid="$pm" >"$T/pgcap.out" 2>&1 &
capture_pid=$!
for _ in $(seq 100); do grep -q "^capture: recording" "$T/pgcap.out" && break; sleep 0.1; done
# The backends' pids, asked while pgbench runs: once both are connected
# (on a loaded host that may take seconds of the run's 5).
( for _ in $(seq 100); do
	psql_q "select pid from pg_stat_activity where application_name = 'pgbench'" >"$T/backends.now"
	[ "$(wc -l <"$T/backends.now")" -ge 2 ] && break
	sleep 0.05
  done; mv "$T/backends.now" "$T/backends" ) &
"$E2E_TESTS/pg-scratch" bench "$pgdir" 5 >"$T/tps"
wait $!
sleep 0.5
kill -INT "$capture_pid"
wait "$capture_pid"
rc=$?
capture_pid=""
[ "$rc" = 0 ] && pass "$m: PostgreSQL: captured pgbench -S ($(cut -d' ' -f1 "$T/tps") tps)" ||
	fail "$m: PostgreSQL: captured pgbench -S" "exit $rc" "$(tail -n 5 "$T/pgcap.out")"
sleep 1.5	# the server's statistics, flushed (at most every second)
after=$(psql_q "select coalesce(sum(heap_blks_read + coalesce(idx_blks_read, 0)), 0) from pg_statio_user_tables")
oids=$(psql_q "select relfilenode from pg_class where relname like 'pgbench_%'" | tr '\n' ' ')
pycheck "$m: PostgreSQL: one stream per backend, each with reads; their reads of pgbench's tables are the server's own count" '
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
# pagecache names inodes from /proc: a backend gone before its records
# are read leaves its files unnamed, counted (reads among them).
m = re.search(r"^  (\d+) requests on files no traced process had open or mapped", open(sys.argv[6]).read(), re.M)
unnamed += int(m.group(1)) if m else 0
assert total <= after - before <= total + unnamed, (total, unnamed, after - before, reads)
# bpf names every descriptor at its open, even one of a backend gone
# before its events are read.
assert sys.argv[7] != "bpf" or unnamed == 0, unnamed
' "$T/pgcap" "$T/backends" "$before" "$after" "$oids" "$T/pgcap.out" "$m"
grep -q "^lost: none" "$T/pgcap.out" && pass "$m: PostgreSQL: no record lost" ||
	fail "$m: PostgreSQL: no record lost" "$(grep '^lost' "$T/pgcap.out")"
grep -q "^method: $m " "$T/pgcap.out" && grep -q "^; Traced by $m " "$T/pgcap/capture.job" &&
	pass "$m: PostgreSQL: the method named in the summary and capture.job" ||
	fail "$m: PostgreSQL: the method named in the summary and capture.job" "$(grep '^method' "$T/pgcap.out")"

# What the verdict does with it today, on a short budget.
mkdir "$T/verdict"
expect_exit 0 "$m: PostgreSQL: faultline --verdict of the capture finishes" "$FAULTLINE" --quiet --verdict \
	--budget=40s --output="$T/verdict" "$T/pgcap/capture.job"
[ -s "$T/verdict/verdict.json" ] && pass "$m: PostgreSQL: the verdict wrote verdict.json" ||
	fail "$m: PostgreSQL: the verdict wrote verdict.json" "$(tail -n 5 "$E2E_TMP/err")"
pycheck "$m: PostgreSQL: the verdict of the capture names a winner (or a tie)" '
import json, sys
def judged(o):
    if isinstance(o, dict):
        if "winner" in o and (o["winner"] or o.get("tie")):
            yield o
        for v in o.values():
            yield from judged(v)
    elif isinstance(o, list):
        for v in o:
            yield from judged(v)
assert any(judged(json.load(open(sys.argv[1])))), "no winner"
' "$T/verdict/verdict.json"
}

pg_checks pagecache
pg_checks bpf
pg_checks tracepoint
"$E2E_TESTS/pg-scratch" stop "$pgdir"
[ ! -f "$pgdir/data/postmaster.pid" ] && pass "PostgreSQL: stopped" || fail "PostgreSQL: stopped"

e2e_done
