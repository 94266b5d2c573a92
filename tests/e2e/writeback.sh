#!/usr/bin/env bash
# e2e: alone (the device's write counters and the kernel's write-back tracepoints are host-wide)
# Who wrote a write job's data (issue 28): on a loop device of its own
# (ext4 on a file, so no other program writes it), mmap stores in a
# 32 MiB memory cgroup over a 256 MiB file, flushed at the end: the
# kernel writes over a fifth of what reaches the device (reclaim wakes
# the flushers), and the job's own plus the kernel's add up to what the
# device wrote while the job ran, within a few percent (the rest is the
# journal; the job ends with an fsync of its own, so that no dirty page
# of it is left for the kernel to write after its window, when nothing
# counts it). The same job through a buffer pool: the kernel's share is 0
# by construction. Buffered pwrite is traced too.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
	echo "skip - writeback: needs root, losetup and mkfs.ext4 for a loop device of its own"
	e2e_done
	exit
fi

img=$E2E_TMP/disk.img
mnt=$E2E_TMP/mnt
truncate -s 400M "$img"
loop_attach loop "$img" || { fail "writeback: losetup"; e2e_done; exit; }
# No lazy init: ext4lazyinit would write the inode tables meanwhile.
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop" && mkdir -p "$mnt" && mount "$loop" "$mnt" || {
	loop_detach "$loop"
	fail "writeback: mkfs and mount the loop device"
	e2e_done
	exit
}
trap '[ "$BASHPID" = "$E2E_MAIN" ] && { umount "$mnt"; loop_detach "$loop"; rm -rf "$E2E_TMP"; }' EXIT
dev=$(basename "$loop")
f=$mnt/data
mkdata "$f" 256
sync

# tracefs where faultline looks for it, mounted for the run when absent.
mt=""
[ -d /sys/kernel/tracing/events ] || mt=--mount-tracefs

written() { awk '{printf "%.0f\n", $7 * 512}' "/sys/block/$dev/stat"; }

# The summary, then the JSON document from its first "{" line.
split() { sed -n '/^{/,$p' "$1" >"$1.json"; }

# The kernel's share by counts, not by pace: 16384 random 4 KiB stores
# over the 65536 pages dirty about 14500 (57 MiB), and the job flushes
# only at its end (end_fsync), when at most its 32 MiB cgroup can still
# be dirty: the kernel must have written the rest (reclaim, flushers),
# over a third, however fast or slow this host dirties them. (With a
# flush a second instead, the share was the host's pace: 3 % in a run
# beside other work, and the check needed retries.)
w0=$(written)
"$FAULTLINE" --quiet $mt --name=mm --filename="$f" --size=256m --rw=randwrite --bs=4k --ioengine=mmap \
	--mem_limit=32m --io_size=64m --end_fsync=1 --csv="$E2E_TMP/mm.csv" \
	--output-format=normal,json --output="$E2E_TMP/mm"
w1=$(written)
split "$E2E_TMP/mm"
pycheck "mmap in a 32 MiB cgroup: the kernel's share is over a fifth, own + kernel = the device's writes" '
import json, sys
d = json.load(open(sys.argv[1] + ".json"))
wb = d["jobs"][0]["faultline"]["writeback"]
dev = int(sys.argv[3]) - int(sys.argv[2])
assert wb["source"] == "tracepoints" and wb["why"] is None and wb["lost_events"] == 0, wb
own, k = wb["own_bytes"], wb["kernel_bytes"]
print("# mmap: own %.1f MiB, kernel %.1f MiB (%.0f %%), device %.1f MiB (%+.2f %%)" % (
      own / 2**20, k / 2**20, 100 * wb["kernel_share"], dev / 2**20, 100.0 * (own + k - dev) / dev))
assert d["jobs"][0]["write"]["total_ios"] == 16384, d["jobs"][0]["write"]["total_ios"]
assert own > 0 and k > 0, wb
assert wb["kernel_share"] > 0.2, wb
assert abs(wb["kernel_share"] - k / (own + k)) < 1e-9, wb
assert sum(wb["kernel_by_reason"].values()) == k, wb
# what the device wrote while faultline ran (the file existed: no layout)
assert abs(own + k - dev) <= 0.05 * dev, (own, k, dev)
assert 0 <= wb["other_bytes"] <= 0.05 * dev, wb
assert wb["age_ms"] is not None and wb["age_ms"]["max"] >= wb["age_ms"]["mean"] >= 0, wb
' "$E2E_TMP/mm" "$w0" "$w1"
pycheck "mmap: the CSV has both rates every row, and they add up to the JSON" '
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
wb = json.load(open(sys.argv[2]))["jobs"][0]["faultline"]["writeback"]
assert rows and all(r["wb_own_mib_s"] != "" and r["wb_kernel_mib_s"] != "" for r in rows), rows
k = sum(float(r["wb_kernel_mib_s"]) * float(r["dt_s"]) for r in rows) * 1048576
assert abs(k - wb["kernel_bytes"]) <= 0.02 * wb["kernel_bytes"] + 65536, (k, wb["kernel_bytes"])
' "$E2E_TMP/mm.csv" "$E2E_TMP/mm.json"
grep -q "^  written: .* kernel .*reclaim" "$E2E_TMP/mm" && pass "mmap: the summary splits what was written" ||
	fail "mmap: the summary splits what was written" "$(grep written "$E2E_TMP/mm")"

"$FAULTLINE" --quiet $mt --name=bp --filename="$f" --size=256m --rw=randwrite --bs=4k --ioengine=bufpool \
	--pool_size=32m --sync_interval=1s --runtime=3s --time_based --csv="$E2E_TMP/bp.csv" \
	--output-format=normal,json --output="$E2E_TMP/bp"
split "$E2E_TMP/bp"
pycheck "bufpool: the kernel's share is 0 by construction, not measured" '
import csv, json, sys
j = json.load(open(sys.argv[1] + ".json"))["jobs"][0]
wb = j["faultline"]["writeback"]
assert wb["source"] == "by construction" and wb["kernel_bytes"] == 0 and wb["kernel_share"] == 0, wb
assert "O_DIRECT" in wb["why"] and wb["own_bytes"] == j["write"]["io_bytes"], wb
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows and all(float(r["wb_kernel_mib_s"]) == 0 for r in rows), rows
' "$E2E_TMP/bp" "$E2E_TMP/bp.csv"
grep -q "written by the kernel on its own: none by construction" "$E2E_TMP/bp" &&
	pass "bufpool: the summary says none by construction" || fail "bufpool: the summary says none by construction"

"$FAULTLINE" --quiet $mt --name=pw --filename="$f" --size=256m --rw=randwrite --bs=4k --ioengine=psync \
	--fdatasync=64 --runtime=3s --time_based --output-format=json --output="$E2E_TMP/pw.json"
pycheck "buffered pwrite+fdatasync: traced, its flushes are its own" '
import json, sys
wb = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["writeback"]
assert wb["source"] == "tracepoints" and wb["own_bytes"] > 0, wb
assert wb["kernel_share"] is not None and wb["kernel_share"] < 0.5, wb
' "$E2E_TMP/pw.json"

"$FAULTLINE" --quiet --name=rd --filename="$f" --size=16m --bs=4k --ioengine=psync --runtime=1s \
	--output-format=json --output="$E2E_TMP/rd.json"
pycheck "a read job has no writeback object" '
import json, sys
assert json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["writeback"] is None
' "$E2E_TMP/rd.json"

# Looked for in a tracefs of the test's own: --mount-tracefs unmounted
# /sys/kernel/tracing again, and instances outlive a mount.
mkdir -p "$E2E_TMP/tr"
if mount -t tracefs nodev "$E2E_TMP/tr"; then
	# Other engineers' runs have theirs while they run: only a gone
	# process's instance is left behind.
	left=""
	for i in $(ls "$E2E_TMP/tr/instances" | grep '^faultline-[0-9]*$' || true); do
		kill -0 "${i#faultline-}" 2>/dev/null || left="$left $i"
	done
	[ -z "$left" ] && pass "no tracefs instance left behind" || fail "no tracefs instance left behind" "$left"
	# One left by a run that was killed (its pid is gone) is removed by
	# the next run that traces; a live process's is not.
	true &
	dead=$!
	wait $dead
	mkdir "$E2E_TMP/tr/instances/faultline-$dead" "$E2E_TMP/tr/instances/faultline-$$"
	"$FAULTLINE" --quiet --name=st --filename="$f" --size=16m --rw=randwrite --bs=4k --ioengine=psync \
		--runtime=1s --output=/dev/null
	[ ! -d "$E2E_TMP/tr/instances/faultline-$dead" ] && [ -d "$E2E_TMP/tr/instances/faultline-$$" ] &&
		pass "a dead run's tracefs instance is removed, a live one's kept" ||
		fail "a dead run's tracefs instance is removed, a live one's kept" "$(ls "$E2E_TMP/tr/instances")"
	rmdir "$E2E_TMP/tr/instances/faultline-$$" 2>/dev/null
	umount "$E2E_TMP/tr"
else
	fail "no tracefs instance left behind" "cannot mount tracefs to look"
fi

e2e_done
