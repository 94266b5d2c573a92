#!/usr/bin/env bash
# A run that does not stop by itself still ends. A buffer pool asked to
# hold one read longer than it is refuses the job or serves the read,
# never waits for ever; and a job whose workers do not stop after
# SIGTERM is given up after the grace period: named as stuck, its worker
# processes killed, the outputs whole, exit 1.
. "$(dirname "$0")/lib.sh"

data=$E2E_TMP/data
mkdata "$data" 1

# One 128 KiB read, twice the pool of 64 KiB (32 pages of 4 KiB).
log=$E2E_TMP/span.log
printf 'fio version 2 iolog\n%s add\n%s open\n%s read 0 131072\n%s close\n' \
	"$data" "$data" "$data" "$data" >"$log"

# vmcache latches a read's pages at once: refused up front, naming the
# log's line and pool_size (before: a livelock that SIGTERM did not end).
expect_exit 2 "vmcache: a read longer than pool_size is refused" \
	timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
	--pool_size=64k
expect_err_has "span.log:4 reads 32 pages" "vmcache: names the log's line and the read's pages"
expect_err_has "pool_size=65536 holds 16" "vmcache: names pool_size"
# Each of numjobs threads may hold such a read at once.
expect_exit 2 "vmcache: numjobs=2 needs room for two such reads" \
	timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
	--pool_size=132k --numjobs=2
expect_err_has "numjobs=2 threads each holding such a read" "vmcache: the refusal names numjobs"
for nj in 1 2; do
	expect_exit 0 "vmcache: numjobs=$nj with room for its reads: served" \
		timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
		--pool_size=$((nj * 132))k --numjobs=$nj --output-format=json --output="$E2E_TMP/vm$nj.json"
done
pycheck "vmcache: every replayed read served whole" '
import json, sys
for n, path in ((1, sys.argv[1]), (2, sys.argv[2])):
    j = json.load(open(path))["jobs"][0]
    assert j["error"] == 0 and j["read"]["io_bytes"] == 131072 * n, (n, j["read"]["io_bytes"])
' "$E2E_TMP/vm1.json" "$E2E_TMP/vm2.json"

# bufpool copies a long read out page by page, one pin at a time: served
# with any pool of two pages a thread.
for nj in 1 2; do
	expect_exit 0 "bufpool: numjobs=$nj, a read twice pool_size: served" \
		timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=bufpool \
		--pool_size=64k --numjobs=$nj --output-format=json --output="$E2E_TMP/bp$nj.json"
done
pycheck "bufpool: every replayed read served whole" '
import json, sys
for n, path in ((1, sys.argv[1]), (2, sys.argv[2])):
    j = json.load(open(path))["jobs"][0]
    assert j["error"] == 0 and j["read"]["io_bytes"] == 131072 * n, (n, j["read"]["io_bytes"])
' "$E2E_TMP/bp1.json" "$E2E_TMP/bp2.json"

# A thread=0 job whose worker process is stopped (SIGSTOP) beside one
# that stops: SIGTERM ends the run after the grace period (10 s by
# default), exit 1, the stuck job named with what it was doing, its
# worker processes killed and reaped, the other job's figures whole.
cat >"$E2E_TMP/stop.job" <<JOB
[global]
filename=$data
rw=randread
time_based
runtime=120s
invalidate=0
[frozen]
ioengine=psync
thread=0
numjobs=2
[bystander]
ioengine=psync
JOB
"$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/stop.json" --csv="$E2E_TMP/stop.csv" \
	"$E2E_TMP/stop.job" 2>"$E2E_TMP/stop.err" &
fl=$!
workers=
for _ in $(seq 600); do
	workers=$(pgrep -P $fl | tr '\n' ' ')
	[ "$(echo $workers | wc -w)" = 2 ] && break
	sleep 0.05
done
# The worker to stop is in its loop once the job has a row with I/O in
# its CSV and the worker's own read calls still go up: then it has a last
# request to name. (Not a fixed wait: on a loaded host a worker process
# may not have read at all in half a second.)
reading() { # worker pid
	local a b
	for _ in $(seq 600); do
		if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$c["job"] == "frozen" && $c["iops"] > 0 { f = 1 } END { exit !f }' \
			"$E2E_TMP/stop.csv" 2>/dev/null; then
			a=$(awk '/^syscr/ { print $2 }' "/proc/$1/io" 2>/dev/null)
			sleep 0.05
			b=$(awk '/^syscr/ { print $2 }' "/proc/$1/io" 2>/dev/null)
			[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] && return 0
		else
			sleep 0.05
		fi
	done
	return 1
}
if [ "$(echo $workers | wc -w)" = 2 ]; then
	reading ${workers%% *} || echo "# worker ${workers%% *} not seen reading in 30 s"
	kill -STOP ${workers%% *}
	t0=$(date +%s%N)
	kill -TERM $fl
	# 30 s: what a timeout(1) user may wait; the schedule is 10 s + 2 s.
	( sleep 60; kill -KILL $fl 2>/dev/null ) &
	guard=$!
	wait $fl
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill $guard 2>/dev/null
	[ $rc = 1 ] && pass "SIGSTOP'd worker: exit 1" || fail "SIGSTOP'd worker: exit 1" "exit $rc"
	[ $ms -lt 30000 ] && pass "SIGSTOP'd worker: ended within 30 s of SIGTERM (${ms} ms)" ||
		fail "SIGSTOP'd worker: ended within 30 s of SIGTERM" "${ms} ms"
	left=$(ps -o pid= -p "${workers// /,}" 2>/dev/null | tr -d ' \n')
	[ -z "$left" ] && pass "SIGSTOP'd worker: no worker process left" ||
		fail "SIGSTOP'd worker: no worker process left" "$(ps -o pid,stat,cmd -p "${workers// /,}")"
	expect_stuck_msg() { grep -qF -- "$1" "$E2E_TMP/stop.err" && pass "$2" || fail "$2" "$(cat "$E2E_TMP/stop.err")"; }
	expect_stuck_msg "job 'frozen' given up (its worker processes killed): stuck: not stopped 10.0 s" \
		"SIGSTOP'd worker: the job named as stuck"
	expect_stuck_msg "(process ${workers%% *}): ioengine=psync, last request: read of 4096 bytes at offset" \
		"SIGSTOP'd worker: the worker, its engine and its last request named"
	pycheck "SIGSTOP'd worker: JSON whole: the stuck job so marked, the other's figures sound" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["faultline"]["interrupted"] is True
j = {x["jobname"]: x for x in d["jobs"]}
f, b = j["frozen"], j["bystander"]
assert f["faultline"]["stuck"] is True and f["error"] != 0, f["faultline"]
assert sys.argv[2] in f["faultline"]["errmsg"], f["faultline"]["errmsg"]
assert b["faultline"]["stuck"] is False and b["error"] == 0, b["faultline"]
assert b["read"]["total_ios"] > 0 and f["read"]["total_ios"] > 0
' "$E2E_TMP/stop.json" "$data"
else
	fail "SIGSTOP'd worker: two worker processes started" "found: $workers"
	kill -KILL $fl 2>/dev/null
	wait $fl
fi

# A worker thread that does not return (a pread that never does, made
# so by an LD_PRELOAD shim on the data file alone): threads cannot be
# killed, so the job is given up and its thread left to end with the
# process, after --stop-grace.
if command -v cc >/dev/null; then
	cat >"$E2E_TMP/hang.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* pread on HANG_PATH never returns once HANG_AFTER calls have. */
static long calls;

static int hangs(int fd)
{
	const char *path = getenv("HANG_PATH"), *after = getenv("HANG_AFTER");
	char link[64], got[4096];
	ssize_t n;

	if (!path || !after)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, got, sizeof(got) - 1);
	if (n <= 0)
		return 0;
	got[n] = '\0';
	return !strcmp(got, path) && __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) > atol(after);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	ssize_t (*real)(int, void *, size_t, off_t) = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");

	if (hangs(fd)) {
		/* Says so (HANG_MARK), for the test to signal a hung run,
		 * not one that may not have got there yet. */
		const char *mark = getenv("HANG_MARK");
		FILE *f = mark ? fopen(mark, "w") : NULL;

		if (f)
			fclose(f);
		for (;;)
			pause();
	}
	return real(fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}
C
	if cc -shared -fPIC -o "$E2E_TMP/hang.so" "$E2E_TMP/hang.c" -ldl 2>"$E2E_TMP/cc.err"; then
		real=$(readlink -f "$data")
		HANG_PATH=$real HANG_AFTER=200 HANG_MARK=$E2E_TMP/hung.mark LD_PRELOAD=$E2E_TMP/hang.so \
			"$FAULTLINE" --quiet --stop-grace=2s \
			--name=hung --filename="$data" --ioengine=psync --rw=randread --invalidate=0 \
			--time_based --runtime=120s --output-format=json --output="$E2E_TMP/hung.json" \
			--csv="$E2E_TMP/hung.csv" 2>"$E2E_TMP/hung.err" &
		fl=$!
		# The CSV's header (the run handles signals from then on) and
		# the hung read (on a loaded host it may come late): 60 s, a guard.
		for _ in $(seq 600); do
			[ -s "$E2E_TMP/hung.csv" ] && [ -e "$E2E_TMP/hung.mark" ] && break
			sleep 0.1
		done
		kill -TERM $fl
		( sleep 60; kill -KILL $fl 2>/dev/null ) &
		guard=$!
		wait $fl
		rc=$?
		kill $guard 2>/dev/null
		[ $rc = 1 ] && pass "hung thread: exit 1" || fail "hung thread: exit 1" "exit $rc: $(cat "$E2E_TMP/hung.err")"
		grep -qF "job 'hung' given up (its threads left to end with faultline): stuck: not stopped 2.0 s" \
			"$E2E_TMP/hung.err" && grep -qF "last request: read of 4096 bytes at offset" "$E2E_TMP/hung.err" &&
			pass "hung thread: named as stuck, with its last request" ||
			fail "hung thread: named as stuck, with its last request" "$(cat "$E2E_TMP/hung.err")"
		pycheck "hung thread: JSON whole, the job marked stuck" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["faultline"]["stuck"] is True and j["read"]["total_ios"] >= 200, j["faultline"]
' "$E2E_TMP/hung.json"
	else
		fail "hung thread: the LD_PRELOAD shim builds" "$(cat "$E2E_TMP/cc.err")"
	fi
fi

e2e_done
