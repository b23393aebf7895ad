#!/usr/bin/env python3
"""The floors of kiln: which folder's code may include which. A library uses only the floors
below it (docs/ARCHITECTURE.md draws the same table); this script reads every #include of the
source tree and names each one that reaches a floor its folder may not use. Exit 1 on any.

    scripts/check_layers.py [ROOT]      # the tree (default: this repository)
    scripts/check_layers.py --self-test # shows it fails on a tree that breaks a rule
"""
import os
import re
import sys
import tempfile

# Folder -> the folders its includes may name (besides its own and the C/C++ libraries).
# "kiln" is the runtime's public headers (runtime/include/kiln, installed as <kiln/...>).
RUNTIME = {"kiln", "runtime"}
ALLOWED = {
    "runtime": RUNTIME,
    "compiler/base": set(),
    "compiler/ir": {"compiler/base"},
    "compiler/target": {"compiler/base", "compiler/ir", "kiln"},
    "compiler/te": {"compiler/base", "compiler/ir"},
    "compiler/lower": {"compiler/base", "compiler/ir", "compiler/te"},
    "compiler/codegen": {"compiler/base", "compiler/ir", "compiler/target"} | RUNTIME,
    "compiler/graph": {"compiler/base", "compiler/ir"},
    "compiler/graph/rewrites": {"compiler/base", "compiler/ir", "compiler/graph"},
    "schedules": {"compiler/base", "compiler/ir", "compiler/target", "compiler/te"},
    "cost_model": {"compiler/base", "compiler/ir", "schedules"},
    "rpc": RUNTIME,
    "tuner": {"compiler/base", "compiler/ir", "compiler/target", "compiler/te", "compiler/lower",
              "compiler/codegen", "schedules", "cost_model", "rpc"} | RUNTIME,
    "network": {"compiler/base", "compiler/ir", "compiler/target", "compiler/graph",
                "compiler/graph/rewrites", "compiler/codegen", "schedules", "tuner"} | RUNTIME,
    "examples": {"kiln"},
}
# Folders whose includes are not checked: the command line and the tests use everything.
UNCHECKED = ("tools", "tests", "bench", "build")

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)


def floor_of(path, floors):
    """The longest floor that `path` (relative, with '/') lies in, or None."""
    best = None
    for f in floors:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def violations(root):
    floors = set(ALLOWED) | {"kiln"}
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        parts = [] if rel_dir == "." else rel_dir.split("/")
        if (parts and parts[0] in UNCHECKED) or any(p.startswith(".") for p in parts):
            dirnames[:] = []
            continue
        for name in filenames:
            if not name.endswith((".h", ".cpp", ".c")):
                continue
            rel = (name if rel_dir == "." else rel_dir + "/" + name)
            # The runtime's own public headers live under runtime/include/kiln.
            home = floor_of(rel, ALLOWED)
            if home is None:
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for line_no, inc in ((text.count("\n", 0, m.start()) + 1, m.group(1))
                                 for m in INCLUDE.finditer(text)):
                target = floor_of(inc, floors)
                if target is None or target == home:
                    continue
                if target not in ALLOWED[home]:
                    found.append(f"{rel}:{line_no}: {home} includes \"{inc}\" ({target}), "
                                 f"a floor it may not use (allowed: {', '.join(sorted(ALLOWED[home])) or 'none'})")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "compiler/ir"))
        os.makedirs(os.path.join(d, "compiler/graph/rewrites"))
        with open(os.path.join(d, "compiler/ir/expr.h"), "w") as f:
            f.write('#include "tuner/records.h"\n#include <vector>\n')
        with open(os.path.join(d, "compiler/graph/graph.h"), "w") as f:
            f.write('#include "compiler/graph/rewrites/fuse.h"\n')
        with open(os.path.join(d, "compiler/graph/rewrites/fuse.h"), "w") as f:
            f.write('#include "compiler/graph/graph.h"\n')
        found = violations(d)
        assert len(found) == 2, found
        assert any("compiler/ir includes \"tuner/records.h\"" in v for v in found), found
        assert any("compiler/graph includes \"compiler/graph/rewrites/fuse.h\"" in v for v in found), found
    print("check_layers self-test: both planted violations found")


def main():
    if "--self-test" in sys.argv[1:]:
        self_test()
        return 0
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) break the floors of docs/ARCHITECTURE.md")
        return 1
    print("check_layers: every include stays on its floor or below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
