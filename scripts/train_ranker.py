#!/usr/bin/env python3
"""Train and measure papersearch's second stage from `papersearch eval --features` dumps.

Each dump holds, per query, the features of its first fused candidates
(search.Features), its overlap, split and relevant documents. This script
fits a pairwise linear ranker (logistic loss on relevant-over-irrelevant
pairs of one query, L2-regularised) on the dev half of every signal given,
and reports, per signal and overlap band, the dev figures by 5-fold
cross-validation over queries, with the paired standard error against the
first stage. With --held-out it fits on all of the dev half and reports the
held-out half once: make no choice on that.

    scripts/train_ranker.py mlq=mlq.jsonl mlp=mlp.jsonl titles=ti.jsonl scifact=sf.jsonl

The features are the dump's: each line names them ("names") and gives each
candidate's values ("x", search.Features.Vector), so this script holds no
definition of its own. It prints the weights fitted on every dev query.
"""

import argparse
import json
import math
import sys

import numpy as np

def band(o):
    return "<40%" if o < 0.4 else ("40-60%" if o <= 0.6 else ">60%")


def load(spec):
    name, path = spec.split("=", 1)
    qs = []
    for line in open(path):
        q = json.loads(line)
        cands = q["candidates"] or []
        q["signal"] = name
        names = q.get("names") or []
        q["X"] = np.array(q.get("x") or [], dtype=float).reshape(len(cands), len(names))
        q["ids"] = [c["id"] for c in cands]
        q["band"] = band(q["overlap"])
        qs.append(q)
    return name, qs


def metrics(order_ids, rel):
    """nDCG@10, RR@10, first, top10 of a ranking (ids, best first)."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(order_ids[:10]) if rel.get(d, 0) > 0)
    grades = sorted((g for g in rel.values() if g > 0), reverse=True)[:10]
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(grades))
    rr = 0.0
    for i, d in enumerate(order_ids[:10]):
        if rel.get(d, 0) > 0:
            rr = 1.0 / (i + 1)
            break
    return np.array([dcg / ideal if ideal else 0.0, rr, float(rr == 1.0), float(rr > 0)])


def ranked(q, w, mu, sd):
    if len(q["ids"]) == 0:
        return []
    if w is None:
        s = q["X"][:, 0]
    else:
        s = ((q["X"] - mu) / sd) @ w
    order = sorted(range(len(q["ids"])), key=lambda i: (-s[i], q["ids"][i]))
    return [q["ids"][i] for i in order]


def fit(train, l2, epochs=300, lr=0.5, balance=False):
    X = np.concatenate([q["X"] for q in train if len(q["ids"])])
    per_signal = {}
    for q in train:
        per_signal[q["signal"]] = per_signal.get(q["signal"], 0) + 1
    mu, sd = X.mean(0), X.std(0) + 1e-9
    diffs = []
    for q in train:
        if not len(q["ids"]):
            continue
        Z = (q["X"] - mu) / sd
        pos = [i for i, d in enumerate(q["ids"]) if q["relevant"].get(d, 0) > 0]
        neg = [i for i, d in enumerate(q["ids"]) if q["relevant"].get(d, 0) <= 0]
        if not pos or not neg:
            continue
        # each query weighs the same however many pairs it has, and with
        # balance each signal the same however many queries it has
        d = (Z[pos][:, None, :] - Z[neg][None, :, :]).reshape(-1, Z.shape[1])
        share = 1.0 / per_signal[q["signal"]] if balance else 1.0
        diffs.append((d, share / len(d)))
    D = np.concatenate([d for d, _ in diffs])
    wt = np.concatenate([np.full(len(d), c) for d, c in diffs])
    wt /= wt.sum()
    w = np.zeros(D.shape[1])
    w[0] = 1.0
    for _ in range(epochs):
        m = D @ w
        g = -(D * (wt * (1 / (1 + np.exp(m))))[:, None]).sum(0) + l2 * w
        w -= lr * g
    return w, mu, sd


def report(rows, title):
    print(title)
    print(f"{'signal':8} {'band':7} {'n':>5} {'first(base)':>12} {'first':>7} {'Δfirst±se':>14} {'nDCG(base)':>11} {'nDCG':>7} {'ΔnDCG±se':>16} {'top10':>6}")
    for (sig, b), (base, cand) in sorted(rows.items()):
        base, cand = np.array(base), np.array(cand)
        n = len(base)
        d = cand - base
        se = d.std(0, ddof=1) / math.sqrt(n) if n > 1 else np.zeros(4)
        print(f"{sig:8} {b:7} {n:5d} {100*base[:,2].mean():11.1f}% {100*cand[:,2].mean():6.1f}% "
              f"{100*d[:,2].mean():+6.1f} ± {100*se[2]:4.1f} {base[:,0].mean():11.4f} {cand[:,0].mean():7.4f} "
              f"{d[:,0].mean():+7.4f} ± {se[0]:.4f} {100*cand[:,3].mean():5.1f}%")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+", help="signal=features.jsonl")
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--held-out", action="store_true")
    ap.add_argument("--gate", type=float, default=0, help="re-rank only queries whose evidence is below this (and train on them); 0: all")
    ap.add_argument("--balance", action="store_true", help="weigh every signal the same, not every query")
    ap.add_argument("--drop", default="", help="comma-separated features to leave out")
    ap.add_argument("--train-on", default="", help="comma-separated signals to train on (default all)")
    args = ap.parse_args()
    signals = dict(load(s) for s in args.dumps)
    all_names = next(q["names"] for qs in signals.values() for q in qs if q.get("names"))
    models = {q.get("model") for qs in signals.values() for q in qs if q.get("names")}
    if len(models) != 1:
        sys.exit(f"the dumps come from different models: {sorted(map(str, models))}")
    print(f"features of {models.pop()}")
    drop = [all_names.index(f) for f in args.drop.split(",") if f]
    keep = [i for i in range(len(all_names)) if i not in drop]
    for qs in signals.values():
        for q in qs:
            q["X"] = q["X"][:, keep] if len(q["ids"]) else q["X"][:, keep]
    names = [all_names[i] for i in keep]
    train_on = set(args.train_on.split(",")) if args.train_on else set(signals)
    dev = [q for qs in signals.values() for q in qs if not q["held_out"]]
    rows = {}

    def gated(q):
        return not args.gate or (len(q["ids"]) > 0 and q["candidates"][0]["evidence"] < args.gate)

    def add(q, w, mu, sd):
        base = metrics(ranked(q, None, None, None), q["relevant"])
        cand = metrics(ranked(q, w, mu, sd), q["relevant"]) if gated(q) else base
        for b in ("all", q["band"]):
            r = rows.setdefault((q["signal"], b), ([], []))
            r[0].append(base)
            r[1].append(cand)

    if args.held_out:
        w, mu, sd = fit([q for q in dev if q["signal"] in train_on and gated(q)], args.l2, balance=args.balance)
        for qs in signals.values():
            for q in qs:
                if q["held_out"]:
                    add(q, w, mu, sd)
        report(rows, "held-out half, ranker fitted on the dev half")
    else:
        folds = 5
        for k in range(folds):
            test = [q for i, q in enumerate(dev) if i % folds == k]
            train = [q for i, q in enumerate(dev) if i % folds != k and q["signal"] in train_on and gated(q)]
            w, mu, sd = fit(train, args.l2, balance=args.balance)
            for q in test:
                add(q, w, mu, sd)
        report(rows, f"dev half, {folds}-fold cross-validation over queries")
        w, mu, sd = fit([q for q in dev if q["signal"] in train_on and gated(q)], args.l2, balance=args.balance)
    # weights on the raw features: score = Σ w_i (x_i - mu_i) / sd_i
    print("\nweights on standardised features (fitted on every dev query):")
    for n, wi, m, s in zip(names, w, mu, sd):
        print(f"  {n:22} {wi:+.4f}   (mean {m:.4f}, sd {s:.4f})")


if __name__ == "__main__":
    sys.exit(main())
