#!/usr/bin/env bash
# fio's own regression jobs (t/jobs/*.fio): with FIO_SRC=path/to/fio (a
# checkout of axboe/fio) each parses or is refused naming its option and
# file:line, as tests/fixtures/fio-tjobs/EXPECTED says, and at least 36
# of the 43 parse. fio's files are not committed here.
. "$(dirname "$0")/lib.sh"

fx=$(cd "$(dirname "$0")/../fixtures/fio-tjobs" && pwd)
if [ -z "${FIO_SRC:-}" ] || [ ! -d "$FIO_SRC/t/jobs" ]; then
	echo "skip - fio's regression jobs: set FIO_SRC to a checkout of axboe/fio"
	e2e_done
	exit
fi
cd "$E2E_TMP" || exit 1
cp "$FIO_SRC"/t/jobs/* .	# t0038.fio reads its t0038.iolog
head -c 16384 /dev/urandom >t0027.pattern	# as fio's t/run-fio-tests.py does
n=0
while read -r name want opt; do
	case $name in ''|'#'*) continue ;; esac
	f=$FIO_SRC/t/jobs/$name
	[ -f "$f" ] || { fail "$name: in FIO_SRC/t/jobs" "missing"; continue; }
	if [ "$want" = parses ]; then
		expect_exit 0 "$name parses" "$FAULTLINE" --parse-only "$name"
		n=$((n + 1))
	else
		expect_exit 2 "$name is refused" "$FAULTLINE" --parse-only "$name"
		grep -Eq "$opt.* at $name:[0-9]+|at $name:[0-9]+.*$opt|$opt.*$name:[0-9]+" err &&
			pass "$name: the refusal names $opt and $name:line" ||
			fail "$name: the refusal names $opt and $name:line" "$(head -c 300 err)"
	fi
done <"$fx/EXPECTED"
[ "$n" -ge 36 ] && pass "$n of fio's regression jobs parse (36 needed)" ||
	fail "$n of fio's regression jobs parse (36 needed)"

e2e_done
