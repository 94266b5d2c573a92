#!/usr/bin/env bash
# fio's reaping and ordering options, as its regression jobs t0009 and
# t0013 use them: iodepth_batch_complete_min/max (0: polling) for
# io_uring and libaio, and serialize_overlap (no two overlapping
# requests of a write job's thread in flight); and error_dump, each
# error continue_on_error goes on after in the summary.
. "$(dirname "$0")/lib.sh"

cd "$E2E_TMP" || exit 1
head -c 1048576 /dev/urandom >data
run() { "$FAULTLINE" --quiet --output-format=json --output=out.json "$@"; }

for eng in io_uring libaio; do
	# min 0: a reap never waits; the polling loop still completes every
	# request. max 2: no reap takes more than 2 (fio's "4" bucket: 1-4).
	expect_exit 0 "$eng: iodepth_batch_complete_min=0 max=2 runs" run --name=q \
		--filename=data --size=1m --bs=4k --rw=randread --ioengine=$eng --iodepth=16 \
		--direct=1 --iodepth_batch_complete_min=0 --iodepth_batch_complete_max=2
	pycheck "$eng: every request completed, no reap above 4" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
c = j["iodepth_complete"]
assert j["read"]["total_ios"] == 256, j["read"]["total_ios"]
assert all(c[k] == 0 for k in ("8", "16", "32", "64", ">=64")), c
' out.json
	expect_exit 0 "$eng: iodepth_batch_complete=4 (fio's alias) runs" run --name=q \
		--filename=data --size=1m --bs=4k --rw=randread --ioengine=$eng --iodepth=16 \
		--direct=1 --iodepth_batch_complete=4 --iodepth_batch_complete_max=4
	pycheck "$eng: min=max=4: every reap 1-4 (the drain's last ones included)" '
import json, sys
c = json.load(open(sys.argv[1]))["jobs"][0]["iodepth_complete"]
assert all(c[k] == 0 for k in ("0", "8", "16", "32", "64", ">=64")), c
' out.json

	# serialize_overlap over 4 blocks at depth 16: never more than 4 in
	# flight (each block once); without it the queue fills to 16.
	for s in 0 1; do
		expect_exit 0 "$eng: serialize_overlap=$s runs and verifies" run --name=o \
			--filename=data --size=16k --bs=4k --rw=randwrite --ioengine=$eng \
			--iodepth=16 --direct=1 --time_based --runtime=1 --serialize_overlap=$s \
			--verify=crc32c
		pycheck "$eng: serialize_overlap=$s: depth $([ $s = 1 ] && echo 'at most 4' || echo 'reaches 8 or more')" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d, ser = j["iodepth_level"], sys.argv[2] == "1"
deep = d["8"] + d["16"] + d["32"] + d[">=64"]
assert (deep == 0) if ser else (deep > 0), d
assert j["faultline"]["verify"]["mismatches"] == 0
' out.json $s
	done
done

# error_dump: a target cut short under a running job gives short reads
# (EIO), gone on after with continue_on_error=read; error_dump=1 (fio's
# default) lists each (16 a thread, the rest counted), 0 only counts.
for dump in 1 0; do
	head -c $((4 << 20)) /dev/urandom >tr
	"$FAULTLINE" --quiet --output=sum.txt --name=t --filename=tr --size=4m --rw=randread \
		--bs=4k --ioengine=psync --time_based --runtime=2 --continue_on_error=read \
		--error_dump=$dump 2>err &
	pid=$!
	for _ in $(seq 100); do
		ls -l /proc/$pid/task/*/fd 2>/dev/null | grep -q "$E2E_TMP/tr" && break
		sleep 0.05
	done
	truncate -s 64k tr
	wait $pid
	rc=$?
	[ $rc = 0 ] && pass "error_dump=$dump: the job goes on and ends well" ||
		fail "error_dump=$dump: the job goes on and ends well" "exit $rc" "$(head -c 300 err)"
	n=$(grep -Ec 'error gone on after: read (.*/)?tr offset [0-9]*: Input/output error' sum.txt)
	if [ $dump = 1 ]; then
		[ "$n" = 16 ] && grep -q 'more not kept: 16 a thread' sum.txt &&
			pass "error_dump=1: 16 errors listed, the rest counted" ||
			fail "error_dump=1: 16 errors listed, the rest counted" "$n listed" "$(grep -i error sum.txt | head -5)"
	else
		[ "$n" = 0 ] && grep -q 'errors gone on after (continue_on_error): [1-9]' sum.txt &&
			pass "error_dump=0: counted, none listed" ||
			fail "error_dump=0: counted, none listed" "$n listed"
	fi
done

# posixaio (fio's t0017): a write mix verified, and fio's t0017 job itself.
expect_exit 0 "posixaio: randrw at depth 16 runs and verifies" run --name=p --filename=data \
	--size=1m --bs=4k --rw=randrw --ioengine=posixaio --iodepth=16 --verify=md5 \
	--time_based --runtime=1
pycheck "posixaio: reads, writes, depth 16 reached, verify clean" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["read"]["total_ios"] > 0 and j["write"]["total_ios"] > 0
assert j["iodepth_level"]["16"] > 0, j["iodepth_level"]
assert j["faultline"]["verify"]["mismatches"] == 0
' out.json
printf '[test]\nfilename=data\nioengine=posixaio\nsize=1M\niodepth=16\n' >t17.fio
expect_exit 0 "posixaio: fio's t0017 (1 MiB at depth 16) runs" run t17.fio
pycheck "posixaio: t0017 read its 1 MiB" '
import json, sys
assert json.load(open(sys.argv[1]))["jobs"][0]["read"]["io_bytes"] == 1048576
' out.json
expect_exit 2 "posixaio: atomic=1 is refused (no RWF_ATOMIC through aio_write)" run --name=a \
	--filename=data --size=1m --rw=write --ioengine=posixaio --atomic=1 --direct=1
expect_err_has "glibc's aio_write has no RWF_ATOMIC" "posixaio: the refusal says why"

printf '[j]\nfilename=data\nsize=1m\nioengine=libaio\niodepth=8\niodepth_batch_complete_max=5000\n' >bad.fio
expect_exit 2 "iodepth_batch_complete_max=5000 is refused" "$FAULTLINE" --parse-only bad.fio
expect_err_has "bad.fio:6" "the refusal names its line"
printf '[j]\nfilename=data\nsize=1m\nrw=write\nserialize_overlap=maybe\n' >bad2.fio
expect_exit 2 "serialize_overlap=maybe is refused" "$FAULTLINE" --parse-only bad2.fio
expect_err_has "bad2.fio:5" "serialize_overlap's refusal names its line"
printf '[j]\nfilename=data\nsize=1m\nerror_dump=sometimes\n' >bad3.fio
expect_exit 2 "error_dump=sometimes is refused" "$FAULTLINE" --parse-only bad3.fio
expect_err_has "error_dump=sometimes at bad3.fio:4" "error_dump's refusal names its line"
printf '[j]\nfilename=data\nsize=1m\nrw=write\nserialize_overlap=1\n' >warn.fio
expect_exit 0 "serialize_overlap with psync parses" "$FAULTLINE" --parse-only warn.fio
expect_err_has "serialize_overlap=1 at warn.fio:5 has no effect here" "with psync it says it does nothing"

e2e_done
