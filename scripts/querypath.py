#!/usr/bin/env python3
"""Trace the functions one free-text search calls, from the handler
(api.(*Server).search) to its return with the ranked page,
and count the files the path visits (issue 42's measure).

Needs Delve (go install github.com/go-delve/delve/cmd/dlv@latest). Builds
scripts/querypath/main.go without optimisation, runs it under dlv with a
tracepoint on every function of the module's serving packages once the
seeds are stored, and walks the trace: the first call of each function in
call order (a goroutine's calls spliced in where it started), each call
into another file a stop. It reports the stops, the files and the returns
to a file already left (stops minus files), with and without the store's
internals (search/sqlite, search/storage, search/lexical, internal/, fold.go).

    python3 scripts/querypath.py           # a free-text search
    python3 scripts/querypath.py import    # an import (POST /v1/imports) to the store
"""
import os, re, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOD = "github.com/papersearch/papersearch"
TRACED = r"^(github\.com/papersearch/papersearch\.|github\.com/papersearch/papersearch/(api|search|search/embedding|search/storage|search/sqlite|search/lexical|internal/topk|catalog|catalog/imports|seeds|seeds/bibtex|seeds/latex)\.)"
FUNC = re.compile(r"^func (?:\(\w* ?\*?(\w+)(?:\[[^\]]*\])?\) )?(\w+)")


def funcmap():
    """Each function of the module, "pkgpath.(*T).Name", to its file."""
    out = {}
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "testdata"]
        rel = os.path.relpath(d, ROOT)
        pkg = MOD if rel == "." else MOD + "/" + rel.replace(os.sep, "/")
        for f in files:
            if not f.endswith(".go") or f.endswith("_test.go"):
                continue
            path = os.path.join(d, f)
            for line in open(path, encoding="utf-8"):
                m = FUNC.match(line)
                if not m:
                    continue
                recv, name = m.groups()
                if recv:
                    ptr = re.match(r"^func \(\w* ?\*", line) is not None
                    name = ("(*%s)" % recv if ptr else recv) + "." + name
                out[pkg + "." + name] = os.path.relpath(path, ROOT).replace(os.sep, "/")
    return out


def trace(tmp, mode):
    exe = os.path.join(tmp, "querypath")
    subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", exe, "scripts/querypath/main.go"], cwd=ROOT, check=True)
    init = os.path.join(tmp, "init")
    with open(init, "w") as f:
        f.write("break main.marker\ncontinue\ntrace /%s/\ncontinue\nexit -c\n" % TRACED.replace("/", "\\/"))
    dlv = shutil.which("dlv") or os.path.expanduser("~/go/bin/dlv")
    res = subprocess.run([dlv, "exec", exe, "--init", init, "--allow-non-terminal-interactive=true", "--"] + ([mode] if mode else []),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=ROOT)
    return res.stdout.splitlines()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in ("", "import"):
        sys.exit("usage: querypath.py [import]")
    files = funcmap()
    event = re.compile(r"^(>>?) goroutine\((\d+)\): ((?:[\w.-]+/)*[\w-]+(?:\.\(\*\w+\))?(?:\.[\w-]+)+)")

    def fileof(fn):
        base = re.sub(r"(\.func\d+)+(\.\d+)*$", "", re.sub(r"\[.*?\]", "", fn))
        base = re.sub(r"-fm$", "", re.sub(r"\.gowrap\d+$", "", base))
        return files.get(base)

    with tempfile.TemporaryDirectory() as tmp:
        lines = trace(tmp, mode)
    events = [m.groups() for m in map(event.match, lines) if m and m.group(3) != "main.marker"]
    if not events:
        sys.exit("no trace: is dlv installed?")
    main_g = events[0][1]
    by_g, spawn, main_seen = {}, {}, 0
    for kind, g, fn in events:
        if g not in by_g:
            by_g[g] = []
            if g != main_g:
                spawn.setdefault(main_seen, []).append(g)
        by_g[g].append((kind, fn))
        if g == main_g:
            main_seen += 1
    if mode == "import":
        # From the handler's call to its return, then the job it started
        # (the goroutines after the request's, to the import's end); the
        # client's polls of the job aside.
        handler = MOD + "/api.(*Server).startImport"
        mine = by_g[main_g]
        start = next(i for i, (k, fn) in enumerate(mine) if k == ">" and fn == handler)
        end = max(i for i, (k, fn) in enumerate(mine) if fn == handler)
        ordered = mine[start:end + 1]
        for g in by_g:
            if g != main_g:
                ordered.extend(by_g[g])
    else:
        ordered = []
        for i, e in enumerate(by_g[main_g]):
            for g in spawn.get(i, []):
                ordered.extend(by_g[g])
            ordered.append(e)
        # From the handler's call to its return: the middleware around it
        # aside.
        handler = MOD + "/api.(*Server).search"
        start = next(i for i, (k, fn) in enumerate(ordered) if k == ">" and fn == handler)
        end = max(i for i, (k, fn) in enumerate(ordered) if fn == handler)
        ordered = ordered[start:end + 1]
    seen, path = set(), []
    for kind, fn in ordered:
        if kind == ">" and fn not in seen:
            seen.add(fn)
            if fileof(fn):
                path.append(fileof(fn))

    def report(label, keep):
        stops = []
        for f in path:
            if keep(f) and (not stops or stops[-1] != f):
                stops.append(f)
        print("%s: %d stops in %d files, %d returns to a file already left" % (label, len(stops), len(set(stops)), len(stops) - len(set(stops))))
        print("  " + " -> ".join(stops))

    print("%d calls of %d functions" % (sum(1 for k, _ in ordered if k == ">"), len(seen)))
    report("every traced package", lambda f: True)
    report("the service's own path (without the store: search/sqlite, search/storage, search/lexical, internal/, fold.go)",
           lambda f: not f.startswith(("search/sqlite/", "search/lexical/", "search/storage/", "internal/")) and f != "fold.go")
    if mode == "import":
        # The calls an import makes into leaves, aside as the store's are:
        # the format's reader (seeds/) and the domain's rules (the root
        # package: checking, cleaning and keying a paper).
        report("its walk from the handler to the store (the store, the format's reader under seeds/ and the domain's rules in the root package aside)",
               lambda f: "/" in f and not f.startswith(("search/sqlite/", "search/lexical/", "search/storage/", "internal/", "seeds/")))


if __name__ == "__main__":
    main()
