#!/usr/bin/env bash
# Installed like any tool (SPEC 13): `make install` into a DESTDIR, the
# installed faultline run from another directory on a small job, its CSV
# drawn by the installed faultline-plot, the installed man page rendered
# with man -l, then `make uninstall` leaves nothing behind. Also `make
# deb`'s control file. Needs the source tree's Makefile (skipped when the
# tests run from a copy without one, as e2e-unprivileged does).
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -f "$top/Makefile" ] || [ ! -d "$top/src" ]; then
	echo "# install: skipped (no source tree beside the tests)"
	e2e_done
	exit 0
fi
dest="$E2E_TMP/dest"
prefix=/usr/local
# The tree's own build (up to date after `make`, so nothing is rebuilt).
mk() { make -s -C "$top" "$@"; }

if mk install DESTDIR="$dest" PREFIX="$prefix" >"$E2E_TMP/make.log" 2>&1; then
	pass "make install DESTDIR PREFIX=$prefix"
else
	fail "make install DESTDIR PREFIX=$prefix" "$(tail -n 5 "$E2E_TMP/make.log")"
fi
root="$dest$prefix"
for f in bin/faultline bin/faultline-plot share/man/man1/faultline.1.gz \
	 share/faultline/jobs/demo.job share/faultline/jobs/README \
	 share/faultline/plot/faultline_plot.py share/faultline/plot/verdict-html; do
	[ -e "$root/$f" ] && pass "installed: $f" || fail "installed: $f"
done

# From / and with the source tree out of reach of the helpers: the binary
# finds them from its own location.
out="$E2E_TMP/run"
mkdir -p "$out"
(cd / && env -u FAULTLINE_PLOT_DIR "$root/bin/faultline" --name=inst --filename="$out/f.dat" \
	--size=8m --rw=randread --runtime=1 --time_based --quiet --csv="$out/r.csv" >"$out/sum.txt" 2>&1)
rc=$?
[ $rc = 0 ] && grep -q 'inst:' "$out/sum.txt" && pass "the installed faultline runs a job from /" ||
	fail "the installed faultline runs a job from /" "exit $rc" "$(head -c 400 "$out/sum.txt")"
"$root/bin/faultline" --version >"$out/ver" 2>&1
grep -Eq '^faultline [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+(-dirty)?\)$|\(commit unknown\)$' "$out/ver" &&
	pass "--version: the version and the commit ($(cat "$out/ver"))" ||
	fail "--version: the version and the commit" "$(cat "$out/ver")"
if "$top/plot/pick-python" >/dev/null 2>&1; then
	(cd / && "$root/bin/faultline-plot" "$out/r.csv" -o "$out/r.png") >"$out/plot.log" 2>&1 &&
	[ -s "$out/r.png" ] && pass "the installed faultline-plot draws the CSV" ||
		fail "the installed faultline-plot draws the CSV" "$(tail -n 3 "$out/plot.log")"
else
	echo "# faultline-plot: skipped (no python3 with matplotlib)"
fi
if command -v man >/dev/null; then
	MANWIDTH=80 man -l "$root/share/man/man1/faultline.1.gz" 2>/dev/null >"$out/man.txt"
	grep -q 'THE VERDICT' "$out/man.txt" && pass "man -l renders the installed page (THE VERDICT)" ||
		fail "man -l renders the installed page (THE VERDICT)" "$(head -n 3 "$out/man.txt")"
else
	echo "# man -l: skipped (no man)"
fi

if mk uninstall DESTDIR="$dest" PREFIX="$prefix" >"$E2E_TMP/make.log" 2>&1; then
	pass "make uninstall"
else
	fail "make uninstall" "$(tail -n 5 "$E2E_TMP/make.log")"
fi
left=$(find "$dest" -type f -o -type l | head -n 5)
[ -z "$left" ] && pass "make uninstall leaves no file" || fail "make uninstall leaves no file" "$left"
[ ! -e "$root/share/faultline" ] && pass "make uninstall removes share/faultline" ||
	fail "make uninstall removes share/faultline"

if command -v dpkg-deb >/dev/null; then
	if mk deb >"$E2E_TMP/deb.log" 2>&1; then
		deb=$(ls "$top"/faultline_*.deb 2>/dev/null | head -n 1)
		if [ -n "$deb" ]; then
			dpkg-deb -f "$deb" Depends >"$E2E_TMP/depends"
			grep -q 'liburing' "$E2E_TMP/depends" && grep -q 'python3-matplotlib' "$E2E_TMP/depends" &&
				pass "make deb: Depends names liburing and python3-matplotlib" ||
				fail "make deb: Depends names liburing and python3-matplotlib" "$(cat "$E2E_TMP/depends")"
			dpkg-deb -c "$deb" | grep './usr/bin/faultline$' >/dev/null && pass "make deb: holds /usr/bin/faultline" ||
				fail "make deb: holds /usr/bin/faultline"
			rm -f "$deb"
		else
			fail "make deb: a .deb" "$(tail -n 5 "$E2E_TMP/deb.log")"
		fi
	else
		fail "make deb" "$(tail -n 5 "$E2E_TMP/deb.log")"
	fi
fi
e2e_done
