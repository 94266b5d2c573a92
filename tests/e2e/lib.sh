# tests/e2e/lib.sh - a small harness for end-to-end tests that run the
# binary. Each check prints "ok" or "FAIL" with its name; the last line
# is "N passed, N failed" and the exit status is non-zero on a failure.
set -u

E2E_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FAULTLINE=${FAULTLINE:-$E2E_TESTS/../faultline}
PY=python3
# Debian's python3 has the json module like any other; prefer PATH's.
command -v "$PY" >/dev/null || PY=/usr/bin/python3

E2E_PASS=0
E2E_FAIL=0
# Scratch space on the disk, not tmpfs, so O_DIRECT and device telemetry
# behave as on a user's file; removed on exit.
E2E_TMP=$(mktemp -d "${E2E_DIR:-/var/tmp}/faultline-e2e.XXXXXX")
# The interpreter itself rather than a launcher in front of it (pyenv's
# shim runs shells and pyenv on every call: 70 ms of CPU each, a quarter
# of a second on a loaded host, and a suite makes dozens of calls), also
# for the helpers that find python3 on PATH. The same interpreter.
if py=$("$PY" -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	PY=$py
	mkdir -p "$E2E_TMP/.py" && ln -sf "$py" "$E2E_TMP/.py/python3" && PATH=$E2E_TMP/.py:$PATH
fi
# Only the test's own shell cleans up: a background subshell (a timed
# kill, say) inherits the EXIT trap and must not remove the directory
# when it ends.
E2E_MAIN=$BASHPID
# For a sanitized binary run under strace: LeakSanitizer cannot work
# under ptrace and fails the run, so those runs check no leaks (every
# other run of the same test still does).
NOLEAK="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
trap '[ "$BASHPID" = "$E2E_MAIN" ] && rm -rf "$E2E_TMP"' EXIT

pass() { E2E_PASS=$((E2E_PASS + 1)); echo "ok   - $1"; }
fail() { E2E_FAIL=$((E2E_FAIL + 1)); echo "FAIL - $1"; [ $# -gt 1 ] && printf '       %s\n' "${@:2}"; return 0; }

# expect_exit CODE NAME CMD... : run CMD, check its exit status.
expect_exit() {
	local want=$1 name=$2 got
	shift 2
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	got=$?
	if [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "exit $got, wanted $want" "$(head -c 600 "$E2E_TMP/err")"
	fi
}

# expect_err_has TEXT NAME: the last command's stderr contains TEXT.
expect_err_has() {
	if grep -qF -- "$1" "$E2E_TMP/err"; then
		pass "$2"
	else
		fail "$2" "stderr lacks '$1'" "$(head -c 600 "$E2E_TMP/err")"
	fi
}

# pycheck NAME SCRIPT ARGS...: a Python assertion script over files.
pycheck() {
	local name=$1
	shift
	if "$PY" -c "$@" 2>"$E2E_TMP/pyerr"; then
		pass "$name"
	else
		fail "$name" "$(tail -n 3 "$E2E_TMP/pyerr")"
	fi
}

# A DAMON admin file's text, asked again while it answers EBUSY (another
# process, such as a second clone's faultline, holds DAMON's sysfs lock
# until its kdamond handles a write to a state file), for up to 3 s.
damon_cat() { # path
	local v
	for _ in $(seq 600); do
		v=$(cat "$1" 2>/dev/null) && { echo "$v"; return 0; }
		sleep 0.005
	done
	return 1
}
# The same for a write of $2 to a state file.
damon_write() { # path text
	for _ in $(seq 600); do
		echo "$2" 2>/dev/null >"$1" && return 0
		sleep 0.005
	done
	return 1
}

# A data file of real bytes, read back through the page cache.
mkdata() { # path size_mib
	head -c "$(( $2 * 1024 * 1024 ))" /dev/urandom >"$1"
}

# Loop devices. make check runs suites side by side, and the kernel
# gives a detached device's name to the next suite that asks for one. A
# second `losetup -d` of a name, or one after the device went away by
# itself (autoclear on its last close), detaches another suite's device
# (fc58: fiotrim.sh's device went to 0 bytes under it). So a suite
# attaches with loop_attach and detaches only with loop_detach, which
# detaches a device only while its own file still backs it; twice is
# harmless.
declare -A E2E_LOOP_FILE=()
loop_attach() { # var file [losetup options...]: var names the device
	local dev
	dev=$(losetup -f --show "${@:3}" "$2" 2>/dev/null) && [ -n "$dev" ] || return 1
	E2E_LOOP_FILE[$dev]=$(realpath "$2")
	printf -v "$1" %s "$dev"
}
loop_ours() { # device: still backed by the file loop_attach gave it
	[ -n "$1" ] && [ -n "${E2E_LOOP_FILE[$1]:-}" ] &&
		losetup -n -O NAME -j "${E2E_LOOP_FILE[$1]}" 2>/dev/null | grep -qxF "$1"
}
loop_detach() { # device: given up, even where the kernel detaches it later
	loop_ours "$1" && losetup -d "$1"
	[ -z "$1" ] || unset "E2E_LOOP_FILE[$1]"
	return 0
}

# SPEC 8's one window per figure, over every JSON and CSV the suite left
# in its scratch directory (tests/check-outputs says what it looks for).
e2e_check_outputs() {
	local out
	if out=$("$PY" "$E2E_TESTS/check-outputs" "$E2E_TMP" 2>&1); then
		pass "outputs: one window per figure in every JSON and CSV (${out#check-outputs: })"
	else
		fail "outputs: one window per figure in every JSON and CSV (tests/check-outputs)" "$out"
	fi
}

e2e_done() {
	e2e_check_outputs
	echo "$E2E_PASS passed, $E2E_FAIL failed"
	[ "$E2E_FAIL" -eq 0 ]
}
