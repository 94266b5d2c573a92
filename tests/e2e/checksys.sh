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

expect_exit 0 "--check-system on this host" "$FAULTLINE" --check-system --target="$E2E_TMP"
if grep -q "TLB shootdowns *yes" "$E2E_TMP/out" && grep -q "kswapd0" "$E2E_TMP/out"; then
	pass "this host: TLB and kswapd readable, device chain printed"
else
	fail "this host: TLB and kswapd readable, device chain printed" "$(head -20 "$E2E_TMP/out")"
fi
expect_exit 2 "--check-system --target=nonexistent" "$FAULTLINE" --check-system --target=no-such-dev-xyz

e2e_done
