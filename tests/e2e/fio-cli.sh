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

# io_size a whole number of passes (equal to size, or twice it): fio's
# random map ends every pass on the region's bytes, so fio moves io_size
# exactly; so does faultline.
for rw in randread randrw; do
	for sz in "--size=64m --io_size=64m" "--size=32m --io_size=64m"; do
		n=$((n + 1))
		args=(--name=b --ioengine=null --rw=$rw --bssplit=4k/75:64k/25 $sz)
		"$FAULTLINE" --quiet "${args[@]}" --output-format=json --output="$T/b$n.json"
		want=67108864
		$have_fio && fio "${args[@]}" --output-format=json --output="$T/f$n.json" >/dev/null 2>&1 &&
			want=$(moved "$T/f$n.json" | cut -d' ' -f1)
		got=$(moved "$T/b$n.json" | cut -d' ' -f1)
		[ "$got" = "$want" ] && pass "$rw $sz: $got bytes, as fio" ||
			fail "$rw $sz: $got bytes, fio $want"
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

# ---- the command line beside a job file ------------------------------

cat >"$T/p1.fio" <<'EOF'
[global]
ioengine=null
bs=8k
size=1m

[a]
rw=read
iodepth=4

[b]
rw=randread
bs=16k

[global]
bs=32k

[c]
rw=read
EOF
printf '[d]\nioengine=null\nsize=1m\nrw=read\n' >"$T/p2.fio"

# Each job's name, request size, bytes, and its "job options", then the
# run's "global options": what fio and faultline must agree on.
cat >"$T/jobs.py" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    r = j["read"]
    print(j["jobname"], r["io_bytes"] // max(1, r["total_ios"]), r["io_bytes"], sorted(j.get("job options", {}).items()))
print("global", sorted(d.get("global options", {}).items()))
EOF
side() { # name args...: the same command under fio and faultline
	local name=$1 tag=$2
	shift 2
	if ! "$FAULTLINE" --quiet --output-format=json --output="$T/$tag-fl.json" "$@" 2>"$T/err"; then
		fail "$name: faultline runs it" "$(head -3 "$T/err")"
		return
	fi
	if ! $have_fio; then
		echo "skip - $name: fio not installed, no side-by-side comparison"
		return
	fi
	fio --output-format=json --output="$T/$tag-fio.json" "$@" >/dev/null 2>&1 ||
		{ fail "$name: fio runs it"; return; }
	if diff <("$PY" "$T/jobs.py" "$T/$tag-fio.json") <("$PY" "$T/jobs.py" "$T/$tag-fl.json") \
		>"$T/diff"; then
		pass "$name: the same jobs, sizes, bytes, job and global options as fio's"
	else
		fail "$name: the same jobs, sizes, bytes, job and global options as fio's" \
			"$(head -c 1500 "$T/diff")"
	fi
}
# The command line's bs and size beneath the file's [global] and jobs.
side "--bs=64k --size=2m p1.fio" prec --bs=64k --size=2m "$T/p1.fio"
side "an option after the file name" after "$T/p2.fio" --bs=64k
side "--section=b --section=c" sect --section=b --section=c --bs=64k "$T/p1.fio"
side "a command-line job beside a file" clijob --bs=64k "$T/p2.fio" --name=z --ioengine=null \
	--size=1m --rw=read
# Two files: fio separates them by a stonewall (the second file's first
# job starts a group). The command line's bs reaches both here; fio 3.33
# applies it to the first file only (the man page says so).
"$FAULTLINE" --quiet --output-format=json --output="$T/two-fl.json" --bs=64k "$T/p1.fio" "$T/p2.fio"
pycheck "two job files: the second starts a new group, as fio's; --bs reaches both" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [(j["jobname"], j["groupid"]) for j in d["jobs"]] == [("a", 0), ("b", 0), ("c", 0), ("d", 1)], d["jobs"]
assert d["jobs"][3]["faultline"]["options"]["bs"] == "64k"
' "$T/two-fl.json"
pycheck "precedence: job over the file's [global] over the command line over the default" '
import json, sys
d = json.load(open(sys.argv[1]))
bs = {j["jobname"]: j["faultline"]["options"]["bs"] for j in d["jobs"]}
size = {j["jobname"]: j["faultline"]["options"]["size"] for j in d["jobs"]}
assert bs == {"a": "8k", "b": "16k", "c": "32k"}, bs
assert size == {"a": "1m", "b": "1m", "c": "1m"}, size
' "$T/prec-fl.json"
pycheck "a command-line job runs first and lists its name, as fio's" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [j["jobname"] for j in d["jobs"]] == ["z", "d"], d["jobs"]
assert d["jobs"][0]["job options"]["name"] == "z" and d["jobs"][1]["faultline"]["options"]["bs"] == "64k"
' "$T/clijob-fl.json"

# The issue's case: a file with no runtime of its own, timed from the
# command line (null engine, 1 TiB: without --runtime it would run for
# hours). The lower bound is the schedule's; the upper one (timeout's
# 60 s, not a guess at the host's speed) only says the run stopped.
printf '[t]\nioengine=null\nsize=1t\nrw=read\n' >"$T/t.fio"
expect_exit 0 "--runtime=1 --time_based t.fio runs" timeout 60 "$FAULTLINE" --quiet --runtime=1 \
	--time_based "$T/t.fio" --output-format=json --output="$T/t.json"
pycheck "--runtime=1 --time_based t.fio: the job ran 1 s and stopped" '
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
assert 1000 <= j["read"]["runtime"] < 60000, j["read"]["runtime"]
assert d["global options"] == {"runtime": "1"}, d["global options"]
assert j["job options"] == {"ioengine": "null", "size": "1t", "rw": "read"}, j["job options"]
' "$T/t.json"

expect_exit 2 "--section naming no job" "$FAULTLINE" --parse-only --section=nope "$T/p1.fio"
expect_err_has "--section=nope: no job of that name" "--section=nope: says no job has the name"
expect_exit 2 "--section without a name" "$FAULTLINE" --parse-only --section "$T/p1.fio"
expect_exit 2 "a bad command-line global beside a file" "$FAULTLINE" --parse-only --numjobs=0 \
	"$T/p2.fio"
expect_err_has "numjobs=0 at command line:1" "names the command line's argument, not the file"
expect_exit 2 "options without a --name and without a file" "$FAULTLINE" --parse-only --bs=4k
expect_err_has "no --name=NAME" "says a job needs --name"

# ---- job options: what the job set, nothing else -------------------------

printf '[global]\nioengine=null\nsize=4m\n\n[j]\nrw=randread\nblocksize=8k\n' >"$T/o.fio"
expect_exit 0 "a job of rw and blocksize runs" "$FAULTLINE" --quiet "$T/o.fio" \
	--output-format=json --output="$T/o.json"
pycheck "job options list rw (and bs for blocksize) but no option the job never set" '
import json, sys
d = json.load(open(sys.argv[1]))
o = d["jobs"][0]["job options"]
assert o == {"rw": "randread", "bs": "8k"}, o
for never in ("steadystate", "zonemode", "iodepth", "numjobs", "ioengine"):
    assert never not in o, (never, o)
assert d["global options"] == {"ioengine": "null", "size": "4m"}, d["global options"]
r = d["jobs"][0]["faultline"]["options"]
assert r["iodepth"] == "1" and r["zonemode"] == "none" and r["bs"] == "8k", r
' "$T/o.json"

e2e_done
