#!/usr/bin/env python3
"""Fails when a shell script under `set -o pipefail` ends a pipe in `grep -q`.

grep -q exits at its first match; a writer that still has lines to write (bash's echo writes a
line per write(), a shell function or loop each of its lines) then dies of SIGPIPE, and pipefail
makes its exit 141 the pipe's status: the check reads false although the line is there. On a
loaded machine this happens often enough to fail suites. Read to the end instead
(`... | grep PATTERN >/dev/null`) or give grep the text (`grep -q PATTERN <<<"$text"`).
A pipe inside `sh -c` or `bash -c` text runs without pipefail and is left alone.

usage: shell_pipes.py SOURCE_DIR
"""
import os
import re
import sys

PIPE_INTO_GREP_Q = re.compile(r"(?<!\|)\|(?!\|)\s*grep\s+(-[A-Za-z]*q[A-Za-z]*|--quiet|--silent)\b")
SKIP_DIRS = {".git", "node_modules"}


def flagged(line):
    """Whether a script line (under pipefail) pipes into grep -q outside sh -c / bash -c text."""
    if line.lstrip().startswith("#") or "sh -c" in line:  # a comment; sh -c or bash -c text
        return False
    return bool(PIPE_INTO_GREP_Q.search(line))


def self_test():
    assert flagged('  node_names | grep -qxF -- "$1" || die "x"')
    assert flagged('has_line() { echo "$OUT" | grep -qE "$1"; }')
    assert not flagged('has_line() { grep -qE "$1" <<<"$OUT"; }')
    assert not flagged('node_names | grep -xF -- "$1" >/dev/null || die')
    assert not flagged("check x sh -c \"ls d | grep -q step_\"")
    assert not flagged("# a comment: echo | grep -q x")
    assert not flagged('[ -z "$1" ] || grep -qx "A=$1" <<<"$env" || continue')


def scripts(root):
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            if name.endswith(".sh"):
                yield os.path.join(here, name)


def main():
    self_test()
    root = sys.argv[1]
    problems, seen = [], 0
    for path in sorted(scripts(root)):
        text = open(path, encoding="utf-8", errors="replace").read()
        if "pipefail" not in text:
            continue
        seen += 1
        for number, line in enumerate(text.splitlines(), 1):
            if flagged(line):
                problems.append(f"{os.path.relpath(path, root)}:{number}: a pipe ends in grep -q under pipefail "
                                f"(its writer may die of SIGPIPE): use 'grep ... >/dev/null' or 'grep -q ... <<<\"$text\"'")
    for p in problems:
        print(p)
    print(f"shell_pipes: {seen} scripts under pipefail read, {len(problems)} pipes into grep -q")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
