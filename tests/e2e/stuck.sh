#!/usr/bin/env bash
# A run that does not stop by itself still ends. A buffer pool asked to
# hold one read longer than it is refuses the job or serves the read,
# never waits for ever; and a job whose workers do not stop after
# SIGTERM is given up after the grace period: named as stuck, its worker
# processes killed, the outputs whole, exit 1.
. "$(dirname "$0")/lib.sh"

data=$E2E_TMP/data
mkdata "$data" 1

# One 128 KiB read, twice the pool of 64 KiB (32 pages of 4 KiB).
log=$E2E_TMP/span.log
printf 'fio version 2 iolog\n%s add\n%s open\n%s read 0 131072\n%s close\n' \
	"$data" "$data" "$data" "$data" >"$log"

# vmcache latches a read's pages at once: refused up front, naming the
# log's line and pool_size (before: a livelock that SIGTERM did not end).
expect_exit 2 "vmcache: a read longer than pool_size is refused" \
	timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
	--pool_size=64k
expect_err_has "span.log:4 reads 32 pages" "vmcache: names the log's line and the read's pages"
expect_err_has "pool_size=65536 holds 16" "vmcache: names pool_size"
# Each of numjobs threads may hold such a read at once.
expect_exit 2 "vmcache: numjobs=2 needs room for two such reads" \
	timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
	--pool_size=132k --numjobs=2
expect_err_has "numjobs=2 threads each holding such a read" "vmcache: the refusal names numjobs"
for nj in 1 2; do
	expect_exit 0 "vmcache: numjobs=$nj with room for its reads: served" \
		timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=vmcache \
		--pool_size=$((nj * 132))k --numjobs=$nj --output-format=json --output="$E2E_TMP/vm$nj.json"
done
pycheck "vmcache: every replayed read served whole" '
import json, sys
for n, path in ((1, sys.argv[1]), (2, sys.argv[2])):
    j = json.load(open(path))["jobs"][0]
    assert j["error"] == 0 and j["read"]["io_bytes"] == 131072 * n, (n, j["read"]["io_bytes"])
' "$E2E_TMP/vm1.json" "$E2E_TMP/vm2.json"

# bufpool copies a long read out page by page, one pin at a time: served
# with any pool of two pages a thread.
for nj in 1 2; do
	expect_exit 0 "bufpool: numjobs=$nj, a read twice pool_size: served" \
		timeout -k 5 60 "$FAULTLINE" --quiet --name=span --read_iolog="$log" --ioengine=bufpool \
		--pool_size=64k --numjobs=$nj --output-format=json --output="$E2E_TMP/bp$nj.json"
done
pycheck "bufpool: every replayed read served whole" '
import json, sys
for n, path in ((1, sys.argv[1]), (2, sys.argv[2])):
    j = json.load(open(path))["jobs"][0]
    assert j["error"] == 0 and j["read"]["io_bytes"] == 131072 * n, (n, j["read"]["io_bytes"])
' "$E2E_TMP/bp1.json" "$E2E_TMP/bp2.json"

e2e_done
