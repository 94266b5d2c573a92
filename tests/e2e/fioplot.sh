#!/usr/bin/env bash
# fio-plot, the charting tool fio's users draw fio's JSON with, draws
# faultline's: its 2D (-l, IOPS and latency per queue depth) and 3D (-L)
# charts from three runs at iodepth 1, 4 and 16, in bench-fio's layout.
# fio-plot reads each job's "job options" merged with "global options"
# for rw, bs, iodepth and numjobs, and takes a listed steadystate for a
# steady-state run (KeyError: 'steadystate' when faultline listed every
# option with its default).
#
# fio-plot comes from PyPI, pinned, into this suite's own venv on
# Debian's Python (python3-venv), whose numpy and matplotlib it uses
# (--system-site-packages): PATH's python3 may be a private build.
. "$(dirname "$0")/lib.sh"

FIO_PLOT=fio-plot==1.1.21
T=$E2E_TMP
venv=$T/venv

if ! /usr/bin/python3 -m venv --system-site-packages "$venv" >"$T/venv.log" 2>&1; then
	fail "a venv on Debian's python3 (apt-get install python3-venv)" "$(tail -3 "$T/venv.log")"
	e2e_done
	exit
fi
if ! "$venv/bin/pip" install -q --disable-pip-version-check "$FIO_PLOT" >"$T/pip.log" 2>&1; then
	fail "pip install $FIO_PLOT from PyPI" "$(tail -3 "$T/pip.log")"
	e2e_done
	exit
fi
pass "$FIO_PLOT installed in the suite's venv"

mkdata "$T/file" 16
mkdir -p "$T/data"
# rw and bs on the command line before --name ("global options"),
# iodepth and numjobs the job's own ("job options"), as bench-fio's
# job file has them.
for d in 1 4 16; do
	expect_exit 0 "io_uring randread iodepth=$d runs" "$FAULTLINE" --quiet --rw=randread --bs=4k \
		--name=fp --filename="$T/file" --ioengine=io_uring --iodepth=$d --numjobs=1 \
		--runtime=300ms --time_based --output-format=json --output="$T/data/randread-$d-1.json"
done

cd "$T" || exit 1
for g in "-l 2d" "-L 3d -t iops"; do
	set -- $g
	if "$venv/bin/fio-plot" -i data -T "faultline $2" "$1" "${@:3}" -r randread -d 1 4 16 -n 1 \
		-o "$2.png" >"$T/plot.log" 2>&1 && [ -s "$2.png" ] &&
		[ "$(head -c 8 "$2.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
		pass "fio-plot $1 draws its $2 chart from the three runs ($(stat -c %s "$2.png") bytes of PNG)"
	else
		fail "fio-plot $1 draws its $2 chart from the three runs" "$(tail -5 "$T/plot.log")"
	fi
done

# What fio-plot read, through its own code: one record per depth, with
# the options it merged and the IOPS of each run's JSON.
if "$venv/bin/python" - >"$T/read.log" 2>&1 <<'EOF'
import json, sys
sys.argv = ["fio-plot", "-i", "data", "-T", "t", "-l", "-r", "randread", "-d", "1", "4", "16", "-n", "1"]
from fio_plot import get_settings
from fio_plot.fiolib import getdata
parser, settings = get_settings()
route = getdata.get_routing_dict()
settings = getdata.configure_default_settings(settings, route, settings["graphtype"])
recs = route[settings["graphtype"]]["get_data"](settings)[0]["data"]
got = sorted((int(r["iodepth"]), r["numjobs"], r["rw"], r["bs"], round(r["iops"], 3)) for r in recs)
want = []
for d in (1, 4, 16):
    j = json.load(open("data/randread-%d-1.json" % d))["jobs"][0]
    want.append((d, "1", "randread", "4k", round(j["read"]["iops"], 3)))
assert got == want, (got, want)
# no steady state: fio-plot sets ss_settings only for a listed steadystate
assert all("ss_settings" not in r for r in recs), recs
EOF
then
	pass "fio-plot read depths 1, 4, 16 with rw, bs, numjobs and each run's IOPS"
else
	fail "fio-plot read depths 1, 4, 16 with rw, bs, numjobs and each run's IOPS" "$(tail -5 "$T/read.log")"
fi
cd - >/dev/null || true

e2e_done
