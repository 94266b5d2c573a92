#!/usr/bin/env bash
# fio as its users run it, side by side with fio itself (a Debian
# package the build installs): the bytes a job moves with mixed request
# sizes, bssplit refused where its shares cannot be meant, options on the
# command line beside a job file, --section, and "job options" listing
# only what a job set.
. "$(dirname "$0")/lib.sh"

T=$E2E_TMP
have_fio=false
command -v fio >/dev/null && have_fio=true

# The bytes and requests of jobs[0] in a fio-format JSON, "bytes ios".
moved() {
	"$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"] + j["write"]["io_bytes"], j["read"]["total_ios"] + j["write"]["total_ios"])' "$1"
}

# ---- bytes: a pass moves exactly size, as fio's ------------------------

# fio's random map cuts a random request at a block the pass already did,
# and a sequential one is drawn again until it fits: either way a job of
# size=S moves exactly S bytes. Request counts differ (the draws do).
n=0
for shape in "--bssplit=4k/75:64k/25" "--bsrange=4k-64k" "--bssplit=4k/50:8k/20:128k/30" \
	"--bsrange=512-60k"; do
	for rw in read randread randwrite randrw; do
		for size in 64m 10000k; do
			n=$((n + 1))
			args=(--name=b --ioengine=null --rw=$rw $shape --size=$size)
			"$FAULTLINE" --quiet "${args[@]}" --output-format=json --output="$T/b$n.json" \
				2>"$T/err" || { fail "$rw $shape size=$size runs" "$(head -3 "$T/err")"; continue; }
			got=$(moved "$T/b$n.json")
			want=$(( $(numfmt --from=iec "${size^^}") ))
			if $have_fio; then
				fio "${args[@]}" --output-format=json --output="$T/f$n.json" >/dev/null 2>&1 &&
					want=$(moved "$T/f$n.json" | cut -d' ' -f1)
			fi
			[ "${got%% *}" = "$want" ] && pass "$rw $shape size=$size: ${got%% *} bytes, as fio" ||
				fail "$rw $shape size=$size: $got bytes and requests, fio $want bytes"
		done
	done
done

# number_ios counts requests, as fio's; io_size (fio's too) is passed by
# less than one request: fio stops issuing once it reached it.
"$FAULTLINE" --quiet --name=n --ioengine=null --rw=randread --bssplit=4k/75:64k/25 --size=64m \
	--number_ios=1000 --output-format=json --output="$T/nios.json"
[ "$(moved "$T/nios.json" | cut -d' ' -f2)" = 1000 ] && pass "number_ios=1000: 1000 requests" ||
	fail "number_ios=1000: 1000 requests" "$(moved "$T/nios.json")"
for rw in read randread; do
	"$FAULTLINE" --quiet --name=i --ioengine=null --rw=$rw --bssplit=4k/75:64k/25 --size=64m \
		--io_size=10000k --output-format=json --output="$T/io-$rw.json"
	b=$(moved "$T/io-$rw.json" | cut -d' ' -f1)
	[ "$b" -ge 10240000 ] && [ "$b" -lt $((10240000 + 65536)) ] &&
		pass "$rw io_size=10000k: $b bytes, past it by less than the largest request" ||
		fail "$rw io_size=10000k: $b bytes"
done

# ---- bssplit refused where fio would run a slip ------------------------

bad() { # name value text
	printf '[j]\nioengine=null\nsize=1m\nrw=randread\n\nbssplit=%s\n' "$2" >"$T/bad.fio"
	expect_exit 2 "bssplit=$2 refused ($1)" "$FAULTLINE" --parse-only "$T/bad.fio"
	expect_err_has "bssplit=$2 at $T/bad.fio:6: $3" "bssplit=$2: names the option, file:line and why"
}
bad "over 100 %" "4k/60:8k/60" "the shares add up to more than 100%"
bad "over 100 % in the writes' set" "4k/50,4k/60:8k/60" "the shares add up to more than 100%"
bad "one share over 100" "4k/150" "the shares add up to more than 100%"
bad "two missing over 100, fio's own refusal" "4k/60:8k/50:16k:32k" "the shares add up to more than 100%"
bad "an empty entry" "4k/50::8k/50" "an empty entry"
bad "no entry at all" ":" "an empty entry"
bad "a size of 0" "0/50:4k/50" "'0': a size of 1 to 1g"
bad "a size of 0 for writes" "4k,0k/100" "'0k': a size of 1 to 1g"
expect_exit 2 "bssplit= (empty) refused" "$FAULTLINE" --parse-only --name=j --ioengine=null --bssplit=
expect_err_has "bssplit" "bssplit=: names the option"
expect_exit 0 "bssplit=4k/60:8k/40:16k (the rest to 16k) accepted" "$FAULTLINE" --parse-only \
	--name=j --ioengine=null --bssplit=4k/60:8k/40:16k
expect_exit 0 "bssplit=4k/50:8k/50, (reads only) accepted" "$FAULTLINE" --parse-only \
	--name=j --ioengine=null --bssplit=4k/50:8k/50,

e2e_done
