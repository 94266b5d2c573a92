#!/usr/bin/env bash
# The harness's own helpers, where a mistake fails another suite rather
# than the one that made it: a loop device one suite gave up, and the
# kernel then handed to another under the same name, must not be
# detached by the first (lib.sh's loop_attach and loop_detach; fc58).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null; then
	echo "skip - loop devices: need root and losetup"
	e2e_done
	exit
fi
truncate -s 8M "$E2E_TMP/a.img" "$E2E_TMP/b.img"
mkfifo "$E2E_TMP/held" "$E2E_TMP/go" "$E2E_TMP/b.name" "$E2E_TMP/b.go"
if ! loop_attach a "$E2E_TMP/a.img"; then
	echo "skip - loop devices: losetup failed"
	e2e_done
	exit
fi

# Held open, as faultline holds its target, then detached: lazily, the
# kernel frees it at the last close.
( exec 3<"$a"; echo >"$E2E_TMP/held"; read -r _ <"$E2E_TMP/go" ) &
holder=$!
read -r _ <"$E2E_TMP/held"
loop_detach "$a"
loop_ours "$a" && fail "a lazily detached device is given up" || pass "a lazily detached device is given up"
echo >"$E2E_TMP/go"
wait $holder
for _ in $(seq 200); do
	[ -z "$(losetup -n -j "$E2E_TMP/a.img")" ] && break
	sleep 0.05
done
[ -z "$(losetup -n -j "$E2E_TMP/a.img")" ] && pass "the kernel detached it at its last close" ||
	fail "the kernel detached it at its last close" "$(losetup -j "$E2E_TMP/a.img")"

# Another suite, a shell of its own, attaches a device and holds it.
bash -c '. "$1/e2e/lib.sh"
	loop_attach b "$2" || b=
	echo "$b" >"$3/b.name"
	read -r _ <"$3/b.go"
	loop_detach "$b"' _ "$E2E_TESTS" "$E2E_TMP/b.img" "$E2E_TMP" &
other=$!
read -r b <"$E2E_TMP/b.name"
if [ -z "$b" ]; then
	fail "another suite attaches a device" "losetup failed"
elif [ "$b" != "$a" ]; then
	# Another lane took the name meanwhile: the case is not this one.
	echo "skip - a stale detach: the kernel gave the other suite $b, not $a"
else
	# The first suite's stale detach of the name it once had.
	loop_detach "$a"
	losetup -n -O NAME -j "$E2E_TMP/b.img" | grep -qxF "$b" &&
		pass "a stale detach leaves another suite's device of that name attached ($b)" ||
		fail "a stale detach leaves another suite's device of that name attached" "$b was detached"
fi
echo >"$E2E_TMP/b.go"
wait $other
[ -z "$(losetup -n -j "$E2E_TMP/b.img")" ] && pass "the other suite detached its own device" ||
	fail "the other suite detached its own device" "$(losetup -j "$E2E_TMP/b.img")"
e2e_done
