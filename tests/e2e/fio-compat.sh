#!/usr/bin/env bash
# fio job files written the way fio users write them run unchanged and
# report fio-shaped JSON; an fio feature faultline lacks is refused with
# exit 2, naming the option and saying it is fio's.
. "$(dirname "$0")/lib.sh"

dir=$(cd "$(dirname "$0")/../jobfiles/fio" && pwd)
export FILE=$E2E_TMP/data
mkdata "$FILE" 32

for j in libaio-direct aliases keywords null seq-then-rand uring-deep; do
	expect_exit 0 "$j.fio runs unchanged" "$FAULTLINE" --quiet --output-format=json \
		--output="$E2E_TMP/$j.json" "$dir/$j.fio"
	pycheck "$j.fio: fio-shaped JSON with I/O in every job" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["jobs"], d
for j in d["jobs"]:
    assert j["error"] == 0, j
    r = j["read"]
    assert r["total_ios"] > 0 and r["iops"] > 0 and r["io_kbytes"] > 0 and r["runtime"] > 0, r
    assert "jobname" in j
' "$E2E_TMP/$j.json"
done
pycheck "uring-deep.fio: a job whose section sets nothing has no job options, as fio's" '
import json, sys
d = json.load(open(sys.argv[1]))
assert "job options" not in d["jobs"][0], d["jobs"][0]["job options"]
assert d["global options"]["iodepth"] == "128" and d["global options"]["filename"], d["global options"]
' "$E2E_TMP/uring-deep.json"

pycheck "aliases resolved: readwrite, blocksize, timeout, sync" '
import json, sys
o = json.load(open(sys.argv[1]))["jobs"][0]["faultline"]["options"]
assert (o["rw"], o["bs"], o["ioengine"]) == ("randread", "8k", "psync"), o
' "$E2E_TMP/aliases.json"
pycheck "keywords: bs=\$pagesize, numjobs=\$ncpus, size=(8*1024*1024)" '
import json, os, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
o = j["faultline"]["options"]
assert o["bs"] in ("4k", "4096") and int(o["numjobs"]) == os.cpu_count() and o["size"] in ("8m", "8388608"), o
' "$E2E_TMP/keywords.json"
pycheck "buffered=0 means direct=1; gtod_reduce turns latency off" '
import json, sys
a = json.load(open(sys.argv[1]))["jobs"][0]
assert a["faultline"]["options"]["direct"] == "1", a["faultline"]["options"]
n = json.load(open(sys.argv[2]))["jobs"][0]
assert n["faultline"]["options"]["latency"] == "0" and n["read"]["lat_ns"]["N"] == 0, n["read"]["lat_ns"]
' "$E2E_TMP/libaio-direct.json" "$E2E_TMP/null.json"
pycheck "stonewall: the random job starts after the sequential one" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [j["jobname"] for j in d["jobs"]] == ["seq", "rand"] and d["jobs"][1]["groupid"] == 1, d["jobs"]
' "$E2E_TMP/seq-then-rand.json"

expect_exit 0 "--parse-only shows the fio no-ops" "$FAULTLINE" --parse-only "$dir/aliases.fio"
if grep -q "^; accepted, no effect here: randrepeat$" "$E2E_TMP/out"; then
	pass "no-op fio options are listed as having no effect"
else
	fail "no-op fio options are listed as having no effect" "$(cat "$E2E_TMP/out")"
fi
# fio's bare thread is thread=1, an option with an effect (workers are
# threads), not a no-op.
if grep -q "^thread=1$" "$E2E_TMP/out"; then
	pass "fio's bare thread resolves to thread=1"
else
	fail "fio's bare thread resolves to thread=1" "$(cat "$E2E_TMP/out")"
fi

expect_exit 2 "verify=null is refused" "$FAULTLINE" "$dir/verify.fio"
expect_err_has "verify" "names the option"
expect_err_has "fio option" "says it is an fio option faultline does not support"
expect_err_has "verify.fio:7" "names the line"

e2e_done
