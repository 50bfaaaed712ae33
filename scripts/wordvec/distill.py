"""Distil all-MiniLM-L6-v2 into static word vectors: one vector per WordPiece token.

Each token of the model's vocabulary is run through the model alone ([CLS] token [SEP])
and its output mean-pooled; the vectors are centred, reduced to DIMS principal
components, weighted by log(1 + rank) (the vocabulary lists frequent pieces first, so
rarer pieces weigh more, as inverse frequency would), and stored as 8-bit values with
one scale per row. A sentence's static vector is then the mean of its pieces' rows: no
model at run time. The file format is read by crates/waypoint-wordvec (docs/routing.md).

    python distill.py MODEL_DIR OUT_FILE [DIMS]
"""
import json, struct, sys

import numpy as np
import scipy.special
from safetensors.numpy import load_file

model_dir, out_path = sys.argv[1], sys.argv[2]
dims = int(sys.argv[3]) if len(sys.argv) > 3 else 128

weights = load_file(f"{model_dir}/model.safetensors")
prefix = "" if "embeddings.word_embeddings.weight" in weights else "bert."
w = lambda key: weights[prefix + key]
config = json.load(open(f"{model_dir}/config.json"))
hidden, heads, layers = config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"]
vocab = json.load(open(f"{model_dir}/tokenizer.json"))["model"]["vocab"]
tokens = sorted(vocab, key=vocab.get)
cls, sep = vocab["[CLS]"], vocab["[SEP]"]


def norm(x, key):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w(key + ".weight") + w(key + ".bias")


def dense(x, key):
    return x @ w(key + ".weight").T + w(key + ".bias")


def forward(ids):
    batch, length = ids.shape
    x = (w("embeddings.word_embeddings.weight")[ids]
         + w("embeddings.position_embeddings.weight")[np.arange(length)][None]
         + w("embeddings.token_type_embeddings.weight")[0][None, None])
    x = norm(x, "embeddings.LayerNorm")
    d = hidden // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."
        split = lambda t: t.reshape(batch, length, heads, d).transpose(0, 2, 1, 3)
        q = split(dense(x, p + "attention.self.query"))
        k = split(dense(x, p + "attention.self.key"))
        v = split(dense(x, p + "attention.self.value"))
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = norm(dense(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + scipy.special.erf(h / np.sqrt(2)))
        x = norm(dense(h, p + "output.dense") + x, p + "output.LayerNorm")
    return x


rows = np.zeros((len(tokens), hidden), np.float64)
for start in range(0, len(tokens), 512):
    ids = np.array([[cls, t, sep] for t in range(start, min(len(tokens), start + 512))])
    rows[start:start + len(ids)] = forward(ids).mean(1)
    print(f"\r{start + len(ids)}/{len(tokens)} tokens", end="", file=sys.stderr)
print(file=sys.stderr)

rows -= rows.mean(0)
if dims < hidden:
    _, _, vt = np.linalg.svd(rows, full_matrices=False)
    vt = vt[:dims]
    # Fix each component's sign so the file is the same on every run.
    vt *= np.sign(vt[np.arange(dims), np.abs(vt).argmax(1)])[:, None]
    rows = rows @ vt.T
rows *= np.log(1 + np.arange(len(tokens)))[:, None]

scale = np.abs(rows).max(1) / 127
scale[scale == 0] = 1
values = np.clip(np.round(rows / scale[:, None]), -127, 127).astype(np.int8)

with open(out_path, "wb") as out:
    out.write(b"WPWV" + struct.pack("<III", 1, len(tokens), rows.shape[1]))
    for t in tokens:
        b = t.encode()
        out.write(struct.pack("<B", len(b)) + b)
    out.write(scale.astype("<f4").tobytes())
    out.write(values.tobytes())
print(f"{out_path}: {len(tokens)} pieces x {rows.shape[1]} dims", file=sys.stderr)
