#!/bin/bash
# contrib/prometheus/rngd-rules.yml with Debian's promtool (package prometheus): the file
# loads (`promtool check rules`), and `promtool test rules` runs
# tests/prometheus-rules.test.yml, where each alert fires on the series that should trigger
# it and stays silent on the healthy ones. Skips, saying so, where promtool is not
# installed (scripts/deps installs it).
set -u
. "$(dirname "$0")/lib.sh" prometheus-rules

command -v promtool >/dev/null 2>&1 || {
	echo "prometheus-rules: skipped: promtool not installed (Debian package prometheus; scripts/deps installs it)"
	exit 77
}
rules=$top_srcdir/contrib/prometheus/rngd-rules.yml
unit=$top_srcdir/tests/prometheus-rules.test.yml

if out=$(promtool check rules "$rules" 2>&1); then
	ok "promtool check rules: $(echo "$out" | grep -o 'SUCCESS.*')"
else
	fail "promtool check rules: $out"
fi
echo "$out"
# Every alert of the file has a test.
missing=
for a in $(sed -n 's/^ *- alert: *//p' "$rules"); do
	grep -q "alertname: $a\$" "$unit" || missing="$missing $a"
done
if [ -z "$missing" ]; then
	ok "every alert has unit tests: $(sed -n 's/^ *- alert: *//p' "$rules" | tr '\n' ' ')"
else
	fail "alerts without a unit test:$missing"
fi
# promtool resolves rule_files from the test file's directory.
if out=$(cd "$T" && promtool test rules "$unit" 2>&1); then
	ok "promtool test rules: $(grep -c 'eval_time' "$unit") evaluations, each as expected"
else
	fail "promtool test rules: $out"
fi
echo "$out"
finish
