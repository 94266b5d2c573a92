#!/usr/bin/env bash
# fio's filecreate engine (its t0035's first job): each request creates
# one of the job's files (scratch names numjobs x nrfiles, or filename='s
# list) and its latency is the create; one pass creates each once.
. "$(dirname "$0")/lib.sh"

cd "$E2E_TMP" || exit 1
run() { "$FAULTLINE" --quiet --output-format=json --output=out.json --csv=out.csv "$@"; }

mkdir d
expect_exit 0 "filecreate: 2 threads x 50 scratch files" run --name=fc --ioengine=filecreate \
	--directory=d --nrfiles=50 --numjobs=2 --rw=write
n=$(find d -type f -name 'fc.*.*' | wc -l)
[ "$n" = 100 ] && [ -e d/fc.1.49 ] && [ ! -s d/fc.0.0 ] &&
	pass "filecreate: fc.0.0 .. fc.1.49, empty, 100 files" || fail "filecreate: 100 empty files" "$n files"
pycheck "filecreate: 100 requests, each a create with its latency" '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
w = j["write"]
assert w["total_ios"] == 100, w["total_ios"]
assert w["lat_ns"]["N"] == 100 and w["lat_ns"]["min"] > 0, w["lat_ns"]
assert j["read"]["total_ios"] == 0
' out.json
printf 'x' >keep
expect_exit 0 "filecreate: a filename list, one existing" run --name=fl --ioengine=filecreate \
	--filename=a:b:keep --rw=read
pycheck "filecreate: 3 creates; the existing file kept as it was" '
import json, sys
assert json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"] == 3
assert open(sys.argv[2]).read() == "x"
' out.json keep
[ -e a ] && [ -e b ] && pass "filecreate: a and b created" || fail "filecreate: a and b created"

printf '[j]\nioengine=filecreate\nnrfiles=4\ndirectory=d\nloop=2\n' >bad.fio
expect_exit 2 "filecreate with loop= is refused" "$FAULTLINE" --parse-only bad.fio
expect_err_has "ioengine=filecreate at bad.fio:2 with loop=" "the refusal names its line"
expect_exit 2 "filecreate with verify is refused" "$FAULTLINE" --parse-only --name=v \
	--ioengine=filecreate --nrfiles=2 --directory=d --rw=write --verify=md5
expect_err_has "ioengine=filecreate" "verify's refusal names the engine"

e2e_done
