#!/usr/bin/env bash
# Resource limits either work or fail with a clear message: thousands of
# jobs, numjobs=1024, iodepth=4096, a 1-byte file, a file larger than the
# address space the process may map.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 16

{ printf '[global]\nioengine=null\nsize=1m\n'; for i in $(seq 1 2000); do printf '[j%d]\n' "$i"; done; } >"$E2E_TMP/many.job"
expect_exit 0 "2000 jobs" "$FAULTLINE" --quiet --output-format=json --output="$E2E_TMP/many.json" "$E2E_TMP/many.job"
pycheck "2000 jobs all reported" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"]
assert len(j) == 2000 and all(x["read"]["total_ios"] == 256 for x in j)
' "$E2E_TMP/many.json"
# Each job's kernel counters (tests/e2e/events.sh) hold ~20 descriptors:
# where tracefs is mounted and the hard RLIMIT_NOFILE is low, 2000
# concurrent jobs do not all get them, which is said once, truthfully;
# and at this many jobs each job's are read over one interval in N, to
# keep a sample's cost, which is said once too; so are its threads'
# fault counters and CPU clocks.
grep -v -e "per-job kernel counters not opened for" -e "per-job kernel counters of [0-9]* jobs: each job's are read over one interval in" \
	-e "per-thread fault counters of [0-9]* threads: each job's are read over one interval in" \
	-e "per-thread CPU time of [0-9]* threads: each job's is read over one interval in" \
	"$E2E_TMP/err" >"$E2E_TMP/err.other"
[ -s "$E2E_TMP/err.other" ] && fail "2000 jobs: no warnings" "$(head -3 "$E2E_TMP/err.other")" || pass "2000 jobs: no warnings"

expect_exit 0 "numjobs=1024" "$FAULTLINE" --quiet --name=n --filename="$f" --rw=randread --numjobs=1024 \
	--runtime=500ms --time_based --output=/dev/null
expect_exit 0 "iodepth=4096 (io_uring)" "$FAULTLINE" --quiet --name=d --filename="$f" --rw=randread \
	--ioengine=io_uring --iodepth=4096 --runtime=500ms --time_based --output=/dev/null
expect_exit 2 "iodepth=4097 is refused" "$FAULTLINE" --name=d --filename="$f" --ioengine=io_uring --iodepth=4097

printf x >"$E2E_TMP/one"
expect_exit 2 "a 1-byte file with bs=4k" "$FAULTLINE" --name=o --filename="$E2E_TMP/one"
expect_err_has "smaller than bs" "says the region is smaller than bs"
expect_exit 0 "a 1-byte file with bs=1" "$FAULTLINE" --quiet --name=o --filename="$E2E_TMP/one" --bs=1 --output=/dev/null

# The address space limited below the file's size: mmap cannot map it.
# (Not under AddressSanitizer, which reserves terabytes of shadow memory
# and cannot start under any such limit.)
if [ -z "${ASAN_OPTIONS:-}" ]; then
	(
		ulimit -v 200000
		"$FAULTLINE" --quiet --name=big --filename="$E2E_TMP/big" --size=256m --ioengine=mmap --runtime=200ms \
			--time_based --output=/dev/null 2>"$E2E_TMP/big.err"
		echo $? >"$E2E_TMP/big.rc"
	)
	[ "$(cat "$E2E_TMP/big.rc")" = 1 ] && grep -q "ulimit -v" "$E2E_TMP/big.err" &&
		pass "mmap beyond the address-space limit: exit 1, says why" ||
		fail "mmap beyond the address-space limit" "exit $(cat "$E2E_TMP/big.rc")" "$(cat "$E2E_TMP/big.err")"
fi

e2e_done
