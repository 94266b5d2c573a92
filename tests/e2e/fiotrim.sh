#!/usr/bin/env bash
# fio's trims (rw=trim, randtrim, trimwrite, randtrimwrite), as its
# regression jobs t0023 and t0024 use them: a hole punched in a file
# (its blocks freed, its size kept), trimwrite's writes verified after
# each trim, mmap's trims seen through the mapping, the null engine's
# filesize pass; on a loop device (root) BLKDISCARD, and a device with a
# filesystem refused as writes are unless allow_destructive=1.
. "$(dirname "$0")/lib.sh"

cd "$E2E_TMP" || exit 1
run() { "$FAULTLINE" --quiet --output-format=json --output=out.json "$@"; }
blocks() { stat -c %b "$1"; }

# Punching holes is the filesystem's: where it has none, say so and stop.
head -c 65536 /dev/urandom >probe
if ! fallocate -p -o 0 -l 4096 probe 2>/dev/null; then
	echo "skip - this filesystem ($(stat -f -c %T .)) punches no holes: file trims untested"
	e2e_done
	exit
fi

for eng in psync libaio io_uring posixaio; do
	head -c $((4 << 20)) /dev/urandom >tf
	expect_exit 0 "$eng: rw=trim over 4 MiB runs" run --name=t --filename=tf --size=4m \
		--bs=64k --rw=trim --ioengine=$eng --iodepth=4
	pycheck "$eng: 64 trims of 64 KiB in fio's trim object, nothing written" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
t, w = j["trim"], j["write"]
assert t["total_ios"] == 64 and t["io_bytes"] == 4 << 20, t
assert w["total_ios"] == 0, w
assert t["lat_ns"]["N"] == 64 and t["lat_ns"]["max"] >= t["lat_ns"]["min"] > 0, t["lat_ns"]
' out.json
	[ "$(blocks tf)" = 0 ] && [ "$(stat -c %s tf)" = $((4 << 20)) ] &&
		pass "$eng: the file's blocks are freed, its size kept" ||
		fail "$eng: the file's blocks are freed, its size kept" "$(blocks tf) blocks, $(stat -c %s tf) bytes"
done

# randtrimwrite: each block trimmed, then written; verify reads all back.
head -c $((1 << 20)) /dev/urandom >tw
for eng in psync mmap libaio; do
	expect_exit 0 "$eng: randtrimwrite with verify runs" run --name=tw --filename=tw --size=1m \
		--bs=4k --rw=randtrimwrite --ioengine=$eng --verify=crc32c --numjobs=2
	pycheck "$eng: as many trims as writes, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["trim"]["total_ios"] == j["write"]["total_ios"] > 0, (j["trim"], j["write"])
v = j["faultline"]["verify"]
assert v["blocks_checked"] > 0 and v["mismatches"] == 0, v
' out.json
done
# mmap: a trim goes to the file; the mapping then reads zeros there.
head -c $((1 << 20)) /dev/urandom >tm
expect_exit 0 "mmap: rw=trim of the first 256 KiB" run --name=m --filename=tm --size=256k \
	--bs=64k --rw=trim --ioengine=mmap
pycheck "mmap: the trimmed range reads zeros, the rest is kept" '
import sys
d = open(sys.argv[1], "rb").read()
assert d[:256 << 10] == bytes(256 << 10) and d[256 << 10:] != bytes(len(d) - (256 << 10))
' tm

# The null engine with filesize and no size (fio's t0023, t0024): one
# pass of filesize, trims and writes each 1 MiB, bs=R,W,T's trim size.
cat >t24.fio <<'JOB'
[global]
filesize=1M
ioengine=null
rw=trimwrite
[basic]
[bs]
bs=4k,4k,8k
JOB
expect_exit 0 "null: fio's t0024 shape runs" run t24.fio
pycheck "null: each job trims and writes 1 MiB; bs=4k,4k,8k trims and writes 8k" '
import json, sys
jobs = {j["jobname"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
for j in jobs.values():
    assert j["trim"]["io_bytes"] == j["write"]["io_bytes"] == 1 << 20, j["jobname"]
assert jobs["bs"]["trim"]["total_ios"] == 128 and jobs["bs"]["write"]["total_ios"] == 128
assert jobs["basic"]["trim"]["total_ios"] == 256
' out.json

# What trims cannot do, each named with its line.
printf '[t]\nfilename=tf\nsize=1m\nrw=trim\nioengine=bufpool\npool_size=1m\n' >b1.fio
expect_exit 2 "trims with bufpool are refused" "$FAULTLINE" --parse-only b1.fio
expect_err_has "ioengine=bufpool at b1.fio:5 does not trim" "bufpool's refusal names its line"
printf '[t]\nfilename=tf\nsize=1m\nrw=randtrim\nverify=md5\n' >b2.fio
expect_exit 2 "randtrim with verify is refused" "$FAULTLINE" --parse-only b2.fio
expect_err_has "verify at b2.fio:5 with rw=randtrim" "verify's refusal names its line"
printf '[t]\nfilename=tf\nsize=1m\nrw=trimwrite\nfsync=4\n' >b3.fio
expect_exit 2 "trimwrite with fsync is refused" "$FAULTLINE" --parse-only b3.fio
expect_err_has "fsync at b3.fio:5 with rw=trimwrite" "fsync's refusal names its line"
printf '[t]\nfilename=tf\nsize=1m\nrw=trim\nbs=4k,4k,4k,4k\n' >b4.fio
expect_exit 2 "bs with four sizes is refused" "$FAULTLINE" --parse-only b4.fio
expect_err_has "bs=4k,4k,4k,4k at b4.fio:5" "bs's refusal names its line"

# Block devices (root): BLKDISCARD on a loop device, whose backing file
# loses the blocks; one with ext4 is refused as writes are.
loop=
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null; then
	echo "skip - block-device trims: need root and losetup"
else
	head -c $((8 << 20)) /dev/urandom >dev.img
	loop_attach loop dev.img || { echo "skip - losetup failed"; loop=; }
fi
if [ -n "$loop" ]; then
	trap '[ "$BASHPID" = "$E2E_MAIN" ] && { loop_detach "$loop"; rm -rf "$E2E_TMP"; }' EXIT
	b0=$(blocks dev.img)
	expect_exit 0 "loop device: rw=trim (BLKDISCARD) runs" run --name=d --filename="$loop" \
		--size=4m --bs=1m --rw=trim
	b1=$(blocks dev.img)
	[ "$b1" -lt "$b0" ] && pass "loop device: the backing file lost blocks ($b0 -> $b1)" ||
		fail "loop device: the backing file lost blocks" "$b0 -> $b1"
	if command -v mkfs.ext4 >/dev/null && mkfs.ext4 -q -F "$loop" 2>/dev/null; then
		expect_exit 2 "loop device with ext4: trims refused" run --name=d --filename="$loop" \
			--size=1m --bs=64k --rw=trim
		expect_err_has "ext4" "the refusal names the filesystem"
		expect_exit 0 "loop device with ext4: allow_destructive=1 trims" run --name=d \
			--filename="$loop" --size=1m --bs=64k --rw=trim --allow_destructive=1
	fi
	loop_detach "$loop"
fi

e2e_done
