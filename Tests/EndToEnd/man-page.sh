#!/usr/bin/env bash
# STYLE.md §9: every option any subcommand's --help shows is documented in man/hark.1, and
# every subcommand is named there and in README.md.
source "$(dirname "$0")/lib.sh"
man_page="$(dirname "$0")/../../man/hark.1"
readme="$(dirname "$0")/../../README.md"
[ -f "$man_page" ] || fail "no man page at man/hark.1"

# The whole command tree, as ArgumentParser sees it: "<command path>\t--<option>" lines.
tree=$("$HARK_BIN" --experimental-dump-help | python3 -c '
import json, sys
def walk(c, path):
    yield " ".join(path), None
    for a in c.get("arguments", []):
        for n in a.get("names", []):
            if n["kind"] == "long":
                yield " ".join(path), "--" + n["name"]
    for s in c.get("subcommands", []):
        if s["commandName"] != "help":
            yield from walk(s, path + [s["commandName"]])
for path, option in walk(json.load(sys.stdin)["command"], ["hark"]):
    print(path + "\t" + (option or ""))
')

# The man source with its escapes undone: "\-\-ring" reads "--ring".
text=$(sed -e 's/\\-/-/g' -e 's/\\(em/-/g' "$man_page")
missing=()
while IFS=$'\t' read -r path option; do
  if [ -n "$option" ]; then
    grep -qF -- "$option" <<<"$text" || missing+=("$path $option")
  else
    sub=${path#hark}; sub=${sub# }
    [ -z "$sub" ] && continue
    grep -qF -- "$sub" <<<"$text" || missing+=("man: subcommand '$sub'")
    grep -qF -- "hark $sub" "$readme" || missing+=("README: subcommand 'hark $sub'")
  fi
done <<<"$tree"
[ ${#missing[@]} -eq 0 ] || fail "not documented: ${missing[*]}"
count=$(grep -c $'\t--' <<<"$tree")
pass "all $count options and every subcommand are in man/hark.1 (and subcommands in README.md)"

# DEVELOPERS.md: every Debian package hark depends on is named in the README.
packages=$(bash -c 'source "$1"; printf "%s\n" "${HARK_TEST_PACKAGES[@]}"' _ \
  "$(dirname "$0")/../../scripts/packages.sh" | sort -u)
unnamed=()
for p in $packages; do grep -qF -- "\`$p\`" "$readme" || unnamed+=("$p"); done
[ ${#unnamed[@]} -eq 0 ] || fail "README.md does not name these Debian packages: ${unnamed[*]}"
pass "README.md names all $(wc -w <<<"$packages") Debian packages scripts/packages.sh installs"
