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
import gzip
import json
import sys

SOURCE = "../shared/data/papers/ml-papers.jsonl.gz"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(f"usage: {sys.argv[0]} N OUT.jsonl.gz [SOURCE.jsonl.gz]")
    n, out = int(sys.argv[1]), sys.argv[2]
    source = sys.argv[3] if len(sys.argv) == 4 else SOURCE
    with gzip.open(source, "rt", encoding="utf-8") as f:
        papers = [json.loads(line) for line in f if line.strip()]
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=1) as w:
        for i in range(n):
            copy, p = divmod(i, len(papers))
            p = dict(papers[p])
            if copy:
                p["id"] = f"{p['id']}~{copy}"
                p["title"] = f"{p['title']} ({copy})"
            w.write(json.dumps(p, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
