#!/usr/bin/env bash
# fio's verify phases, as fio's own regression jobs use them: do_verify=0
# (stamp, do not read back), a read job with verify= checking each block
# as it reads it, and verify_state_save / verify_state_load carrying what
# one run wrote to a later run's check (a missing, foreign or damaged
# state file refused before anything runs).
. "$(dirname "$0")/lib.sh"

cd "$E2E_TMP" || exit 1
run() { "$FAULTLINE" --quiet --output-format=json --output=out.json "$@"; }

# do_verify=0: the blocks are stamped (a later read job checks them) but
# nothing is read back: no verify object in the JSON.
expect_exit 0 "do_verify=0: a write job with verify runs" run --name=w --filename=f1 \
	--size=1m --bs=4k --rw=write --verify=md5 --do_verify=0
pycheck "do_verify=0: nothing read back" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["faultline"]["verify"] is None, j["faultline"]["verify"]
' out.json
expect_exit 0 "read verify: the stamped blocks check as read" run --name=r --filename=f1 \
	--size=1m --bs=4k --rw=read --verify=md5
pycheck "read verify: 256 blocks checked, none bad" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["blocks_checked"] == 256 and v["mismatches"] == 0 and v["complete"], v
' out.json
# One flipped byte in the middle of block 5: the read job fails (EILSEQ).
# Its bits inverted, as writing a fixed 0xff left a block that already
# held 0xff there (one run in 256: the content is random) intact.
at=$((5 * 4096 + 100))
old=$(dd if=f1 bs=1 skip=$at count=1 status=none | od -An -tu1 | tr -d ' ')
printf "\\$(printf '%03o' $((old ^ 255)))" | dd of=f1 bs=1 seek=$at conv=notrunc status=none
[ "$(dd if=f1 bs=1 skip=$at count=1 status=none | od -An -tu1 | tr -d ' ')" = $((old ^ 255)) ] ||
	fail "block 5's byte flipped" "it still reads $old"
for eng in psync mmap libaio; do
	expect_exit 1 "read verify, $eng: a corrupted block fails the job" run --name=r \
		--filename=f1 --size=1m --bs=4k --rw=read --verify=md5 --ioengine=$eng --iodepth=4
	pycheck "read verify, $eng: the bad block is block 5" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["mismatches"] == 1 and v["first_bad_offset"] == 5 * 4096, v
' out.json
done
# Blocks never written by faultline do not check: a laid-out file fails.
head -c 1048576 /dev/urandom >f2
expect_exit 1 "read verify: a file faultline never wrote fails" run --name=r --filename=f2 \
	--size=1m --bs=4k --rw=read --verify=crc32c

# verify_state_save / verify_state_load: the write stops after 100 of
# 256 blocks (number_ios); the later read checks exactly those 100.
rm -f local-*-verify.state
expect_exit 0 "verify_state_save: a partial write saves its state" run --name=job \
	--filename=f3 --size=1m --bs=4k --rw=randwrite --verify=md5 --do_verify=0 \
	--verify_state_save=1 --number_ios=100 --randseed=3
[ -s local-job-0-verify.state ] && pass "verify_state_save: local-job-0-verify.state written" ||
	fail "verify_state_save: local-job-0-verify.state written"
expect_exit 0 "verify_state_load: the read checks what the write did" run --name=job \
	--filename=f3 --size=1m --bs=4k --rw=read --verify=md5 --verify_state_load=1
pycheck "verify_state_load: only the written blocks are checked" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert 0 < v["blocks_checked"] <= 100 and v["mismatches"] == 0, v
' out.json
# Without the state the same read fails: the unwritten blocks do not check.
expect_exit 1 "without verify_state_load the unwritten blocks fail" run --name=job \
	--filename=f3 --size=1m --bs=4k --rw=read --verify=md5
expect_exit 2 "verify_state_load: a foreign state (another bs) is refused" run --name=job \
	--filename=f3 --size=1m --bs=8k --rw=read --verify=md5 --verify_state_load=1
expect_err_has "a foreign state file" "verify_state_load: the refusal says foreign"
expect_exit 2 "verify_state_load: another job's name finds no state" run --name=other \
	--filename=f3 --size=1m --bs=4k --rw=read --verify=md5 --verify_state_load=1
expect_err_has "local-other-0-verify.state: No such file" "verify_state_load: a missing file named"
printf 'garbage' >local-job-0-verify.state
expect_exit 2 "verify_state_load: a damaged state file is refused" run --name=job \
	--filename=f3 --size=1m --bs=4k --rw=read --verify=md5 --verify_state_load=1
expect_err_has "is not a faultline verify state file" "verify_state_load: damaged said"

# verify_backlog=32, batch 16, over 256 writes: 8 checks of 16 blocks
# while writing, then the end's read-back of all 256 (384 in all; 256
# without the backlog), for a sync, a mapped and two async engines.
for eng in psync mmap libaio io_uring; do
	expect_exit 0 "verify_backlog, $eng: runs" run --name=b --filename=fb --size=1m --bs=4k \
		--rw=write --verify=crc32c --verify_backlog=32 --verify_backlog_batch=16 \
		--ioengine=$eng --iodepth=8
	pycheck "verify_backlog, $eng: 128 blocks checked while writing, 256 at the end" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["blocks_checked"] == 384 and v["mismatches"] == 0, v
' out.json
done

# verify_pattern and buffer_pattern, fio's syntax. verify_pattern alone
# is verify=pattern: the blocks hold the pattern, %o each one's offset,
# and no header; the read job checks them byte for byte.
expect_exit 0 "verify_pattern=0xaa%o: a write job runs and checks" run --name=p --filename=fp \
	--size=64k --bs=4k --rw=write --verify_pattern=0xaa%o
pycheck "verify_pattern: every block is 0xaa and its offset, repeated" '
import struct, sys
d = open(sys.argv[1], "rb").read()
assert len(d) == 65536
for off in range(0, 65536, 4096):
    rep = b"\xaa" + struct.pack("<Q", off)
    blk = (rep * 456)[:4096]
    assert d[off:off + 4096] == blk, off
' fp
pycheck "verify_pattern: the read-back checked 16 blocks (pattern)" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["mode"] == "pattern" and v["blocks_checked"] == 16 and v["mismatches"] == 0, v
' out.json
printf '\x55' | dd of=fp bs=1 seek=$((3 * 4096 + 7)) conv=notrunc status=none
expect_exit 1 "verify=pattern: a read job finds the changed byte" run --name=p --filename=fp \
	--size=64k --bs=4k --rw=read --verify=pattern --verify_pattern=0xaa%o
pycheck "verify=pattern: block 3 is the bad one" '
import json, sys
v = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["verify"]
assert v["mismatches"] == 1 and v["first_bad_offset"] == 3 * 4096, v
' out.json
# buffer_pattern without verify: the blocks are the pattern, nothing else.
expect_exit 0 "buffer_pattern=\"abcd\"-12: a write job runs" run --name=bp --filename=fq \
	--size=64k --bs=4k --rw=randwrite --buffer_pattern='"abcd"-12' --number_ios=16
pycheck "buffer_pattern: each written block is abcd f4 ff ff ff repeated" '
import sys
d = open(sys.argv[1], "rb").read()
blk = (b"abcd\xf4\xff\xff\xff" * 512)[:4096]
n = sum(d[o:o + 4096] == blk for o in range(0, 65536, 4096))
assert n >= 1 and all(d[o:o + 4096] == blk or d[o:o+8] != b"abcd\xf4\xff\xff\xff" for o in range(0, 65536, 4096)), n
' fq
# A checksum verify= seals the pattern with faultline's header.
expect_exit 0 "verify=md5 with verify_pattern: runs and checks" run --name=pm --filename=fm \
	--size=64k --bs=4k --rw=write --verify=md5 --verify_pattern='"xyzw"'
pycheck "verify=md5 with verify_pattern: header, then the pattern" '
import sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"FAULTLN2", d[:8]
assert d[64:4096] == (b"xyzw" * 1024)[64:4096]
' fm
vp=(--name=p --filename=fp2 --size=64k --bs=4k --rw=write --verify_pattern=0x1234)
expect_exit 0 "verify_pattern=0x1234: written" run "${vp[@]}"
expect_exit 0 "faultline --verify checks a verify=pattern job's blocks" "$FAULTLINE" --verify "${vp[@]}"
printf '\x55' | dd of=fp2 bs=1 seek=5000 conv=notrunc status=none
expect_exit 1 "faultline --verify finds a changed byte of a pattern block" "$FAULTLINE" --verify "${vp[@]}"
printf '[j]\nfilename=fp\nsize=64k\nrw=write\nbuffer_pattern=abcd\n' >badp.fio
expect_exit 2 "buffer_pattern=abcd (no quotes) is refused" "$FAULTLINE" --parse-only badp.fio
expect_err_has "buffer_pattern=abcd at badp.fio:5" "buffer_pattern's refusal names its line"
printf '[j]\nfilename=fp\nsize=64k\nrw=write\nverify=pattern\n' >badp2.fio
expect_exit 2 "verify=pattern without verify_pattern is refused" "$FAULTLINE" --parse-only badp2.fio
expect_err_has "verify=pattern at badp2.fio:5 needs verify_pattern" "verify=pattern's refusal"

# Bad values and misplaced options: exit 2 with the option and its line.
cat >bad.fio <<'JOB'
[global]
filename=f1
size=1m
[r]
rw=read
verify=md5
verify_backlog=8
JOB
expect_exit 2 "verify_backlog on a read job is refused" "$FAULTLINE" --parse-only bad.fio
expect_err_has "verify_backlog=8 at bad.fio:7" "verify_backlog's refusal names bad.fio:7"
printf '[w]\nfilename=f1\nsize=1m\nrw=write\nverify_state_save=1\n' >bad2.fio
expect_exit 2 "verify_state_save without verify is refused" "$FAULTLINE" --parse-only bad2.fio
expect_err_has "bad2.fio:5" "verify_state_save's refusal names its line"
printf '[w]\nfilename=f1\nsize=1m\nrw=write\nverify=md5\nexperimental_verify=yes please\n' >bad4.fio
expect_exit 2 "experimental_verify=yes please is refused" "$FAULTLINE" --parse-only bad4.fio
expect_err_has "bad4.fio:6" "experimental_verify's refusal names its line"
printf '[w]\nfilename=f1\nsize=1m\nrw=write\nverify=md5\nverify_backlog=lots\n' >bad5.fio
expect_exit 2 "verify_backlog=lots is refused" "$FAULTLINE" --parse-only bad5.fio
expect_err_has "verify_backlog=lots at bad5.fio:6" "verify_backlog's refusal names its line"
printf '[w]\nfilename=f1\nsize=1m\nrw=write\nverify=md5\ndo_verify=maybe\n' >bad3.fio
expect_exit 2 "do_verify=maybe is refused" "$FAULTLINE" --parse-only bad3.fio
expect_err_has "bad3.fio:6" "do_verify's refusal names its line"

e2e_done
