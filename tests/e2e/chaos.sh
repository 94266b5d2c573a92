#!/usr/bin/env bash
# e2e: alone (finds its runs' processes and the cgroups they leave, which any other run's start may remove)
# tests/e2e/chaos.sh - runs ended at random moments leave nothing behind
# (SPEC 8, issue 11).
#
# CHAOS_RUNS runs (default 24; 12 under a sanitizer or as an unprivileged
# user, whose passes repeat the same paths more slowly), two at a time,
# of mixed engines and patterns, some under mem_limit (as root), some
# with worker processes (thread=0, reading or writing), all with
# a CSV and a JSON file, each ended after a random delay by SIGINT,
# SIGTERM or SIGKILL. Afterwards: no faultline process of ours is left,
# the next run's start removes every cgroup the killed runs left, every
# CSV has only whole rows, and every JSON file that exists parses.
#
# Memory limits (SPEC 5): a mem_limit run gets either 8 MiB, at or
# below the read-ahead window of this host's disk alone, which must be
# refused before it starts (exit 2, naming read_ahead_kb), or the
# smallest limit that faultline itself names as working for that job,
# under which no run may be killed by the OOM killer.
#
# The choices come from CHAOS_SEED (printed), so a failure can be
# replayed: CHAOS_SEED=N bash tests/e2e/chaos.sh
. "$(dirname "$0")/lib.sh"

seed=${CHAOS_SEED:-$(( $(date +%s%N) % 2147483647 ))}
runs=${CHAOS_RUNS:-24}
if [ -z "${CHAOS_RUNS:-}" ] && { [ -n "${ASAN_OPTIONS:-}" ] || [ "$(id -u)" != 0 ]; }; then
	runs=12
fi
echo "chaos: seed $seed, $runs runs (replay: CHAOS_SEED=$seed bash $0)"
RANDOM=$seed

limit_ok=0
if [ "$(id -u)" = 0 ] && "$FAULTLINE" --check-system 2>/dev/null | grep -q "mem_limit (cgroup) *yes"; then
	limit_ok=1
fi
cgdir=""
if [ $limit_ok = 1 ]; then
	cgdir=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
	[ -d "$cgdir" ] || cgdir=/sys/fs/cgroup$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup)
fi

mkdata "$E2E_TMP/a" 16
mkdata "$E2E_TMP/b" 16
engines=(psync mmap io_uring libaio null)
signals=(INT TERM KILL)
pids=()

# One run: its options from the seeded choices; started in the
# background, its pid recorded.
start_run() { # index
	local i=$1 eng=${engines[RANDOM % 5]} rw=randread extra=() limit=8m
	[ $((RANDOM % 3)) = 0 ] && rw=read
	[ $((RANDOM % 2)) = 0 ] && extra+=(--interval=100ms)
	case $eng in io_uring | libaio) extra+=(--iodepth=$((1 << (RANDOM % 5)))) ;; esac
	[ $((RANDOM % 4)) = 0 ] && extra+=(--numjobs=2)
	# Worker processes (thread=0) on a third of the runs, writing on
	# some: they too must go with the run, however it ends. Their
	# mem_limit holds the whole 16 MiB file: two processes mapping pages
	# of a smaller one get OOM-killed by themselves (faultline(1), thread),
	# which is a job failure (exit 1), not a run ended by the signal.
	if [ $((RANDOM % 3)) = 0 ]; then
		extra+=(--thread=0 --numjobs=2)
		[ $((RANDOM % 2)) = 0 ] && rw=randwrite && extra+=(--fsync=4)
	fi
	local target="$E2E_TMP/$([ $((RANDOM % 2)) = 0 ] && echo a || echo b)"
	if [ $limit_ok = 1 ] && [ $eng != null ] && [ $((RANDOM % 3)) = 0 ]; then
		# Half of them at the smallest limit that works, as the
		# refusal of a limit of 1 MiB names it.
		if [ $((RANDOM % 2)) = 0 ]; then
			limit=$("$FAULTLINE" --quiet --name=probe --filename="$target" --size=16m \
				--ioengine="$eng" --rw="$rw" "${extra[@]}" --mem_limit=1m --output=/dev/null 2>&1 |
				grep -o 'mem_limit=[0-9]*m$' | cut -d= -f2)
			limit=${limit:-1m}
		fi
		extra+=(--mem_limit=$limit)
	fi
	"$FAULTLINE" --quiet --name="c$i" --filename="$target" \
		--size=16m --ioengine="$eng" --rw="$rw" --runtime=3s --time_based "${extra[@]}" \
		--csv="$E2E_TMP/run$i.csv" --output-format=json --output="$E2E_TMP/run$i.json" \
		>/dev/null 2>"$E2E_TMP/run$i.err" &
	echo "$! ${eng} ${rw} ${extra[*]}" >"$E2E_TMP/run$i.what"
	pids+=("$!")
}

t0=$(date +%s)
bad_rc=""
# The loop's own stderr goes nowhere: bash reports each background run
# killed by a signal ("line 81: 14809 Killed ..."), which here is the
# test working, not news; each run's own stderr is in its .err file.
exec 3>&2 2>/dev/null
for ((i = 0; i < runs; i += 2)); do
	start_run "$i"
	p1=$!
	p2=""
	if [ $((i + 1)) -lt "$runs" ]; then start_run $((i + 1)); p2=$!; fi
	for p in $p1 $p2; do
		# Between 50 ms and 3 s: before set-up ends, mid-run, or at the end.
		sleep "$(awk -v r=$((RANDOM % 60)) 'BEGIN {printf "%.2f", 0.05 + r * 0.05}')"
		sig=${signals[RANDOM % 3]}
		kill -s "$sig" "$p" 2>/dev/null
		echo "$sig" >>"$E2E_TMP/sig.$p"
	done
	for p in $p1 $p2; do
		wait "$p" 2>/dev/null
		rc=$?
		sig=$(tail -n1 "$E2E_TMP/sig.$p")
		# KILL: 137. INT/TERM: 1 (stopped, outputs completed) or 0 (it
		# had ended before the signal came). 2: a mem_limit of 8 MiB
		# refused before the signal came, naming the read-ahead window.
		err=$(grep -l "^$p " "$E2E_TMP"/run*.what | head -n1)
		err=${err%.what}.err
		case "$sig:$rc" in KILL:137 | INT:1 | INT:0 | TERM:1 | TERM:0 | KILL:0) ;;
		*:2) grep -q -- "--mem_limit=8m" "${err%.err}.what" && grep -q "read_ahead_kb=" "$err" ||
			bad_rc="$bad_rc $p:$sig:$rc" ;;
		*) bad_rc="$bad_rc $p:$sig:$rc" ;; esac
	done
done
exec 2>&3 3>&-
echo "chaos: $runs runs in $(( $(date +%s) - t0 )) s, $(cat "$E2E_TMP"/run*.what | grep -c -- --thread=0) with thread=0, $(cat "$E2E_TMP"/run*.what | grep -c -- --mem_limit) with mem_limit"
if [ -z "$bad_rc" ]; then
	pass "every run exited as its signal says (137, or 1 with outputs)"
else
	# Each bad run: pid:signal:status, what it ran, what it said.
	why=""
	for b in $bad_rc; do
		w=$(grep -l "^${b%%:*} " "$E2E_TMP"/run*.what | head -n1)
		why="$why
$b: $(cat "$w") | $(head -c 300 "${w%.what}.err" | tr '\n' ' ')"
	done
	fail "exit statuses" "$why"
fi

# Under mem_limit no run was killed by its own limit: an 8 MiB one was
# refused, the smallest working one held.
killed=$(grep -l "killed by the OOM killer\|killed by signal" "$E2E_TMP"/run*.err 2>/dev/null || true)
refused=$(grep -l "read_ahead_kb=" "$E2E_TMP"/run*.err 2>/dev/null | wc -l)
if [ -z "$killed" ]; then
	pass "no worker killed by its memory limit ($refused runs refused before starting, naming the read-ahead window)"
else
	fail "a worker was killed under mem_limit" "$(for k in $killed; do echo "$(cat "${k%.err}.what") | $(head -c 300 "$k")"; done)"
fi

# Every run has been waited for; what is below them dies with them (the
# 30 s only keep a failure from hanging the suite). A process is left
# while pgrep finds it by its command line, or while it is still in one
# of the runs' cgroups: one that is exiting has no command line any
# more, but holds its cgroup until it is gone (the next run's start
# then finds the group busy, and rightly leaves it).
in_cgroups() {
	[ -n "$cgdir" ] || return 0
	for p in "${pids[@]}"; do
		for d in "$cgdir"/faultline-"$p"-*; do
			[ -e "$d/cgroup.procs" ] && sed "s|\$| (in ${d##*/})|" "$d/cgroup.procs"
		done
	done
}
for _ in $(seq 300); do
	left=$(pgrep -f -- "$E2E_TMP" || true)
	incg=$(in_cgroups)
	[ -z "$left" ] && [ -z "$incg" ] && break
	sleep 0.1
done
if [ -z "$left" ] && [ -z "$incg" ]; then
	pass "no faultline process left after the last kill"
else
	fail "processes left" "$([ -n "$left" ] && ps -o pid,ppid,args -p "$(echo $left | tr ' ' ',')" 2>&1)" "$incg"
fi

# The next run's start reaps what the killed runs left.
"$FAULTLINE" --quiet --name=next --ioengine=null --size=1m --runtime=100ms --time_based \
	--output=/dev/null 2>"$E2E_TMP/next.err"
if [ -n "$cgdir" ]; then
	stale=""
	for p in "${pids[@]}"; do
		for d in "$cgdir"/faultline-"$p"-*; do [ -e "$d" ] && stale="$stale $d"; done
	done
	if [ -z "$stale" ]; then
		pass "no cgroup of the killed runs left after the next run's start ($(cat "$E2E_TMP"/run*.err "$E2E_TMP/next.err" | grep -c 'removed the stale cgroup') reaped by later runs)"
	else
		fail "cgroups left" "$stale" "the next run said: $(grep -h cgroup "$E2E_TMP/next.err" | head -n 5)"
	fi
else
	echo "skip - cgroups: no memory cgroup can be made here (not root, or no controller)"
fi

pycheck "every CSV has whole rows only, every JSON that exists parses" '
import glob, json, os, sys
bad = []
for f in sorted(glob.glob(sys.argv[1] + "/run*.csv")):
    data = open(f, "rb").read()
    if not data:
        continue                      # killed before its header
    if not data.endswith(b"\n"):
        bad.append("%s: ends in a partial row" % f)
        continue
    lines = data.decode().splitlines()
    n = lines[0].count(",")
    for k, l in enumerate(lines[1:], 2):
        if l.count(",") != n:
            bad.append("%s:%d: %d fields, header has %d" % (f, k, l.count(",") + 1, n + 1))
for f in sorted(glob.glob(sys.argv[1] + "/run*.json")):
    try:
        json.load(open(f))
    except Exception as e:
        bad.append("%s: %s (%d bytes)" % (f, e, os.path.getsize(f)))
if bad:
    sys.exit("\n".join(bad[:10]))
' "$E2E_TMP"

e2e_done
