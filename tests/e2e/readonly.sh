#!/usr/bin/env bash
# Read jobs never write their target (SPEC 8, 10): every engine, random
# and sequential, on a file of random bytes and (as root) on a loop
# device over one. The target's sha256 is the same before and after, and
# no descriptor of it is ever opened for writing: every open is traced
# with strace when it is installed, and the descriptors of the running
# process tree are read from /proc/PID/fdinfo either way. Guards the
# write path: a read job must not reach it.
. "$(dirname "$0")/lib.sh"

ENGINES="psync mmap io_uring libaio"
# Each job reads until the descriptors have been looked at twice with
# the target open (then a SIGINT ends it: exit 1, outputs whole), not
# for a time: on a loaded host one look at the process tree can take
# longer than a second. RUN only keeps a job that never opens it from
# hanging the suite.
RUN=60s
POLL=0.2

f=$E2E_TMP/data
mkdata "$f" 32
f=$(realpath "$f")

use_strace=0
if command -v strace >/dev/null && strace -f -qq -o /dev/null true 2>/dev/null; then
	use_strace=1
else
	echo "# strace missing or not permitted: descriptors checked through /proc/PID/fdinfo only"
fi

# Every process under @1 (itself included), from the kernel's children
# lists: faultline's worker processes (mem_limit) too.
tree() {
	local p c
	for p in "$@"; do
		echo "$p"
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			tree "$c"
		done
	done
}

# Watch the process tree of @1 until it exits: each descriptor that
# resolves to @2 is counted in $E2E_TMP/fds.seen, and written to
# $E2E_TMP/fds.bad when its access mode (flags & O_ACCMODE) is not
# O_RDONLY. After two looks that saw it, SIGINT to faultline (@1, or
# under strace its first child).
watch_fds() {
	local root=$1 target=$2 p fd flags looks=0 fl
	: >"$E2E_TMP/fds.seen"
	: >"$E2E_TMP/fds.bad"
	while kill -0 "$root" 2>/dev/null; do
		if [ -s "$E2E_TMP/fds.seen" ] && [ $((looks += 1)) = 2 ]; then
			fl=$root
			[ $use_strace = 1 ] && fl=$(cat /proc/"$root"/task/*/children 2>/dev/null | awk '{print $1; exit}')
			kill -INT "${fl:-$root}" 2>/dev/null
		fi
		for p in $(tree "$root"); do
			for fd in /proc/"$p"/fd/*; do
				[ "$(readlink "$fd" 2>/dev/null)" = "$target" ] || continue
				flags=$(awk '/^flags:/ { print $2 }' /proc/"$p"/fdinfo/"${fd##*/}" 2>/dev/null)
				[ -n "$flags" ] || continue
				echo "$p/${fd##*/}" >>"$E2E_TMP/fds.seen"
				# flags are octal; the access mode is the low two bits.
				[ $((8#$flags & 3)) = 0 ] || echo "pid $p fd ${fd##*/} flags 0$flags" >>"$E2E_TMP/fds.bad"
			done
		done
		sleep "$POLL"
	done
}

# One job on @1 for every engine and rw; @2 names the target in checks.
check_target() {
	local t=$1 what=$2 e rw name pid rc sum0 log
	sum0=$(sha256sum <"$t")
	for e in $ENGINES; do
		for rw in randread read; do
			name="$what $e $rw"
			log=$E2E_TMP/strace.log
			if [ $use_strace = 1 ]; then
				env ASAN_OPTIONS="$NOLEAK" strace -f -qq -y -e trace=open,openat,openat2,creat -e signal=none -o "$log" \
					"$FAULTLINE" --quiet --name=ro --filename="$t" --ioengine=$e --rw=$rw \
					--size=32m --runtime=$RUN --time_based --output=/dev/null 2>"$E2E_TMP/err" &
			else
				"$FAULTLINE" --quiet --name=ro --filename="$t" --ioengine=$e --rw=$rw \
					--size=32m --runtime=$RUN --time_based --output=/dev/null 2>"$E2E_TMP/err" &
			fi
			pid=$!
			watch_fds "$pid" "$t"
			wait "$pid"
			rc=$?
			# 1: stopped by the SIGINT, as asked.
			[ $rc = 1 ] && pass "$name: runs until stopped" ||
				fail "$name: runs until stopped" "exit $rc" "$(head -c 600 "$E2E_TMP/err")"
			if [ -s "$E2E_TMP/fds.bad" ]; then
				fail "$name: no writable descriptor of the target" "$(sort -u "$E2E_TMP/fds.bad" | head -n 3)"
			elif [ ! -s "$E2E_TMP/fds.seen" ]; then
				fail "$name: no writable descriptor of the target" "never saw the target open in /proc/PID/fd"
			else
				pass "$name: no writable descriptor of the target ($(sort -u "$E2E_TMP/fds.seen" | wc -l) seen)"
			fi
			[ $use_strace = 1 ] || continue
			# The path as given, or the file behind a descriptor (-y).
			grep -F -e "\"$t\"" -e "<$t>" "$log" >"$E2E_TMP/opens"
			if [ ! -s "$E2E_TMP/opens" ]; then
				fail "$name: strace: opened read-only" "strace saw no open of $t"
			elif grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND' "$E2E_TMP/opens" >"$E2E_TMP/wopens"; then
				fail "$name: strace: opened read-only" "$(head -n 3 "$E2E_TMP/wopens")"
			else
				pass "$name: strace: opened read-only ($(wc -l <"$E2E_TMP/opens") opens)"
			fi
		done
	done
	[ "$(sha256sum <"$t")" = "$sum0" ] && pass "$what: sha256 unchanged after every engine" ||
		fail "$what: sha256 unchanged after every engine"
}

check_target "$f" "file"

loop=
if [ "$(id -u)" != 0 ]; then
	echo "# loop device: skipped (needs root to attach one)"
else
	mkdata "$E2E_TMP/dev.img" 32
	loop_attach loop "$E2E_TMP/dev.img" ||
		{ echo "# loop device: skipped (losetup failed)"; loop=; }
fi
if [ -n "$loop" ]; then
	# Detached on every way out, the harness's own cleanup kept.
	trap '[ "$BASHPID" = "$E2E_MAIN" ] && { loop_detach "$loop"; rm -rf "$E2E_TMP"; }' EXIT
	img0=$(sha256sum <"$E2E_TMP/dev.img")
	check_target "$loop" "loop device"
	loop_detach "$loop"
	loop=
	[ "$(sha256sum <"$E2E_TMP/dev.img")" = "$img0" ] && pass "loop device: backing file unchanged" ||
		fail "loop device: backing file unchanged"
fi

# A read job never writes a file it did not make (SPEC 8): a short file
# and a symlink to one, as a job's target, a planted symlink in a sticky
# world-writable directory (the demo's scratch path), and another user's
# file there: each refused with exit 2, each byte for byte unchanged.
printf 'precious\n' >"$E2E_TMP/precious"
printf 'victim\n' >"$E2E_TMP/victim"
ln -s "$E2E_TMP/victim" "$E2E_TMP/link"
p0=$(sha256sum <"$E2E_TMP/precious")
v0=$(sha256sum <"$E2E_TMP/victim")
for eng in psync mmap; do
	expect_exit 2 "short file it did not make, $eng: refused" \
		"$FAULTLINE" --name=short --filename="$E2E_TMP/precious" --size=1m --ioengine=$eng --quiet
	grep -q 'did not make it' "$E2E_TMP/err" && pass "short file, $eng: the message says why" ||
		fail "short file, $eng: the message says why" "$(head -c 300 "$E2E_TMP/err")"
	expect_exit 2 "symlink to a short file, $eng: refused" \
		"$FAULTLINE" --name=link --filename="$E2E_TMP/link" --size=1m --ioengine=$eng --quiet
done
[ "$(sha256sum <"$E2E_TMP/precious")" = "$p0" ] && pass "short file: unchanged" ||
	fail "short file: unchanged" "$(wc -c <"$E2E_TMP/precious") bytes now"
[ "$(sha256sum <"$E2E_TMP/victim")" = "$v0" ] && pass "symlink's target: unchanged" ||
	fail "symlink's target: unchanged" "$(wc -c <"$E2E_TMP/victim") bytes now"

# A file faultline made itself and left short is completed, and overwrite=1
# is the consent to append to any other.
expect_exit 0 "a file it made: laid out" \
	"$FAULTLINE" --name=made --filename="$E2E_TMP/made" --size=1m --runtime=1 --quiet
expect_exit 0 "a file it made, larger size: completed" \
	"$FAULTLINE" --name=made --filename="$E2E_TMP/made" --size=2m --runtime=1 --quiet
[ "$(stat -c %s "$E2E_TMP/made")" = 2097152 ] && pass "a file it made: 2 MiB now" ||
	fail "a file it made: 2 MiB now" "$(stat -c %s "$E2E_TMP/made") bytes"
cp "$E2E_TMP/precious" "$E2E_TMP/consent"
expect_exit 0 "overwrite=1: a short file is extended" \
	"$FAULTLINE" --name=ok --filename="$E2E_TMP/consent" --size=1m --overwrite=1 --runtime=1 --quiet
[ "$(head -c 9 "$E2E_TMP/consent")" = "$(head -c 9 "$E2E_TMP/precious")" ] &&
[ "$(stat -c %s "$E2E_TMP/consent")" = 1048576 ] && pass "overwrite=1: first bytes kept, 1 MiB long" ||
	fail "overwrite=1: first bytes kept, 1 MiB long"
expect_exit 2 "allow_file_create=0: a missing file is an error" \
	"$FAULTLINE" --name=no --filename="$E2E_TMP/missing" --size=1m --allow_file_create=0 --quiet
[ ! -e "$E2E_TMP/missing" ] && pass "allow_file_create=0: nothing made" || fail "allow_file_create=0: nothing made"

# A sticky world-writable directory, as /tmp: the demo's scratch name
# planted as a symlink, and a file of another user's there.
sticky="$E2E_TMP/sticky"
mkdir "$sticky" && chmod 1777 "$sticky"
ln -s "$E2E_TMP/victim" "$sticky/faultline-demo.dat"
expect_exit 2 "demo: a planted symlink at its scratch path is refused" \
	env TMPDIR="$sticky" "$FAULTLINE" --demo --quiet
grep -q 'planted' "$E2E_TMP/err" && pass "demo: the message says the link may be planted" ||
	fail "demo: the message says the link may be planted" "$(head -c 300 "$E2E_TMP/err")"
[ "$(sha256sum <"$E2E_TMP/victim")" = "$v0" ] && pass "demo: the link's target unchanged" ||
	fail "demo: the link's target unchanged" "$(wc -c <"$E2E_TMP/victim") bytes now"
if [ "$(id -u)" = 0 ]; then
	rm "$sticky/faultline-demo.dat"
	head -c 2097152 /dev/urandom >"$sticky/theirs" && chown 65534 "$sticky/theirs"
	expect_exit 2 "another user's file in a sticky directory: refused" \
		"$FAULTLINE" --name=theirs --filename="$sticky/theirs" --size=1m --quiet
fi

e2e_done
