#!/usr/bin/env bash
# e2e: alone (kernel.task_delayacct is the host's: another run may turn it on)
# Where the time went (--delayacct, delayacct=1), end to end: an mmap
# random reader in a small memory cgroup (2 threads, a 64 MiB file,
# mem_limit=32m: the issue's 512 MiB and 64m scaled down to what a
# device's read-ahead window leaves room for) has the time_*_pct
# columns, every measured row's shares add to 100 and never more, the
# waits hold most of its threads' time, and kernel.task_delayacct reads
# the same before and after: on a normal end, after SIGTERM and after a
# second Ctrl-C. A job that does not ask has empty cells, thread=0
# workers (processes) are read like threads. As nobody: one warning and
# empty cells, never a 0.
. "$(dirname "$0")/lib.sh"

sysctl_now() { cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo absent; }
before=$(sysctl_now)
f=$E2E_TMP/data
mkdata "$f" 64
cols="time_cpu_pct time_runq_pct time_blkio_pct time_reclaim_pct time_thrash_pct time_compact_pct time_swapin_pct time_other_pct"

# Rows of job $2 in CSV $1 with every time_* cell filled, and the largest
# sum of their shares; fails unless there are at least $3.
time_rows='
import csv, sys
cols = sys.argv[4].split()
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["job"] == sys.argv[2]]
assert rows, "no rows of job %s" % sys.argv[2]
assert all(c in rows[0] for c in cols), "columns missing: %s" % [c for c in cols if c not in rows[0]]
full = [r for r in rows if all(r[c] != "" for c in cols)]
part = [r for r in rows if any(r[c] != "" for c in cols) and r not in full]
assert not part, "rows with some cells empty: %s" % part[:2]
assert len(full) >= int(sys.argv[3]), "%d rows with cells, wanted %s" % (len(full), sys.argv[3])
for r in full:
    s = sum(float(r[c]) for c in cols)
    assert abs(s - 100.0) < 0.05, "row at t_s %s: shares add to %.2f" % (r["t_s"], s)
    assert all(0 <= float(r[c]) <= 100 for c in cols), r
'

if [ "$(id -u)" != 0 ]; then
	# As nobody the kernel's switch cannot be turned on and taskstats
	# does not answer: said once, cells empty.
	expect_exit 0 "as nobody: --delayacct runs" "$FAULTLINE" --quiet --delayacct --name=m --filename="$f" \
		--ioengine=psync --rw=randread --bs=4k --size=8m --runtime=2 --time_based \
		--csv="$E2E_TMP/nobody.csv" --output-format=json --output="$E2E_TMP/nobody.json"
	n=$(grep -c "delay accounting" "$E2E_TMP/err")
	[ "$n" = 1 ] && pass "as nobody: one warning says why" || fail "as nobody: one warning says why" "$n warnings" "$(cat "$E2E_TMP/err")"
	pycheck "as nobody: the time_* cells are empty, the JSON's shares null with why" "
import csv, json, sys
rows = list(csv.DictReader(open('$E2E_TMP/nobody.csv')))
assert rows and all(r[c] == '' for r in rows for c in '$cols'.split()), rows[:1]
t = json.load(open('$E2E_TMP/nobody.json'))['jobs'][0]['faultline']['time']
assert t['cpu_pct'] is None and t['blkio_ns'] is None and t['why'], t
"
	[ "$(sysctl_now)" = "$before" ] && pass "as nobody: kernel.task_delayacct untouched ($before)" ||
		fail "as nobody: kernel.task_delayacct untouched" "before $before, after $(sysctl_now)"
	e2e_done
	exit
fi

# The issue's check, scaled down: the waits hold most of the time.
expect_exit 0 "mmap random reader, 2 threads, mem_limit=32m, --delayacct" \
	"$FAULTLINE" --quiet --delayacct --name=mmap --filename="$f" --ioengine=mmap --rw=randread --bs=4k \
	--numjobs=2 --mem_limit=32m --runtime=4 --time_based --interval=500ms \
	--csv="$E2E_TMP/mmap.csv" --output-format=json --output="$E2E_TMP/mmap.json"
pycheck "every measured row has the time_* shares, adding to 100" "$time_rows" "$E2E_TMP/mmap.csv" mmap 4 "$cols"
pycheck "the JSON: shares adding to 100, the kernel's nanoseconds, waits holding most of the time" "
import json
d = json.load(open('$E2E_TMP/mmap.json'))
t = d['jobs'][0]['faultline']['time']
parts = ['cpu', 'runq', 'blkio', 'reclaim', 'thrash', 'compact', 'swapin', 'other']
assert abs(sum(t[p + '_pct'] for p in parts) - 100) < 0.05, t
assert t['threads'] == 2 and t['read_every'] == 1 and t['why'] is None, t
runtime = d['jobs'][0]['faultline']['runtime_ns']
assert 0.5 * 2 * runtime <= t['window_ns'] <= 2 * runtime * 1.01, (t['window_ns'], runtime)
waits = sum(t[p + '_pct'] for p in ['runq', 'blkio', 'reclaim', 'thrash', 'compact', 'swapin'])
assert waits > 50, 'waits %.1f %% of the threads time: %s' % (waits, t)
assert t['blkio_ns'] > 0 or t['reclaim_ns'] > 0 or t['thrash_ns'] > 0, t
"
[ "$(sysctl_now)" = "$before" ] && pass "kernel.task_delayacct reads $before after the run, as before" ||
	fail "kernel.task_delayacct restored after the run" "before $before, after $(sysctl_now)"

# A job that does not ask has empty cells; delayacct=1 as a job option;
# thread=0 workers are processes, read the same way.
cat >"$E2E_TMP/two.job" <<EOF
[global]
filename=$f
rw=randread
bs=4k
runtime=2
time_based
[plain]
ioengine=psync
[procs]
ioengine=mmap
thread=0
numjobs=2
mem_limit=40m
delayacct=1
EOF
expect_exit 0 "a job file: one job asks (delayacct=1, thread=0), one does not" \
	"$FAULTLINE" --quiet --interval=500ms --csv="$E2E_TMP/two.csv" --output-format=normal,json \
	--output="$E2E_TMP/two.out" "$E2E_TMP/two.job"
n=$(grep -c "where the time went" "$E2E_TMP/two.out")
grep -q "where the time went (2 threads x .*waiting for the device" "$E2E_TMP/two.out" && [ "$n" = 1 ] &&
	pass "the summary says where the time went, for the job that asks only" ||
	fail "the summary says where the time went, for the job that asks only" "$(grep "time went" "$E2E_TMP/two.out")"
pycheck "processes (thread=0): every row has the shares" "$time_rows" "$E2E_TMP/two.csv" procs 2 "$cols"
pycheck "the job that does not ask: empty cells, time null" "
import csv, json
rows = [r for r in csv.DictReader(open('$E2E_TMP/two.csv')) if r['job'] == 'plain']
assert rows and all(r[c] == '' for r in rows for c in '$cols'.split())
text = open('$E2E_TMP/two.out').read()
doc = json.loads(text[text.index('\n{') + 1:])
assert doc['jobs'][0]['faultline']['time'] is None
"
[ "$(sysctl_now)" = "$before" ] && pass "kernel.task_delayacct restored after the job file's run" ||
	fail "kernel.task_delayacct restored after the job file's run" "before $before, after $(sysctl_now)"

# Short jobs whose threads wait on the device: the kernel sometimes
# counts a thread's first block-I/O wait from boot (Linux 6.18), and
# such a row is dropped. A 1 s job has one full row and a last one of a
# millisecond or so; with the full row dropped, the job's shares were
# once given over that last moment alone (100 % other, no CPU). Whatever
# the kernel does, the JSON's breakdown is either null with a why or
# over most of the threads' time, where an O_DIRECT reader is on the CPU
# or waiting for the device, not elsewhere.
for i in 1 2 3 4; do
	expect_exit 0 "short O_DIRECT scan $i runs" "$FAULTLINE" --quiet --delayacct --name=scan \
		--filename="$f" --ioengine=io_uring --direct=1 --rw=read --bs=128k --numjobs=2 \
		--runtime=1 --time_based --output-format=json --output="$E2E_TMP/short$i.json"
	pycheck "short O_DIRECT scan $i: the breakdown covers most of its threads' time, or is null with why" "
import json
j = json.load(open('$E2E_TMP/short$i.json'))['jobs'][0]
t = j['faultline']['time']
if t['cpu_pct'] is None:
    assert t['why'], t
else:
    life = t['threads'] * j['faultline']['runtime_ns'] / t['read_every']
    assert t['window_ns'] >= 0.5 * life, ('window', t['window_ns'], 'of', life, t)
    assert t['other_pct'] < 50, t
"
done

# SIGTERM, and a second Ctrl-C, which exits at once: restored both times.
# On while the run holds it, so the check after is not vacuous.
for how in TERM INTINT; do
	"$FAULTLINE" --quiet --delayacct --name=long --filename="$f" --ioengine=psync --rw=randread \
		--bs=4k --runtime=60 --time_based --output=/dev/null 2>"$E2E_TMP/sig.err" &
	pid=$!
	during=absent
	for _ in $(seq 100); do
		sleep 0.1
		during=$(sysctl_now)
		[ "$during" = 1 ] && break
	done
	sleep 0.5
	if [ "$how" = TERM ]; then
		kill -TERM "$pid"
	else
		kill -INT "$pid"
		sleep 0.5
		kill -INT "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	[ "$during" = 1 ] && [ "$(sysctl_now)" = "$before" ] && [ "$rc" = 1 ] &&
		pass "$how: on (1) during the run, $before again after it (exit 1)" ||
		fail "$how: on during the run, restored after it" \
			"during $during, after $(sysctl_now), before $before, exit $rc" "$(head -c 400 "$E2E_TMP/sig.err")"
done

e2e_done
