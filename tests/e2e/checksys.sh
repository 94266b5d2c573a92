#!/usr/bin/env bash
# --check-system reads exactly what a recorded /proc and /sys tree holds
# (FAULTLINE_PROC / FAULTLINE_SYS), and says why a source is missing.
. "$(dirname "$0")/lib.sh"

fx=$(cd "$(dirname "$0")/../fixtures" && pwd)

cs() { # fixture target -> JSON in $E2E_TMP/cs.json
	FAULTLINE_PROC=$fx/$1/proc FAULTLINE_SYS=$fx/$1/sys "$FAULTLINE" --check-system \
		--output-format=json ${2:+--target=$2} >"$E2E_TMP/cs.json" 2>"$E2E_TMP/err"
}

cs this-host
pycheck "this host's recording: TLB sum over 2 CPUs, kswapd0" '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["tlb_shootdowns"]
assert t["readable"] and t["total"] == 31742 and t["cpus"] == 2, t
k = d["kswapd"]["threads"]
assert [(x["name"], x["pid"]) for x in k] == [("kswapd0", 45)], k
' "$E2E_TMP/cs.json"

cs x86-256cpu
pycheck "256-CPU host: TLB line of several KiB, not first, summed exactly" '
import json, sys
t = json.load(open(sys.argv[1]))["tlb_shootdowns"]
assert t["total"] == 5958354560 and t["cpus"] == 256, t
' "$E2E_TMP/cs.json"

cs numa-2node
pycheck "two-node host: kswapd0 and kswapd1 with their CPU seconds" '
import json, sys
k = json.load(open(sys.argv[1]))["kswapd"]["threads"]
got = [(x["name"], x["pid"], round(x["cpu_s"], 2)) for x in k]
assert got == [("kswapd0", 187, 1845.35), ("kswapd1", 188, 1711.49)], got
' "$E2E_TMP/cs.json"

cs arm64
pycheck "arm64: no TLB line, said why, not a zero" '
import json, sys
t = json.load(open(sys.argv[1]))["tlb_shootdowns"]
assert t["readable"] is False and t["total"] is None and "arm64" in t["why"], t
' "$E2E_TMP/cs.json"

cs md-raid0 md0
pycheck "md RAID-0: level, chunk, raid disks and four NVMe members" '
import json, sys
d = json.load(open(sys.argv[1]))["target"]["device"]
assert d["kind"] == "md" and d["md"] == {"level": "raid0", "chunk_bytes": 524288, "raid_disks": 4, "array_state": "clean"}, d["md"]
assert [m["name"] for m in d["members"]] == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"], d["members"]
' "$E2E_TMP/cs.json"

cs partitioned sda2
pycheck "partition: sda2 on sda, rotational, mq-deadline" '
import json, sys
d = json.load(open(sys.argv[1]))["target"]["device"]
assert d["kind"] == "partition" and d["disk"] == "sda", d
assert d["rotational"] is True and d["scheduler"] == "mq-deadline", d
' "$E2E_TMP/cs.json"

# DAMON beside kswapd: this VM's own kdamond pages out idle physical
# memory, page cache included (recorded); a synthetic tree with the
# damon_reclaim module and a scheme that does not page out; none on 5.10.
cs this-host
pycheck "DAMON, this host recorded: kdamond 0 pages out memory idle 30 s, 103 GiB so far" '
import json, sys
d = json.load(open(sys.argv[1]))["damon"]
assert d["present"] and d["reclaims"] and d["sysfs"] and not d["stats_refreshed"], d
k = d["kdamonds"]
assert len(k) == 1 and k[0]["on"] and k[0]["pid"] == 77, k
assert k[0]["cpu_s"] is None, k  # the recording has no proc/77: unread, not 0
c = k[0]["contexts"][0]
assert c["operations"] == "paddr" and c["sample_us"] == 500000 and c["aggr_us"] == 5000000, c
s = c["schemes"]
assert len(s) == 1 and s[0]["action"] == "pageout" and s[0]["idle_s"] == 30.0, s
assert s[0]["samples_per_aggregation"] == 10 and s[0]["max_accesses"] == 1, s
assert s[0]["quota_bytes"] == 2147483648 and s[0]["applied_bytes"] == 110867705856, s
' "$E2E_TMP/cs.json"
FAULTLINE_PROC=$fx/this-host/proc FAULTLINE_SYS=$fx/this-host/sys "$FAULTLINE" --check-system >"$E2E_TMP/cs.txt" 2>&1
grep -q "DAMON reclaim          YES: page cache is paged out without memory pressure" "$E2E_TMP/cs.txt" &&
	grep -q "pageout: regions accessed in at most 1 of 10 samples per aggregation, for 6 aggregations (30 s); at most 2.0 GiB per 1000 ms; applied to 103.3 GiB so far (as last refreshed)" "$E2E_TMP/cs.txt" &&
	pass "DAMON, this host recorded: the text report says it" ||
	fail "DAMON, this host recorded: the text report says it" "$(grep -A6 DAMON "$E2E_TMP/cs.txt")"
cs damon-module
pycheck "DAMON, synthetic: the damon_reclaim module reclaims; a kdamond off; a cold scheme; unreadable stats are null" '
import json, sys
d = json.load(open(sys.argv[1]))["damon"]
assert d["present"] and d["reclaims"] and d["reclaim_module"] and not d["lru_sort_module"], d
k = d["kdamonds"]
assert [x["on"] for x in k] == [False, True] and k[0]["pid"] is None and k[0]["cpu_s"] is None, k
s = k[1]["contexts"][0]["schemes"][0]
assert s["action"] == "cold" and s["applied_bytes"] is None and s["applied_regions"] is None, s
' "$E2E_TMP/cs.json"
cs linux-5.10
pycheck "DAMON, Linux 5.10: none, and why" '
import json, sys
d = json.load(open(sys.argv[1]))["damon"]
assert d["present"] is False and d["reclaims"] is False and "no DAMON" in d["why"], d
' "$E2E_TMP/cs.json"
# The live host: the kdamonds sysfs lists, each one found; as root, a
# running one is asked to refresh its stats first.
K0=/sys/kernel/mm/damon/admin/kdamonds/0
if [ -r /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ]; then
	# Another process's update_schemes_stats (a second faultline, damo)
	# holds DAMON's sysfs lock until the kdamond handles it, up to a
	# sampling interval, and the state and pid files answer EBUSY
	# meanwhile (fresh clone 32 was told kdamond 0 was off). As root,
	# with kdamond 0 on, three such requests run beside the probe.
	busy=
	if [ "$(id -u)" = 0 ] && [ "$(cat $K0/state 2>/dev/null)" = on ]; then
		(for _ in 1 2 3; do echo update_schemes_stats >$K0/state; done) 2>/dev/null &
		busy=$!
		sleep 0.1
	fi
	"$FAULTLINE" --check-system --output-format=json >"$E2E_TMP/live.json" 2>/dev/null
	[ -n "$busy" ] && wait $busy
	pycheck "DAMON, this host live: every kdamond, and fresh stats as root${busy:+, with the DAMON lock held by another process}" '
import errno, json, os, sys, time
d = json.load(open(sys.argv[1]))["damon"]
base = "/sys/kernel/mm/damon/admin/kdamonds"
def read(path):
    for _ in range(600):        # EBUSY while another process holds the lock
        try:
            return open(path).read().strip()
        except OSError as e:
            if e.errno != errno.EBUSY:
                raise
            time.sleep(0.005)
    raise TimeoutError(path)
n = int(read(base + "/nr_kdamonds"))
assert d["present"] and len(d["kdamonds"]) == min(n, 4), d
on = [k for k in range(min(n, 4)) if read("%s/%d/state" % (base, k)) == "on"]
assert [k["index"] for k in d["kdamonds"] if k["on"]] == on, d
if on and os.geteuid() == 0:
    assert d["stats_refreshed"], d
    assert all(isinstance(k["pid"], int) for k in d["kdamonds"] if k["on"]), d
    assert all(isinstance(k["cpu_s"], float) for k in d["kdamonds"] if k["on"]), d
' "$E2E_TMP/live.json"
elif [ -d /sys/kernel/mm/damon/admin/kdamonds ]; then
	"$FAULTLINE" --check-system --output-format=json >"$E2E_TMP/live.json" 2>/dev/null
	pycheck "DAMON, this host live, not root: unknown (null), not no, and why" '
import json, sys
d = json.load(open(sys.argv[1]))["damon"]
assert d["present"] is True and d["reclaims"] is None and "root only" in d["why"], d
' "$E2E_TMP/live.json"
fi

expect_exit 0 "--check-system on this host" "$FAULTLINE" --check-system --target="$E2E_TMP"
if grep -q "TLB shootdowns *yes" "$E2E_TMP/out" && grep -q "kswapd0" "$E2E_TMP/out"; then
	pass "this host: TLB and kswapd readable, device chain printed"
else
	fail "this host: TLB and kswapd readable, device chain printed" "$(head -20 "$E2E_TMP/out")"
fi
expect_exit 2 "--check-system --target=nonexistent" "$FAULTLINE" --check-system --target=no-such-dev-xyz

e2e_done
