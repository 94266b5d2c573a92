#!/bin/bash
# tests/e2e/mpi-hosts.sh - many hosts as many hosts: three network
# namespaces made here, each with its own host name (its own UTS
# namespace) and an address on a veth to a bridge in a fourth, and one
# rank of an Open MPI launch in each, started over TCP by an rsh agent
# that enters the namespace, talking TCP only (no shared memory). The
# merged CSV and JSON name each host, the all rows are the sums of the
# hosts' rows, and a host whose link is cut mid-run is named as lost
# while the run ends with what the others have (mpi/ranks.h).
#
# Traffic stays between the namespaces this suite made (192.0.2.0/29,
# TEST-NET-1, on a bridge no other interface is on); their names carry
# this shell's pid and a random number, so mpi.sh, or this suite of
# another clone, can run beside it. Everything is removed on every way
# out.
. "$(dirname "$0")/lib.sh"

for t in ip unshare mpirun; do
	if ! command -v $t >/dev/null; then
		echo "mpi-hosts.sh: skipped: no $t (iproute2, util-linux, openmpi-bin)"
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "mpi-hosts.sh: skipped: making network namespaces needs root"
	exit 0
fi

# Under a sanitizer, as in mpi.sh: Open MPI 4.1's leaks at MPI_Finalize
# are suppressed (tests/lsan-mpi.supp), nothing else. The rsh agent is a
# child of mpirun, so the ranks on every host inherit the settings.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/.." && pwd)/lsan-mpi.supp:print_suppressions=0"
fi

# What a run of this suite killed by SIGKILL left (its shell is gone):
# namespaces named fl<pid>x<n>h0..h2 and fl<pid>x<n>hub, whatever still
# runs in them, then the namespaces.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^fl[0-9]+x[0-9]+(h[0-2]|hub)$'); do
	owner=${ns#fl}
	owner=${owner%%x*}
	kill -0 "$owner" 2>/dev/null && continue
	p=$(ip netns pids "$ns" 2>/dev/null)
	[ -n "$p" ] && kill -9 $p 2>/dev/null
	ip netns del "$ns" 2>/dev/null
done

tag=fl$$x$RANDOM
hub=${tag}hub
H=("${tag}h0" "${tag}h1" "${tag}h2")
mpids=()

# Kill what this suite started (mpirun, and whatever still runs in its
# namespaces: orted, ranks), delete the namespaces (their veths and the
# bridge go with them), remove the scratch files.
cleanup() {
	[ "$BASHPID" = "$E2E_MAIN" ] || return
	local p ns
	for p in "${mpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for ns in "${H[@]}" "$hub"; do
		p=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$p" ] && kill -9 $p 2>/dev/null
	done
	for ns in "${H[@]}" "$hub"; do
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$E2E_TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

setup() {
	local i
	ip netns add "$hub" && ip -n "$hub" link add br0 type bridge && ip -n "$hub" link set br0 up || return 1
	for i in 0 1 2; do
		ip netns add "${H[i]}" || return 1
		ip -n "${H[i]}" link set lo up &&
			ip link add name flv netns "${H[i]}" type veth peer name p$i netns "$hub" &&
			ip -n "$hub" link set p$i master br0 up &&
			ip -n "${H[i]}" addr add 192.0.2.$((i + 1))/29 dev flv &&
			ip -n "${H[i]}" link set flv up || return 1
		# A host cut off is given up on by TCP after about 13 s
		# instead of Linux's 15 min (only in these namespaces), so
		# mpirun, which waits for the lost host's daemon, ends within
		# the suite.
		ip netns exec "${H[i]}" sh -c 'echo 5 >/proc/sys/net/ipv4/tcp_retries2' || return 1
	done
}
if ! setup 2>"$E2E_TMP/setup.err"; then
	fail "three hosts: namespaces, host names, veths on a bridge" "$(head -c 600 "$E2E_TMP/setup.err")"
	e2e_done
	exit 1
fi
pass "three hosts: namespaces, host names, veths on a bridge"

# The rsh agent: [options] HOST COMMAND...; enters HOST's namespace and,
# in a UTS namespace of its own, takes HOST as its host name. Any other
# host is refused.
cat >"$E2E_TMP/agent" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
case \$1 in
${H[0]}|${H[1]}|${H[2]}) ;;
*) echo "agent: not a host of this test: \$1" >&2; exit 1 ;;
esac
host=\$1
shift
exec ip netns exec "\$host" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$1"' "\$host" "\$*"
EOF
chmod 755 "$E2E_TMP/agent"
printf '%s slots=1\n' "${H[@]}" >"$E2E_TMP/hosts"

# mpirun itself on the first host (rank 0's), one rank per host, TCP
# only over the veths (btl tcp,self: no shared memory between ranks).
launch() { # mpirun args...
	ip netns exec "${H[0]}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "${H[0]}" \
		mpirun --allow-run-as-root --oversubscribe -n 3 --hostfile "$E2E_TMP/hosts" --map-by node \
		--mca plm_rsh_agent "$E2E_TMP/agent" --mca pml ob1 --mca btl tcp,self \
		--mca btl_tcp_if_include flv --mca oob_tcp_if_include flv "$@"
}
tx_bytes() { # host index
	ip netns exec "${H[$1]}" cat /sys/class/net/flv/statistics/tx_bytes 2>/dev/null || echo 0
}

cd "$E2E_TMP" || exit 1

# ---- three hosts, one CSV, one JSON ---------------------------------------

tx0=$(tx_bytes 1)
launch "$FAULTLINE" --quiet --csv="$E2E_TMP/m.csv" --output-format=json --output="$E2E_TMP/m.json" \
	--name=r --filename="$E2E_TMP/f.\${HOSTNAME}" --size=8m --rw=randread --runtime=4 --time_based \
	>m.out 2>m.err &
mpids+=($!)
wait $!
rc=$?
[ $rc = 0 ] && pass "three hosts: exit 0" || fail "three hosts: exit 0" "exit $rc" "$(head -c 800 m.err)"
for i in 0 1 2; do
	[ -e "f.${H[i]}" ] || fail "each host lays out its \${HOSTNAME} file" "no f.${H[i]}" "$(ls)"
done
[ -e "f.${H[0]}" ] && [ -e "f.${H[1]}" ] && [ -e "f.${H[2]}" ] && pass "each host lays out its \${HOSTNAME} file"
# Rank 1's rows reached rank 0's CSV through host 1's veth (its rows
# and their histograms, plus what TCP and Open MPI add).
sent=$(($(tx_bytes 1) - tx0))
rows1=$(grep ",${H[1]},1\$" m.csv | wc -c)
[ "$rows1" -gt 0 ] && [ "$sent" -ge "$rows1" ] && pass "host 1's rows went over its veth ($sent bytes sent, $rows1 in its rows)" \
	|| fail "host 1's rows went over its veth" "$sent bytes sent, $rows1 in its rows"

# Rows of ranks 0, 1, 2, each with its host's name, and all rows that
# add up: rates and threads summed, host-wide rates summed over hosts
# (three hosts: all of them), time the latest.
allrows_check='
import csv, sys
hosts = sys.argv[2:5]
want_ranks = set(sys.argv[5].split(","))
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
for r in rows:
    if r["rank"] != "all":
        assert r["host"] == hosts[int(r["rank"])], ("host of rank", r["rank"], r["host"])
seen = set((r["rank"], r["host"]) for r in rows if r["rank"] != "all")
assert set(k for k, _ in seen) == want_ranks, seen
sumcols = [c for c in rows[0] if c in ("iops", "mib_s", "minflt_per_s", "majflt_per_s", "threads")
           or (c.startswith("dev_") and (c.endswith("_iops") or c.endswith("_mib_s")))]
pending, nall = [], 0
for r in rows:
    if r["rank"] != "all":
        pending.append(r)
        continue
    assert r["host"] == "", r["host"]
    mine = [p for p in pending if p["job"] == r["job"]]
    assert mine, "an all row without rank rows"
    for col in sumcols:
        if r[col] == "":
            continue
        s = sum(float(p[col]) for p in mine)
        assert abs(s - float(r[col])) <= 0.01 * len(mine) + 1e-9, (col, s, r[col])
    assert float(r["t_s"]) == max(float(p["t_s"]) for p in mine)
    pending = [p for p in pending if p["job"] != r["job"]]
    nall += 1
assert not pending, "rank rows after the last all row"
print(nall)
'
nall=$("$PY" -c "$allrows_check" m.csv "${H[@]}" 0,1,2 2>"$E2E_TMP/pyerr")
[ -n "$nall" ] && pass "CSV: each rank's rows name its host; every all row is the sum of the hosts' rows ($nall)" \
	|| fail "CSV: each rank's rows name its host; every all row is the sum of the hosts' rows" \
		"$(tail -n 3 "$E2E_TMP/pyerr")"
pycheck "CSV: a full all row of the three hosts at each second" '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rank"] == "all"]
assert sum(r["threads"] == "3" for r in rows) >= 3, [r["threads"] for r in rows]
' m.csv

pycheck "JSON: each rank's jobs and host facts name its host; the aggregate adds up" '
import json, sys
hosts = sys.argv[2:5]
d = json.load(open(sys.argv[1]))
per = {j["faultline"]["rank"]: j for j in d["jobs"]}
assert sorted(per, key=str) == [0, 1, 2, "all"], list(per)
for r in (0, 1, 2):
    assert per[r]["faultline"]["host"] == hosts[r], (r, per[r]["faultline"]["host"])
    assert per[r]["job options"]["filename"].endswith("/f." + hosts[r])
ranks = d["faultline"]["ranks"]
assert [x["host"] for x in ranks] == hosts, ranks
assert [x["host_facts"]["hostname"] for x in ranks] == hosts
assert d["faultline"]["lost_ranks"] == [] and not any(x["lost"] for x in ranks)
agg = per["all"]["read"]
assert agg["total_ios"] == sum(per[r]["read"]["total_ios"] for r in (0, 1, 2)) > 0
assert agg["io_bytes"] == sum(per[r]["read"]["io_bytes"] for r in (0, 1, 2))
' m.json "${H[@]}"

# ---- a host cut off mid-run -----------------------------------------------

# Rank 0 waits 5 s for a rank at an exchange (FAULTLINE_MPI_TIMEOUT),
# then names it lost and ends the run with the others.
launch -x FAULTLINE_MPI_TIMEOUT=5 "$FAULTLINE" --quiet --csv="$E2E_TMP/k.csv" --output-format=json \
	--output="$E2E_TMP/k.json" --name=r --filename="$E2E_TMP/f.\${HOSTNAME}" --size=8m --rw=randread \
	--runtime=300 --time_based >k.out 2>k.err &
mpid=$!
mpids+=($mpid)
for _ in $(seq 300); do
	[ "$(grep -c ',all$' k.csv 2>/dev/null)" -ge 3 ] 2>/dev/null && break
	sleep 0.1
done
if ! ip -n "$hub" link set p2 down; then
	fail "host 2's link cut" "ip link set down failed"
fi
t0=$SECONDS
# The outputs come once rank 0 gave host 2 up (5 s); mpirun ends when TCP
# gives up on host 2's daemon (tcp_retries2 above).
for _ in $(seq 1200); do kill -0 $mpid 2>/dev/null || break; sleep 0.1; done
if kill -0 $mpid 2>/dev/null; then
	fail "host 2 cut off: the launch ends" "mpirun still runs after 120 s"
	kill -9 $mpid
fi
wait $mpid
rc=$?
[ $rc = 1 ] && pass "host 2 cut off: the launch ends, exit 1 ($((SECONDS - t0)) s after the cut)" \
	|| fail "host 2 cut off: the launch ends, exit 1" "exit $rc" "$(head -c 800 k.err)"
grep -q "rank 2 (${H[2]}) lost" k.err && pass "host 2 cut off: stderr names rank 2 and its host as lost" \
	|| fail "host 2 cut off: stderr names rank 2 and its host as lost" "$(head -c 800 k.err)"
pycheck "host 2 cut off: the JSON is whole, names the lost rank, and has the others' jobs and aggregate" '
import json, sys
hosts = sys.argv[2:5]
d = json.load(open(sys.argv[1]))
fl = d["faultline"]
assert fl["lost_ranks"] == [{"rank": 2, "host": hosts[2]}], fl["lost_ranks"]
assert [x["lost"] for x in fl["ranks"]] == [False, False, True], fl["ranks"]
assert [x["host"] for x in fl["ranks"]] == hosts
assert fl["interrupted"] is True
per = {j["faultline"]["rank"]: j for j in d["jobs"]}
assert sorted(per, key=str) == [0, 1, "all"], list(per)
agg = per["all"]["read"]
assert agg["total_ios"] == sum(per[r]["read"]["total_ios"] for r in (0, 1)) > 0
' k.json "${H[@]}"
nall=$("$PY" -c "$allrows_check" k.csv "${H[@]}" 0,1,2 2>"$E2E_TMP/pyerr")
[ -n "$nall" ] && pass "host 2 cut off: every all row is still the sum of the hosts' rows ($nall rows)" \
	|| fail "host 2 cut off: every all row is still the sum of the hosts' rows" "$(tail -n 3 "$E2E_TMP/pyerr")"
pycheck "host 2 cut off: whole rows; host 2's rows end, the others' go on to the end" '
import csv, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n")
rows = list(csv.DictReader(text.splitlines()))
last = {}
for i, r in enumerate(rows):
    last[r["rank"]] = i
assert last["2"] < last["0"] and last["2"] < last["1"], last
# The all row of the last rows of host 2, then the others only (a last,
# short row may come an exchange apart from the other rank).
after = [r["threads"] for r in rows[last["2"] + 1:] if r["rank"] == "all"]
assert len(after) >= 2 and "2" in after[1:] and set(after[1:]) <= {"1", "2"}, after
' k.csv
# The cut-off rank ends by itself (it waits four timeouts for rank 0, then
# one more), and its daemon once TCP gives up on mpirun.
for _ in $(seq 600); do [ -z "$(ip netns pids "${H[2]}")" ] && break; sleep 0.1; done
left=$(for ns in "${H[@]}"; do ip netns pids "$ns"; done)
[ -z "$left" ] && pass "host 2 cut off: nothing of the launch is left on any host" \
	|| fail "host 2 cut off: nothing of the launch is left on any host" "$(ps -o pid,args -p "$(echo $left | tr ' ' ,)" | cut -c1-120)"

e2e_done
