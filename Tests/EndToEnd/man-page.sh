#!/usr/bin/env bash
# docs/HACKING.md, "Documentation and commits": every option any subcommand's --help shows is documented in man/hark.1, and
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
        # Hidden ones (the interface'"'"'s background-player) are hark'"'"'s own plumbing, started
        # by hark, not by hand; the man page names them under FILES.
        if s["commandName"] != "help" and s.get("shouldDisplay", True):
            yield from walk(s, path + [s["commandName"]])
for path, option in walk(json.load(sys.stdin)["command"], ["hark"]):
    print(path + "\t" + (option or ""))
')

# Each option is documented within its own subcommand's section of OPTIONS (".SS simulate alarm"),
# or in a section shared by name (".SS call and every simulate app: sound"); --help and --version
# under ".SS Every command". Every subcommand is named in the man page and in the README.
missing=$(python3 - "$tree" "$readme" "$man_page" <<'PY'
import re, sys
tree, readme = sys.argv[1], open(sys.argv[2]).read()
text = open(sys.argv[3]).read().replace("\\-", "-").replace("\\(em", "-")
opts = text.split("\n.SH OPTIONS\n", 1)[1].split("\n.SH ", 1)[0]
sections = {}
for part in re.split(r"\n\.SS ", "\n" + opts)[1:]:
    title, _, body = part.partition("\n")
    sections[title.strip()] = body
def covers(title, sub):
    if title == sub:
        return True
    # "call and every simulate app: sound" covers call and each simulate app.
    names = re.split(r" and |: |, ", title)
    return any(n == sub or (n.startswith("every ") and sub.startswith(n.split()[1] + " "))
               for n in names)
missing = []
for line in tree.splitlines():
    path, _, option = line.partition("\t")
    sub = path[len("hark"):].strip()
    if not option:
        if sub and sub not in text:
            missing.append(f"man: subcommand '{sub}'")
        if sub and f"hark {sub}" not in readme:
            missing.append(f"README: subcommand 'hark {sub}'")
        continue
    if option in ("--help", "--version"):
        if option not in sections.get("Every command", ""):
            missing.append(f"man: {option} under 'Every command'")
        continue
    where = [t for t in sections if covers(t, sub)]
    if not any(option in sections[t] for t in where):
        missing.append(f"man: 'hark {sub} {option}' in the section of '{sub}'"
                       + ("" if where else " (there is none)"))
print("; ".join(missing))
PY
)
[ -z "$missing" ] || fail "not documented: $missing"
count=$(grep -c $'\t--' <<<"$tree")
pass "all $count options are in their subcommand's section of man/hark.1, every subcommand there and in README.md"

# Every command's --help and -h show its usage and exit 0: ctl, which takes its words as they
# come (a seek of -15), once answered its own --help with "unknown command '--help'".
while IFS= read -r path; do
  for flag in --help -h; do
    # shellcheck disable=SC2086  # the path is words: "hark simulate alarm"
    out=$("$HARK_BIN" ${path#hark} $flag 2>&1) || fail "'$path $flag' exited $?: ${out:0:200}"
    grep -qF "USAGE: $path" <<<"$out" || fail "'$path $flag' showed no usage: ${out:0:200}"
  done
done < <(cut -f1 <<<"$tree" | sort -u)
pass "every command's --help and -h show its usage"

# Nothing cites a file outside the repository (the rules are docs/MANNERS.md): a reader of the
# repository could not open it. (The scripts that build the desktop stacks look for their
# tarballs beside the clone, where CI puts them: an input, not a citation.)
# (--no-index: the files as they are, what .gitignore leaves out aside, in a clone or in the copy
# of the tree scripts/test builds in, which has no .git.)
root="$(dirname "$0")/../.."
outside=$(cd "$root" && git grep --no-index --exclude-standard -nE 'SPEC\.md|STYLE\.md|\.\./shared|/work/' -- . \
  ':!Tests/EndToEnd/man-page.sh' ':!scripts/desktop-stacks' ':!scripts/test' || true)
[ -z "$outside" ] || fail "cites files outside the repository: $outside"
[ -s "$root/docs/MANNERS.md" ] || fail "no docs/MANNERS.md"
for g in $(seq 1 20); do
  grep -qE "^#+ .*\bG$g\b" "$root/docs/MANNERS.md" || fail "docs/MANNERS.md has no heading for G$g"
done
grep -qF "docs/MANNERS.md" <<<"$("$HARK_BIN" --help)" || fail "hark --help does not cite docs/MANNERS.md"
grep -qF "docs/MANNERS.md" "$man_page" || fail "the man page does not cite docs/MANNERS.md"
pass "the rules G1-G20 are docs/MANNERS.md, cited by --help and the man page; nothing cites a file outside the repository"

# One home for each fact: the fields of 'hark status --json' are described in docs/PROTOCOL.md
# alone (the README and the man page point there).
for f in serverPid nowPlaying interrupted pausedBy; do
  grep -qF "\`$f\`" "$root/docs/PROTOCOL.md" || fail "docs/PROTOCOL.md does not describe '$f'"
done
grep -qF '| `serverPid` |' "$readme" "$root/docs/TOUR.md" && fail "the status --json table is written twice"
grep -qF "serverPid" "$man_page" && fail "the man page lists the status --json fields again"
pass "the status --json fields have one home, docs/PROTOCOL.md"

# Every Debian package hark needs to build and run is named in the README, and every package
# the tests add in docs/HACKING.md, each with why.
hacking="$root/docs/HACKING.md"
list() { bash -c 'source "$1"; printf "%s\n" "${!2}"' _ "$root/scripts/packages.sh" "$1" | sort -u; }
runtime=$(list 'HARK_RUNTIME_PACKAGES[@]')
tests=$(comm -13 <(echo "$runtime") <(list 'HARK_TEST_PACKAGES[@]'))
unnamed=()
for p in $runtime; do grep -qF -- "\`$p\`" "$readme" || unnamed+=("README.md: $p"); done
for p in $tests; do grep -qF -- "\`$p\`" "$hacking" || unnamed+=("docs/HACKING.md: $p"); done
[ ${#unnamed[@]} -eq 0 ] || fail "Debian packages not named: ${unnamed[*]}"
pass "README.md names the $(wc -w <<<"$runtime") packages hark runs on, docs/HACKING.md the $(wc -w <<<"$tests") the tests add"
