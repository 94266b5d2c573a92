#!/usr/bin/env bash
# Bad input exits 2 with a message naming the problem, and runs nothing.
# (Parser cases are unit-tested one by one in test_jobfile.c; these are the
# ones that need the binary, real targets, or the command line.)
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 4
job() { printf '%s\n' "$@" >"$E2E_TMP/bad.job"; }

job "[j]" "filename=$f" "iodpeth=4"
expect_exit 2 "misspelt option" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "did you mean 'iodepth'" "did-you-mean"
expect_err_has "bad.job:3" "message names file and line"

job "[j]" "filename=$f" "verify_interval=512"
expect_exit 2 "fio option faultline lacks" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "fio option" "says it is an fio option"

job "[j]" "filename=$E2E_TMP"
expect_exit 2 "directory as target" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "directory" "says directory"

job "[j]" "filename=$E2E_TMP/missing"
expect_exit 2 "missing target without size" "$FAULTLINE" "$E2E_TMP/bad.job"
[ ! -e "$E2E_TMP/missing" ] && pass "nothing created" || fail "nothing created"

job "[j]" "filename=$f" "ioengine=mmap" "direct=1"
expect_exit 2 "direct=1 with mmap" "$FAULTLINE" "$E2E_TMP/bad.job"

job "[j]" "filename=$f" "direct=1" "bs=1000"
expect_exit 2 "direct=1 with unaligned bs" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "1000" "names the value"

job "[j]" "filename=$f" "direct=1" "offset=100"
expect_exit 2 "direct=1 with unaligned offset" "$FAULTLINE" "$E2E_TMP/bad.job"

job "[j]" "filename=$f" "rw=randread" "bssplit=4k/60:8k/60"
expect_exit 2 "bssplit over 100 %" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "bssplit=4k/60:8k/60 at $E2E_TMP/bad.job:4: the shares add up to more than 100%" \
	"bssplit over 100 %: names the option, file:line and why"
job "[j]" "filename=$f" "rw=randread" "bssplit=4k/50::8k/50"
expect_exit 2 "bssplit with an empty entry" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "bad.job:4" "bssplit's empty entry: names the line"

job "[j]" "filename=$f" "bs=0"
expect_exit 2 "bs=0" "$FAULTLINE" "$E2E_TMP/bad.job"
job "[j]" "filename=$f" "iodepth=0"
expect_exit 2 "iodepth=0" "$FAULTLINE" "$E2E_TMP/bad.job"
job "[j]" "filename=$f" "numjobs=0"
expect_exit 2 "numjobs=0" "$FAULTLINE" "$E2E_TMP/bad.job"
job "[j"
expect_exit 2 "unterminated section" "$FAULTLINE" "$E2E_TMP/bad.job"
job "[j]" "filename=\${FAULTLINE_UNDEFINED_VAR}"
expect_exit 2 "undefined \${VAR}" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_err_has "FAULTLINE_UNDEFINED_VAR" "names the variable"
: >"$E2E_TMP/bad.job"
expect_exit 2 "empty job file" "$FAULTLINE" "$E2E_TMP/bad.job"
expect_exit 2 "missing job file" "$FAULTLINE" "$E2E_TMP/nope.job"
expect_exit 2 "bad size suffix on the command line" "$FAULTLINE" --name=x --filename="$f" --size=12q
expect_exit 2 "--interval below 100ms" "$FAULTLINE" --interval=10ms --name=x --filename="$f"
expect_exit 2 "unknown faultline option" "$FAULTLINE" -z
expect_exit 2 "--output-format=xml" "$FAULTLINE" --output-format=xml --name=x --filename="$f"
expect_exit 2 "--output into a missing directory" "$FAULTLINE" --output="$E2E_TMP/no/dir/out" --name=x --filename="$f"

# Without read permission (as an unprivileged user; root reads anything).
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 600 "$f"
	chmod 755 "$E2E_TMP"
	expect_exit 2 "target without read permission" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$FAULTLINE" --name=x --filename="$f"
	expect_err_has "Permission denied" "says permission denied"
	chmod 644 "$f"
fi

# More scratch files than a request can name (each worker has nrfiles
# of its own): refused before any is made, never one worker's files
# aliasing another's.
expect_exit 2 "numjobs times nrfiles past 65536 targets" "$FAULTLINE" --name=x \
	--directory="$E2E_TMP" --numjobs=2 --nrfiles=40000 --filesize=4k --rw=write
expect_err_has "numjobs=2 at command line" "names numjobs"
expect_err_has "nrfiles=40000 at command line" "names nrfiles"
[ -z "$(find "$E2E_TMP" -name 'x.*' -print -quit)" ] && pass "no scratch file made" ||
	fail "no scratch file made" "$(find "$E2E_TMP" -name 'x.*' | head -3)"
expect_exit 0 "numjobs times nrfiles at 65536: accepted" "$FAULTLINE" --parse-only --name=x \
	--directory="$E2E_TMP" --numjobs=2 --nrfiles=32768 --filesize=4k --rw=write

# A block device: offset+size past its end (loop device over a 4 MiB file).
if [ "$(id -u)" = 0 ] && loop_attach loop "$f"; then
	expect_exit 2 "offset+size past a block device's end" "$FAULTLINE" --name=x --filename="$loop" \
		--offset=2m --size=4m
	expect_err_has "$loop" "names the device"
	expect_exit 0 "block device read" "$FAULTLINE" --quiet --name=x --filename="$loop" --rw=read --bs=64k
	loop_detach "$loop"
fi

e2e_done
