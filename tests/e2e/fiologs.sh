#!/usr/bin/env bash
# A newer fio's log options, as its regression jobs t0033 and t0034 use
# them: log_window_value (mean, maximum or both per entry) and
# log_issue_time (a last column of the latency logs, 0 in averaged
# entries as in fio's), each bad value refused with its line.
. "$(dirname "$0")/lib.sh"

cd "$E2E_TMP" || exit 1
head -c 4194304 /dev/urandom >data
# The reads come from the page cache (the file read first, invalidate=0):
# the checks are of the logs' columns, and they need a whole window with
# I/O (a bandwidth entry) and one with two reads or more (a maximum above
# the mean), which a loaded host's disk, stalling a cold read for over a
# second, denied a cold 2 s run. From the cache they are the job's.
lg() {
	cat data >/dev/null
	"$FAULTLINE" --quiet --output=/dev/null --name=l --filename=data --size=4m --bs=4k \
		--rw=randread --invalidate=0 --time_based --runtime=2 --write_lat_log=l --write_bw_log=l "$@"
}

rm -f l_*.log
expect_exit 0 "log_window_value=both runs" lg --log_window_value=both
pycheck "both: latency entries hold the mean, then the window's maximum, no smaller" '
import sys
rows = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if l.strip()]
assert rows and all(len(r) == 6 for r in rows), rows
assert all(r[2] >= r[1] > 0 for r in rows), rows
assert any(r[2] > r[1] for r in rows), rows
' l_lat.1.log
pycheck "both: a bandwidth entry repeats its one value" '
import sys
rows = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if l.strip()]
assert rows and all(len(r) == 6 and r[1] == r[2] for r in rows), rows
' l_bw.1.log
rm -f l_*.log
expect_exit 0 "log_window_value=max runs" lg --log_window_value=1
pycheck "max: one value column, the maximum" '
import sys
rows = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if l.strip()]
assert rows and all(len(r) == 5 for r in rows), rows
' l_lat.1.log
rm -f l_*.log
expect_exit 0 "log_issue_time=1 runs" lg --log_offset=1 --log_issue_time=1
pycheck "log_issue_time: latency entries end with a 0 issue time after the offset" '
import sys
rows = [[int(x) for x in l.split(",")] for l in open(sys.argv[1]) if l.strip()]
assert rows and all(len(r) == 7 and r[4] == 0 and r[6] == 0 for r in rows), rows
' l_lat.1.log
pycheck "log_issue_time: the bandwidth log has no such column" '
import sys
rows = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
assert rows and all(len(r) == 6 for r in rows), rows
' l_bw.1.log

printf '[j]\nfilename=data\nsize=4m\nwrite_lat_log=x\nlog_window_value=most\n' >bad.fio
expect_exit 2 "log_window_value=most is refused" "$FAULTLINE" --parse-only bad.fio
expect_err_has "bad.fio:5" "log_window_value's refusal names its line"
printf '[j]\nfilename=data\nsize=4m\nwrite_lat_log=x\nlog_issue_time=1\n' >bad2.fio
expect_exit 2 "log_issue_time without log_offset is refused" "$FAULTLINE" --parse-only bad2.fio
expect_err_has "log_issue_time=1 at bad2.fio:5 needs write_lat_log and log_offset" \
	"log_issue_time's refusal names its line and why"

e2e_done
