#!/usr/bin/env bash
# fio's own examples/ (issue 29), run as a user would try them: targets
# pointed at a scratch file, sizes and runtimes made small. Each runs, or
# is refused naming the option faultline lacks, as
# tests/fixtures/fio-examples/EXPECTED says. The fixtures are the
# examples' option lines (so this runs without network); with
# FIO_SRC=path/to/fio (a checkout of axboe/fio) the originals in its
# examples/ are run too, against the same expectations.
. "$(dirname "$0")/lib.sh"

fx=$(cd "$(dirname "$0")/../fixtures/fio-examples" && pwd)
scratch=$E2E_TMP/data
mkdata "$scratch" 16

# As a user would: every filename to the scratch file, directory to the
# temp dir, sizes above 16m and runtimes cut down, each job at most 1 s
# (what is checked is that it runs, or is refused: 39 examples, and the
# ASan pass runs them too).
cat >"$E2E_TMP/rewrite.py" <<'PY'
import re, sys
src, scratch, tmpdir = sys.argv[1:4]
def size_of(v):
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)i?b?\s*", v.lower())
    return int(m.group(1)) * 1024 ** " kmgtp".index(m.group(2) or " ") if m else None
out = []
for line in open(src):
    s = line.strip()
    if s.startswith("[") and s.endswith("]"):
        out.append(line)
        if s != "[global]":
            out.append("runtime=1\n")
        continue
    key, _, val = s.partition("=")
    key = key.strip()
    if key == "filename":
        line = "filename=%s\n" % scratch
    elif key == "directory":
        line = "directory=%s\n" % tmpdir
    elif key in ("size", "filesize", "io_size", "io_limit"):
        v = size_of(val)
        if v is None or v > 16 << 20:
            line = "%s=16m\n" % key
    elif key in ("runtime", "timeout"):
        line = "runtime=1\n"
    elif key in ("ramp_time", "startdelay"):
        line = "%s=0\n" % key
    out.append(line)
txt = "".join(out)
if "filename=" not in txt:
    txt = "[global]\nfilename=%s\n" % scratch + txt
if not re.search(r"^size=", txt, re.M):
    txt = "[global]\nsize=16m\n" + txt
sys.stdout.write(txt)
PY

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)

# One example as a user runs it: its exit status, stderr in $E2E_TMP/err.
# From the scratch directory, as fio's examples write their logs to the
# current one (which need not be writable: e2e-unprivileged runs as nobody).
try() {
	local job
	job=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	(cd "$E2E_TMP" && FIO_BS=4k "$FAULTLINE" --quiet --output=/dev/null "$job" >"$E2E_TMP/out" 2>"$E2E_TMP/err")
}

# sweep DIR LABEL: every example EXPECTED lists, from DIR.
sweep() {
	local dir=$1 label=$2 ran=0 refused=0 total=0 name want opt rc
	while read -r name want opt; do
		case $name in "#"* | "") continue ;; esac
		total=$((total + 1))
		[ -f "$dir/$name" ] || { fail "$label $name: missing"; continue; }
		FIO_BS=4k "$PY" "$E2E_TMP/rewrite.py" "$dir/$name" "$scratch" "$E2E_TMP" >"$E2E_TMP/$name"
		try "$E2E_TMP/$name"
		rc=$?
		case $want in
		run | host)
			if [ "$want" = run ] && [ -n "$opt" ] && [ "$(id -u)" != 0 ]; then
				# needs a capability this (unprivileged) run lacks: refused, naming it
				if [ $rc = 2 ] && grep -qF -- "$opt" "$E2E_TMP/err"; then
					pass "$label $name is refused without $opt (not root)"
				else
					fail "$label $name is refused without $opt (not root)" "exit $rc" "$(head -c 400 "$E2E_TMP/err")"
				fi
			elif [ "$want" = host ] && [ "$nodes" -lt 2 ]; then
				echo "skip - $label $name needs a second NUMA node ($nodes here)"
			elif [ $rc = 0 ]; then
				pass "$label $name runs"
				ran=$((ran + 1))
			else
				fail "$label $name runs" "exit $rc" "$(head -c 400 "$E2E_TMP/err")"
			fi
			;;
		refused)
			if [ $rc = 2 ] && grep -qF -- "$opt" "$E2E_TMP/err"; then
				pass "$label $name is refused naming $opt"
				refused=$((refused + 1))
			else
				fail "$label $name is refused naming $opt" "exit $rc" "$(head -c 400 "$E2E_TMP/err")"
			fi
			;;
		esac
	done <"$fx/EXPECTED"
	echo "# $label: $ran of $total run, $refused refused naming the option"
}

sweep "$fx" fixture
if [ -n "${FIO_SRC:-}" ] && [ -d "$FIO_SRC/examples" ]; then
	sweep "$FIO_SRC/examples" fio
else
	echo "skip - fio's own examples: set FIO_SRC to a checkout of axboe/fio"
fi

e2e_done
