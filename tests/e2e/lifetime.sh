#!/usr/bin/env bash
# e2e: alone (a killed run's cgroup must be removed by its own next run, not another suite's)
# tests/e2e/lifetime.sh - what a run killed or starved of disk leaves
# behind (SPEC 8, issue 11): a mem_limit run killed by SIGKILL leaves no
# process, and the next run removes its cgroup, saying so; reserve_mem
# is given back when the run is killed; on a full filesystem the CSV
# keeps only whole rows, no empty or partial summary or JSON file is
# left, and the exit status (1) names the error.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 32

# pid of the first child of @1 (the mem_limit worker process), waiting for it.
child_of() {
	local c=""
	for _ in $(seq 50); do
		c=$(pgrep -P "$1" | head -n1)
		[ -n "$c" ] && break
		sleep 0.1
	done
	echo "$c"
}

if [ "$(id -u)" = 0 ] && "$FAULTLINE" --check-system 2>/dev/null | grep -q "mem_limit (cgroup) *yes"; then
	"$FAULTLINE" --quiet --name=killed --filename="$f" --size=32m --ioengine=psync --rw=randread \
		--mem_limit=32m --runtime=30s --time_based --output=/dev/null --interval=100ms \
		--csv="$E2E_TMP/killed.csv" 2>/dev/null &
	parent=$!
	child=$(child_of $parent)
	# Until the job's cgroup is there with its worker in it (set-up takes
	# what the host gives it; the 30 s only keep a failure from hanging).
	# The cgroup is looked for once the job has a row in its CSV: before
	# the job, a short-lived process measured what a worker is charged in
	# a cgroup of the same name, which the run removes before it makes the
	# job's; a SIGKILL between the two left no cgroup to remove (seen once
	# in a fresh clone).
	cgname=""
	for _ in $(seq 300); do
		[ "$(wc -l <"$E2E_TMP/killed.csv" 2>/dev/null || echo 0)" -ge 2 ] || { sleep 0.1; continue; }
		cgname=$(ls /sys/fs/cgroup/memory*/ -R 2>/dev/null | grep -o "faultline-$parent-[0-9]*-0" | head -n1)
		cgpath=$(find /sys/fs/cgroup/memory* /sys/fs/cgroup -maxdepth 6 -type d -name "${cgname:-none}" 2>/dev/null | head -n1)
		[ -n "$cgname" ] && [ -n "$(cat "$cgpath/cgroup.procs" 2>/dev/null)" ] && break
		sleep 0.1
	done
	# The worker process is the one in the job's cgroup: the first child
	# seen may be the short-lived one that measured what a worker is
	# charged before the job was allowed to start (SPEC 5).
	cgpath=$(find /sys/fs/cgroup/memory* /sys/fs/cgroup -maxdepth 6 -type d -name "$cgname" 2>/dev/null | head -n1)
	[ -n "$cgname" ] && [ -r "$cgpath/cgroup.procs" ] && child=$(head -n1 "$cgpath/cgroup.procs")
	kill -KILL $parent
	wait $parent 2>/dev/null
	# Gone, or dead and not yet reaped by init (a zombie runs nothing and
	# holds no file). The kernel kills it with its parent; the 30 s only
	# keep a failure from hanging (an ASan build on a loaded host takes
	# seconds to exit).
	dead() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" | cut -c1)" = Z ]; }
	for _ in $(seq 300); do
		[ -n "$child" ] && dead "$child" && break
		sleep 0.1
	done
	if [ -n "$child" ] && dead "$child"; then
		pass "SIGKILL: the mem_limit worker process dies with its parent"
	else
		fail "SIGKILL: worker process" "child '$child' $(ps -o pid,ppid,stat,args -p "${child:-1}" | tail -n1)"
	fi
	if [ -n "$cgname" ]; then pass "the killed run had its cgroup $cgname"; else fail "no cgroup seen for the killed run"; fi
	# A zombie stays in its cgroup until init reaps it, and a cgroup with
	# a process in it is not removed: wait (up to 30 s) for init.
	for _ in $(seq 300); do
		[ -n "$child" ] && kill -0 "$child" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$child" ] && kill -0 "$child" 2>/dev/null &&
		echo "# the worker $child is still not reaped by init after 30 s"
	expect_exit 0 "the next run runs" "$FAULTLINE" --quiet --name=next --ioengine=null --size=1m \
		--runtime=100ms --time_based --output=/dev/null
	expect_err_has "removed the stale cgroup" "the next run says it removed the stale cgroup"
	expect_err_has "$cgname" "naming it"
	if ! ls -R /sys/fs/cgroup/memory*/ 2>/dev/null | grep -q "$cgname"; then
		pass "the stale cgroup is gone"
	else
		fail "the stale cgroup is still there"
	fi
else
	echo "skip - SIGKILL of a mem_limit run: no memory cgroup can be made here"
fi

# thread=0: worker processes die with the run killed by SIGKILL, a read
# job and a write job with flushes; with mem_limit (root) they are the
# grandchildren, forked by the job's worker process, and die with it.
descendants() { # pid -> every descendant pid
	local k
	for k in $(pgrep -P "$1"); do
		echo "$k"
		descendants "$k"
	done
}
# @1: what; the rest: options of the run. Waits for @want workers.
kill_thread0() {
	local what=$1 want=$2 p kids="" alive=""
	shift 2
	"$FAULTLINE" --quiet --name=t0 --filename="$f" --size=32m --thread=0 --numjobs=2 \
		--runtime=30s --time_based --output=/dev/null "$@" 2>/dev/null &
	p=$!
	# Until the workers are there (set-up takes what the host gives it).
	for _ in $(seq 300); do
		kids=$(descendants $p)
		[ "$(echo "$kids" | grep -c .)" -ge "$want" ] && break
		sleep 0.1
	done
	kill -KILL $p
	wait $p 2>/dev/null
	# Dead is dead: a zombie waiting for init to reap it counts as gone.
	# They die with the run; the 30 s only keep a failure from hanging.
	for _ in $(seq 300); do
		alive=""
		for k in $kids; do
			case $(ps -o stat= -p "$k" 2>/dev/null) in "" | Z*) ;; *) alive="$alive $k" ;; esac
		done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	if [ "$(echo "$kids" | grep -c .)" -ge "$want" ] && [ -z "$alive" ]; then
		pass "thread=0, $what: the $(echo $kids | wc -w) processes below the run die with it"
	else
		fail "thread=0, $what: processes after SIGKILL" "seen: $(echo $kids), alive: ${alive:-none}" \
			"$(ps -o pid,ppid,stat,args -p "$(echo $kids | tr ' ' ,)" 2>&1 | tail -n +2)"
	fi
}
kill_thread0 "psync randread" 2 --ioengine=psync --rw=randread
kill_thread0 "mmap randwrite fsync=4" 2 --ioengine=mmap --rw=randwrite --fsync=4
if [ "$(id -u)" = 0 ] && "$FAULTLINE" --check-system 2>/dev/null | grep -q "mem_limit (cgroup) *yes"; then
	kill_thread0 "io_uring randread under mem_limit" 3 --ioengine=io_uring --iodepth=4 \
		--rw=randread --mem_limit=32m
else
	echo "skip - thread=0 under mem_limit after SIGKILL: no memory cgroup can be made here"
fi

# reserve_mem is locked memory; the kernel gives it back when the
# process dies, whatever killed it.
mlocked() { awk '/^Mlocked:/ {print $2}' /proc/meminfo; }
if [ "$(id -u)" = 0 ]; then
	before=$(mlocked)
	# Killed below; its runtime outlasts the 60 s populating may take.
	"$FAULTLINE" --quiet --name=held --ioengine=null --size=1m --reserve_mem=256m \
		--runtime=300s --time_based --output=/dev/null 2>/dev/null &
	p=$!
	held=0
	# Populating 256 MiB takes what the host gives it; 60 s is a guard.
	for _ in $(seq 600); do
		held=$(( $(mlocked) - before ))
		[ $held -ge 200000 ] && break
		sleep 0.1
	done
	kill -KILL $p
	wait $p 2>/dev/null
	# Given back as the process dies (30 s: a guard).
	for _ in $(seq 300); do
		after=$(( $(mlocked) - before ))
		[ $after -lt 50000 ] && break
		sleep 0.1
	done
	if [ $held -ge 200000 ] && [ $after -lt 50000 ]; then
		pass "reserve_mem: $((held / 1024)) MiB locked while running, $((after / 1024)) MiB after SIGKILL"
	else
		fail "reserve_mem after SIGKILL" "locked while running: $held KiB, after: $after KiB"
	fi
else
	echo "skip - reserve_mem: needs root to lock memory"
fi

# A 4 KiB filesystem: the outputs cannot be written.
if [ "$(id -u)" = 0 ]; then
	tiny=$E2E_TMP/tiny
	mkdir -p "$tiny"
	if mount -t tmpfs -o size=4k tmpfs "$tiny" 2>/dev/null; then
		expect_exit 1 "full filesystem: --csv and --output exit 1" "$FAULTLINE" --quiet --name=t \
			--ioengine=null --size=16m --runtime=4s --time_based --interval=100ms \
			--csv="$tiny/x.csv" --output="$tiny/x.out"
		expect_err_has "No space left on device" "the error names ENOSPC"
		expect_err_has "x.csv is incomplete" "and says the CSV is incomplete"
		pycheck "the CSV holds only whole rows" '
import sys
d = open(sys.argv[1], "rb").read()
assert d and d.endswith(b"\n"), "partial last row"
lines = d.decode().splitlines()
n = lines[0].count(",")
assert all(l.count(",") == n for l in lines), "a row with another field count"
assert len(lines) > 2, "no rows at all"
' "$tiny/x.csv"
		if [ ! -e "$tiny/x.out" ] && [ -z "$(ls -A "$tiny" | grep -v '^x.csv$')" ]; then
			pass "no summary file and no temporary file left"
		else
			fail "files left" "$(ls -la "$tiny")"
		fi
		rm -f "$tiny"/*
		head -c 3500 /dev/zero >"$tiny/fill"
		expect_exit 1 "full filesystem: JSON output exits 1" "$FAULTLINE" --quiet --name=t \
			--ioengine=null --size=16m --runtime=1s --time_based --output-format=json \
			--output="$tiny/x.json"
		expect_err_has "No space left on device" "the error names ENOSPC"
		if [ "$(ls -A "$tiny")" = fill ]; then
			pass "no JSON file, empty or partial, and no temporary file left"
		else
			fail "JSON files left" "$(ls -la "$tiny")"
		fi
		umount "$tiny"
	else
		echo "skip - full filesystem: cannot mount a tmpfs here"
	fi
else
	echo "skip - full filesystem: mounting a 4 KiB tmpfs needs root"
fi

# A summary to a closed pipe: exit 1, said, nothing left behind.
"$FAULTLINE" --name=p --ioengine=null --size=1m --runtime=200ms --time_based 2>"$E2E_TMP/err" | true
rc=${PIPESTATUS[0]}
if [ "$rc" = 1 ] && grep -q "standard output" "$E2E_TMP/err"; then
	pass "a closed stdout: exit 1 naming it"
else
	fail "closed stdout" "exit $rc" "$(head -c 300 "$E2E_TMP/err")"
fi

e2e_done
