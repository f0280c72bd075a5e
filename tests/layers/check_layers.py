#!/usr/bin/python3
"""Proves that a wrong include fails to build: for every pair of layers where the first does not name
the second among the layers it uses (build/layers/uses.txt, written by supervisor/CMakeLists.txt; a
layer's links are PRIVATE, so what a layer it uses uses is not its own), a file compiled as the
first layer's files are (its flags from build/compile_commands.json) that includes a header of the
second must fail with that header not found; and a header of a layer it does use must compile, so
that the failures come from the layering and not from a broken command. Also: no source includes
another folder's header by a relative path ("../"), which would go round the include roots.

    tests/layers/check_layers.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def read_uses(path):
    uses = {}
    for line in open(path):
        name, _, lower = line.partition(":")
        if name.strip():
            uses[name.strip()] = [x for x in re.split(r"[;\s]+", lower) if x]
    return uses


def compile_command(entries, folder):
    """The compiler's arguments for a file of the folder, without its source and output."""
    entry = next(e for e in entries if os.path.dirname(e["file"]) == folder)
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-c"):
            skip = True
        elif a != entry["file"]:
            out.append(a)
    return out, entry["directory"]


def compiles(cmd, cwd, header, probe_dir):
    probe = os.path.join(probe_dir, "probe.cpp")
    with open(probe, "w") as f:
        f.write(f'#include "{header}"\n')
    r = subprocess.run(cmd + ["-fsyntax-only", probe], cwd=cwd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def main():
    build, source = sys.argv[1], sys.argv[2]
    supervisor = os.path.join(source, "supervisor")
    uses = read_uses(os.path.join(build, "layers", "uses.txt"))
    entries = json.load(open(os.path.join(build, "compile_commands.json")))
    header = {layer: f"{layer}/{sorted(h for h in os.listdir(os.path.join(supervisor, layer)) if h.endswith('.h'))[0]}"
              for layer in uses}
    failures, forbidden, allowed = [], 0, 0
    with tempfile.TemporaryDirectory() as probe_dir:
        for layer in uses:
            cmd, cwd = compile_command(entries, os.path.join(supervisor, layer))
            used = set(uses[layer])
            ok, err = compiles(cmd, cwd, header[layer], probe_dir)
            allowed += 1
            if not ok:
                failures.append(f"{layer}: its own header {header[layer]} does not compile:\n{err[:2000]}")
            for other in uses:
                if other == layer or other in used:
                    continue
                forbidden += 1
                ok, err = compiles(cmd, cwd, header[other], probe_dir)
                if ok or f"{header[other]}: No such file or directory" not in err:
                    failures.append(f"{layer} -> {other}: including {header[other]} "
                                    f"{'built' if ok else 'failed for another reason: ' + err[:500]}")
    relative = []
    for folder, _, files in os.walk(supervisor):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith((".h", ".cpp")) and re.search(r'#include\s+"\.\./', open(path).read()):
                relative.append(os.path.relpath(path, source))
    failures += [f"{p}: includes a header by a relative path (../)" for p in relative]
    for f in failures:
        print("FAILED:", f)
    print(f"layers: {len(uses)}; {forbidden} forbidden includes fail to build, {allowed} layers build their own "
          f"header; {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
