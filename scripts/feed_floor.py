#!/usr/bin/env python3
"""Measure a feed's relevance floor from `papersearch eval --features` files.

A feed lists the first LIMIT (20) papers a saved search ranks among those
added lately. The floor is a dense cosine similarity (as the explanation's
dense_score reports it) under which a paper is not listed. For each cosine
from 0.70 to 0.90 this prints, per signal and for the dev or held-out half:

- for judged signals (NAME=FILE): the share of the judged-relevant papers
  among the first LIMIT that the floor keeps, with its standard error over
  queries;
- for unrelated signals (NAME=FILE marked with a leading '!': queries of one
  field over papers of another, nothing relevant by construction): the mean
  number of the first LIMIT papers the floor keeps, and the share of queries
  left with any.

Choose on --half dev, report --half held-out.

  scripts/feed_floor.py --half dev mlq=/tmp/f_mlq.jsonl sf=/tmp/f_sf.jsonl '!sf-on-ml=/tmp/f_x1.jsonl'

The questions the core models compare and the weakly evidenced ones that
all models compare get a floor each (--weak): their cosines differ in scale.
"""
import argparse
import json
import math


def load(path, half, weak):
    """The queries of one half whose evidence puts them in the group asked
    for: weak (under WEAK, compared by all of the models) or not."""
    out = []
    with open(path) as f:
        for line in f:
            q = json.loads(line)
            if q["held_out"] != (half == "held-out") or not q["candidates"]:
                continue
            if (q["candidates"][0]["evidence"] < WEAK) != weak:
                continue
            out.append(q)
    return out


# search.DefaultModelGate.Below: a question whose lexical evidence is under
# it is compared by all of the store's models, else by the core ones.
WEAK = 0.4


def mean_se(xs):
    if not xs:
        return float("nan"), float("nan")
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    v = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(v / len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", choices=["dev", "held-out"], default="dev")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--weak", action="store_true", help="the weakly evidenced questions (all models compare them) instead of the others")
    ap.add_argument("--floors", default="0.70,0.72,0.74,0.76,0.78,0.79,0.80,0.81,0.82,0.83,0.84,0.86,0.88,0.90")
    ap.add_argument("signals", nargs="+")
    a = ap.parse_args()
    floors = [float(x) for x in a.floors.split(",")]
    signals = []
    for s in a.signals:
        name, path = s.split("=", 1)
        unrelated = name.startswith("!")
        signals.append((name.lstrip("!"), unrelated, load(path, a.half, a.weak)))
    head = ["floor"] + [f"{n} ({'unrelated' if u else 'kept'}, {len(qs)} q)" for n, u, qs in signals]
    print(" | ".join(head))
    print(" | ".join(["---"] * len(head)))
    for fl in floors:
        row = [f"{fl:.2f}"]
        for name, unrelated, qs in signals:
            if unrelated:
                kept = [sum(1 for c in q["candidates"][: a.limit] if c["dense_rank"] and c["dense"] >= fl) for q in qs]
                m, se = mean_se(kept)
                anyshare = sum(1 for k in kept if k) / max(len(kept), 1)
                row.append(f"{m:.2f} ± {se:.2f} listed, {100*anyshare:.0f}% of queries any")
            else:
                # Per query: the share of its judged-relevant papers among
                # the first LIMIT that the floor keeps.
                shares = []
                for q in qs:
                    rel = [c for c in q["candidates"][: a.limit] if q["relevant"].get(c["id"], 0) > 0]
                    if rel:
                        shares.append(sum(1 for c in rel if c["dense_rank"] and c["dense"] >= fl) / len(rel))
                m, se = mean_se(shares)
                row.append(f"{100*m:.1f}% ± {100*se:.1f}")
        print(" | ".join(row))


if __name__ == "__main__":
    main()
