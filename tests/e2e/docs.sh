#!/usr/bin/env bash
# The man page documents every job option (and alias) in the option
# table, every engine, every CSV column and every JSON field faultline
# writes. Fails naming what is missing.
. "$(dirname "$0")/lib.sh"

man=$(cd "$(dirname "$0")/../.." && pwd)/man/faultline.1

# Option names and aliases, from the table itself (--cmdhelp reads it).
# Each must head an entry: the line after a .TP names it
# (".BI bs= size", ".BR rw = read | randread \" (\" readwrite )").
"$FAULTLINE" --cmdhelp >"$E2E_TMP/cmdhelp"
awk 'prev == ".TP" { print } { prev = $0 }' "$man" >"$E2E_TMP/entries"
missing=""
while read -r name rest; do
	[ -n "$name" ] || continue
	names=$name
	case $rest in "("*) names="$names $(echo "$rest" | sed 's/^(\([^)]*\)).*/\1/' | tr ',' ' ')" ;; esac
	for n in $names; do
		grep -qE "^\.(B|BR|BI) +$n([ =]|\\\\|$)|\(\" $n \)" "$E2E_TMP/entries" || missing="$missing $n"
	done
done <"$E2E_TMP/cmdhelp"
[ -z "$missing" ] && pass "every option and alias heads a man page entry" || fail "every option and alias heads a man page entry" "missing:$missing"

missing=""
engines=$("$FAULTLINE" --cmdhelp=ioengine | awk '/^    [a-z_]+ /{print $1}')
[ "$(echo "$engines" | wc -w)" -ge 5 ] || missing=" (--cmdhelp=ioengine listed only: $engines)"
for e in $engines; do
	grep -qE "^\.(B|BR) $e( |$)" "$man" || missing="$missing $e"
done
[ -z "$missing" ] && pass "every engine is in the man page" || fail "every engine is in the man page" "missing:$missing"

header=$("$FAULTLINE" --quiet --csv=- --name=h --ioengine=null --size=1m --output=/dev/null | head -n 1)
missing=""
case $header in t_s,*) ;; *) missing=" (no CSV header: $header)" ;; esac
for c in ${header//,/ }; do
	grep -qE "^\.BR? .*\b$c\b" "$man" || missing="$missing $c"
done
[ -z "$missing" ] && pass "every CSV column is in the man page" || fail "every CSV column is in the man page" "missing:$missing"

f=$E2E_TMP/data
mkdata "$f" 4
# json+ and a global option, so "bins" and "global options" have content.
"$FAULTLINE" --quiet --bs=4k --name=j --filename="$f" --cpu_probe=1 --output-format=json+ --output="$E2E_TMP/j.json"
pycheck "every JSON field is in the man page" '
import json, re, sys
man = open(sys.argv[2]).read()
d = json.load(open(sys.argv[1]))
keys = set()
def walk(x):
    if isinstance(x, dict):
        for k, v in x.items():
            # percentile keys ("99.000000") and latency bins ("250") are values, not fields
            # and json+ bins ("1339" ns)
            if not re.fullmatch(r"[0-9.>=]+", k):
                keys.add(k)
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(d)
# faultline.options is the option table, checked above
keys -= set(d["jobs"][0]["faultline"]["options"].keys())
missing = sorted(k for k in keys if k not in man and k.replace("_", "\\_") not in man)
assert not missing, missing
' "$E2E_TMP/j.json" "$man"

e2e_done
