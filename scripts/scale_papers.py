#!/usr/bin/env python3
"""Write a corpus of N papers made from the shared ML papers, for measuring a
real-size store at scale (`papersearch bench --papers OUT`).

Each paper past the first copy keeps its title and abstract and gets an id
and a title suffix of its own (``<id>~k``, `` (k)``), so every record is a
distinct paper of real size: its text, sentences and terms as the original's.
Papers are written round-robin (copy 1 of every paper, then copy 2, ...), so
a prefix of the output is a spread of the whole corpus.

    python3 scripts/scale_papers.py 1000000 /tmp/million.jsonl.gz
"""
import argparse
import gzip
import json

SOURCE = "../shared/data/papers/ml-papers.jsonl.gz"


def main():
    ap = argparse.ArgumentParser(description="Write N papers made from the shared ML papers (JSONL, gzip).")
    ap.add_argument("n", type=int, help="how many papers to write")
    ap.add_argument("out", help="the .jsonl.gz file to write")
    ap.add_argument("source", nargs="?", default=SOURCE, help=f"the papers to copy (default {SOURCE})")
    args = ap.parse_args()
    if args.n < 1:
        ap.error("n must be at least 1")
    with gzip.open(args.source, "rt", encoding="utf-8") as f:
        papers = [json.loads(line) for line in f if line.strip()]
    if not papers:
        ap.error(f"{args.source} holds no papers")
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=1) as w:
        for i in range(args.n):
            copy, p = divmod(i, len(papers))
            p = dict(papers[p])
            if copy:
                p["id"] = f"{p['id']}~{copy}"
                p["title"] = f"{p['title']} ({copy})"
            w.write(json.dumps(p, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
