#!/usr/bin/env bash
# Tools that read fio's output read faultline's (issue 18, SPEC 7): for
# every engine, every field fio's readers use exists and is a number;
# json+ bins add up to total_ios; fio's log files parse and agree with
# the CSV rows; and, where fio is installed, every key fio 3.33 writes for
# the same job is in faultline's JSON too.
. "$(dirname "$0")/lib.sh"

f=$E2E_TMP/data
mkdata "$f" 32
iv_ms=200

# The fields the issue lists, and the ones fio-plot and its kind read.
check_fields='
import json, sys
d = json.load(open(sys.argv[1]))
engine = sys.argv[2]
def num(x, path):
    assert isinstance(x, (int, float)) and not isinstance(x, bool), "%s is %r" % (path, x)
# fio readers recognise fio JSON by these keys
assert d["fio version"].startswith("faultline-"), d["fio version"]
assert isinstance(d["global options"], dict)
assert d["global options"].get("rw") == "randread", d["global options"]
j = d["jobs"][0]
assert j["error"] == 0
for k in ("usr_cpu", "sys_cpu", "ctx", "majf", "minf", "elapsed", "job_runtime", "eta",
          "latency_depth", "latency_target", "latency_percentile", "latency_window"):
    num(j[k], k)
assert j["usr_cpu"] + j["sys_cpu"] > 0, (j["usr_cpu"], j["sys_cpu"])
for dist in ("iodepth_level", "iodepth_submit", "iodepth_complete"):
    assert len(j[dist]) == 7, j[dist]
    for k, v in j[dist].items():
        num(v, dist + "/" + k)
    # each share is a percentage; fio shows a share under 0.1 as 0.1
    assert 99.9 <= sum(j[dist].values()) <= 100.7, (dist, j[dist])
for unit in ("latency_ns", "latency_us", "latency_ms"):
    for k, v in j[unit].items():
        num(v, unit + "/" + k)
r = j["read"]
for k in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios",
          "iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples",
          "bw_min", "bw_max", "bw_mean", "bw_dev", "bw_agg", "bw_samples"):
    num(r[k], "read/" + k)
for o in ("clat_ns", "slat_ns", "lat_ns"):
    for k in ("min", "max", "mean", "stddev", "N"):
        num(r[o][k], "read/%s/%s" % (o, k))
assert r["total_ios"] > 0 and r["iops_samples"] >= 3, r
assert r["iops_min"] <= r["iops_mean"] <= r["iops_max"], r
assert r["bw_min"] <= r["bw_mean"] <= r["bw_max"], r
assert 0 < r["bw_agg"] <= 100, r["bw_agg"]
# the job ran alone: its interval means are its average rate, roughly
assert abs(r["iops_mean"] - r["iops"]) <= 0.3 * r["iops"] + 10, (r["iops_mean"], r["iops"])
assert r["slat_ns"]["N"] == 0 and r["clat_ns"]["N"] == r["lat_ns"]["N"] == r["total_ios"]
# json+: bins keyed by ns, counts adding up to total_ios
for o in ("clat_ns", "lat_ns"):
    bins = r[o]["bins"]
    assert sum(bins.values()) == r["total_ios"], (o, sum(bins.values()), r["total_ios"])
    lo, hi = min(map(int, bins)), max(map(int, bins))
    assert lo <= r[o]["min"] * 1.01 + 1 and hi >= r[o]["max"] * 0.99 - 1, (lo, hi, r[o])
# a synchronous engine runs at depth 1, an asynchronous one deeper
deep = engine in ("io_uring", "libaio")
assert (j["iodepth_level"]["1"] == 100) != deep, j["iodepth_level"]
'

# fio's logs against the CSV: per thread "time, value, 0, 0, 0"; at each
# entry time the threads add up to the CSV row of that interval.
check_logs='
import csv, glob, json, sys
pre, csvpath, iv, nthreads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def read(kind):
    files = sorted(glob.glob("%s_%s.*.log" % (pre, kind)))
    assert [f.rsplit(".", 2)[1] for f in files] == [str(i + 1) for i in range(nthreads)], files
    by_t = {}
    for f in files:
        for line in open(f):
            cells = [c.strip() for c in line.split(",")]
            assert len(cells) == 5 and cells[2:] == ["0", "0", "0"], line
            t, v = int(cells[0]), int(cells[1])
            by_t.setdefault(t, []).append(v)
    return by_t
bw, iops, lat, clat = read("bw"), read("iops"), read("lat"), read("clat")
assert sorted(bw) == sorted(iops) and lat == clat, (sorted(bw), sorted(iops))
for kind in ("slat",):
    for f in glob.glob("%s_%s.*.log" % (pre, kind)):
        assert open(f).read() == "", f
rows = [r for r in csv.DictReader(open(csvpath)) if r["ramp"] == "0"]
# the job'"'"'s last interval, cut short when it ended, has no rate entry
if float(rows[-1]["dt_s"]) * 1000 < 0.9 * iv:
    rows.pop()
rows = [r for r in rows if float(r["iops"]) > 0]
times = sorted(bw)
assert len(times) == len(rows), (len(times), len(rows), times)
# the first entry ends the first interval of the measured part
assert abs(times[0] - iv) <= iv / 2, times
for i, (t, row) in enumerate(zip(times, rows)):
    # entries are the CSV intervals: the same steps between them
    if i:
        step = (float(row["t_s"]) - float(rows[i - 1]["t_s"])) * 1000
        assert abs((t - times[i - 1]) - step) <= 2, (t, times[i - 1], step)
    # each thread truncates its own rate; the CSV rounds to 0.1 IOPS and
    # 0.001 MiB/s
    assert abs(sum(iops[t]) - float(row["iops"])) <= nthreads + 0.1, (t, iops[t], row["iops"])
    assert abs(sum(bw[t]) - float(row["mib_s"]) * 1024) <= nthreads + 0.6, (t, bw[t], row["mib_s"])
    assert all(v > 0 for v in lat.get(t, [1])), lat.get(t)
'

job() { # engine extra-options...
	local e=$1
	shift
	cat <<EOF
[global]
filename=$f
rw=randread
bs=4k
runtime=1
time_based
[$e]
ioengine=$e
$(printf '%s\n' "$@")
EOF
}

for e in mmap psync io_uring libaio null; do
	case $e in
	io_uring | libaio) extra=(iodepth=16 direct=1) ;;
	null) extra=(size=32m) ;;
	*) extra=() ;;
	esac
	job "$e" "${extra[@]}" numjobs=2 write_bw_log="$E2E_TMP/$e" write_iops_log="$E2E_TMP/$e" \
		write_lat_log="$E2E_TMP/$e" log_avg_msec=$iv_ms >"$E2E_TMP/$e.fio"
	expect_exit 0 "$e: fio job with fio's log options runs" "$FAULTLINE" --quiet \
		--interval=${iv_ms}ms --output-format=json+ --output="$E2E_TMP/$e.json" \
		--csv="$E2E_TMP/$e.csv" "$E2E_TMP/$e.fio"
	pycheck "$e: every fio field is there and a number; bins add up to total_ios" \
		"$check_fields" "$E2E_TMP/$e.json" "$e"
	pycheck "$e: fio logs parse and agree with the CSV rows" \
		"$check_logs" "$E2E_TMP/$e" "$E2E_TMP/$e.csv" "$iv_ms" 2

	# fio's own JSON of the same job file: every key it writes for a job
	# is in faultline's ("sync", fio's flush statistics, arrives with
	# faultline's writes).
	if command -v fio >/dev/null; then
		job "$e" "${extra[@]}" >"$E2E_TMP/$e-ref.fio"
		if fio --output-format=json+ --output="$E2E_TMP/$e-fio.json" "$E2E_TMP/$e-ref.fio" \
			>/dev/null 2>"$E2E_TMP/fio.err"; then
			pycheck "$e: fio's job keys are a subset of faultline's" '
import json, sys
fio, fl = (json.load(open(p)) for p in sys.argv[1:3])
absent = {"sync"}
def keys(x, path=""):
    out = set()
    for k, v in x.items():
        if path.endswith("percentile") or path.endswith("bins") or k in absent:
            continue
        out.add(path + "/" + k)
        if isinstance(v, dict):
            out |= keys(v, path + "/" + k)
    return out
missing = sorted(keys(fio["jobs"][0]) - keys(fl["jobs"][0]))
missing += sorted(set(fio) - set(fl))
assert not missing, missing
' "$E2E_TMP/$e-fio.json" "$E2E_TMP/$e.json"
		else
			echo "skip - $e: fio could not run the job here ($(head -c 200 "$E2E_TMP/fio.err"))"
		fi
	else
		echo "skip - fio not installed: no comparison with fio's own JSON"
	fi
done

# The issue's case: io_uring at iodepth 1, 4 and 16, read as a fio
# charting tool reads them: recognised by its keys, options merged with
# the global ones, rw/iodepth/numjobs/bs and the figures it draws.
for d in 1 4 16; do
	expect_exit 0 "io_uring iodepth=$d runs" "$FAULTLINE" --quiet --interval=${iv_ms}ms \
		--rw=randread --bs=4k --name=u$d --filename="$f" --ioengine=io_uring --iodepth=$d \
		--runtime=600ms --time_based --output-format=json --output="$E2E_TMP/u$d.json"
done
pycheck "iodepth 1, 4, 16: what a fio charting tool reads" '
import json, sys
for path, depth in zip(sys.argv[1:], (1, 4, 16)):
    d = json.load(open(path))
    assert sum(k in d for k in ("fio version", "global options", "client_stats", "jobs")) >= 2
    for j in d["jobs"]:
        o = dict(j["job options"], **d["global options"])
        assert (o["rw"], int(o["iodepth"]), int(o["numjobs"]), o["bs"]) == ("randread", depth, 1, "4k"), o
        r = j["read"]
        for v in (r["bw"], r["iops"], r["iops_stddev"], r["lat_ns"]["mean"], r["lat_ns"]["stddev"],
                  j["usr_cpu"], j["sys_cpu"]):
            assert isinstance(v, (int, float)), v
        for u in ("latency_ms", "latency_us", "latency_ns"):
            assert all(isinstance(v, (int, float)) for v in j[u].values()), j[u]
        level = j["iodepth_level"]
        want = {1: "1", 4: "4", 16: "16"}[depth]
        assert level[want] == max(level.values()), (depth, level)
' "$E2E_TMP/u1.json" "$E2E_TMP/u4.json" "$E2E_TMP/u16.json"

# per_job_logs=0 and a bare key: one file named after the job (in the
# current directory, as fio), both threads in it; log_offset=1 adds the
# offset column.
expect_exit 0 "per_job_logs=0, bare write_iops_log, log_offset=1" env -C "$E2E_TMP" "$FAULTLINE" \
	--quiet --interval=${iv_ms}ms --name=shared --filename="$f" --rw=randread --numjobs=2 \
	--runtime=600ms --time_based --write_iops_log --per_job_logs=0 --log_offset=1 \
	--output=/dev/null
pycheck "one file for both threads, six columns" '
import glob, sys
pre = sys.argv[1]
assert glob.glob(pre + "_iops.*.log") == [], glob.glob(pre + "_iops.*.log")
lines = [l.split(", ") for l in open(pre + "_iops.log")]
assert lines and all(len(c) == 6 and c[2:] == ["0", "0", "0", "0\n"] for c in lines), lines
times = [int(c[0]) for c in lines]
assert all(times.count(t) == 2 for t in times), times
' "$E2E_TMP/shared"

# log_avg_msec=0 (fio: every I/O) runs, with a warning that says what it gets.
expect_exit 0 "log_avg_msec=0 runs" "$FAULTLINE" --quiet --interval=${iv_ms}ms --name=z \
	--filename="$f" --runtime=300ms --time_based --write_bw_log="$E2E_TMP/z" --output=/dev/null
expect_err_has "never logs each I/O" "log_avg_msec=0 says entries average an interval"

# A log in a directory that does not exist: exit 2, nothing run.
expect_exit 2 "a log prefix in a missing directory is refused" "$FAULTLINE" --quiet --name=b \
	--filename="$f" --runtime=300ms --write_bw_log="$E2E_TMP/no/such/dir/b" --output=/dev/null
expect_err_has "no/such/dir/b_bw.1.log" "names the log file"

e2e_done
