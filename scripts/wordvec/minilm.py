"""all-MiniLM-L6-v2 in numpy, the corpus and how the table's reader splits it, and the
word-vector table file: what distill.py, learn.py and contexts.py share. The table
format is read by crates/waypoint-wordvec (src/table.rs)."""
import argparse
import json
import random
import struct
import sys

import numpy as np
import scipy.special
from safetensors.numpy import load_file
from tokenizers import Tokenizer


def corpus_parser():
    """The arguments learn.py and contexts.py share: MODEL_DIR OUT_FILE CORPUS[:N]...
    [--dims 128]."""
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir")
    parser.add_argument("out_file")
    parser.add_argument("corpus", nargs="+")
    parser.add_argument("--dims", type=int, default=128)
    return parser


def read_corpus(specs):
    """The distinct lower-cased requests of JSON-lines files, sorted; "PATH:N" takes a
    seeded sample of N of a file's requests (the same every run)."""
    texts = set()
    for spec in specs:
        path, _, n = spec.partition(":")
        lines = sorted({json.loads(l)["request"].strip().lower() for l in open(path) if l.strip()})
        random.Random(7).shuffle(lines)
        texts.update(lines[: int(n)] if n else lines)
    texts = sorted(texts)
    print(f"{len(texts)} sentences", file=sys.stderr)
    return texts


def encode(model_dir, texts):
    """Each text as the model's tokenizer splits it, unpadded and truncated as
    sentence-transformers reads this model."""
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    return [tokenizer.encode(t) for t in texts]


def batches_by_length(encoded, size=64):
    """Index lists of texts of one length, so no batch needs padding."""
    by_length = {}
    for i, e in enumerate(encoded):
        by_length.setdefault(len(e.ids), []).append(i)
    for _, group in sorted(by_length.items()):
        for start in range(0, len(group), size):
            yield group[start:start + size]


def read_pieces(text, encoding, unknown):
    """`(position, piece)` for each piece crates/waypoint-wordvec reads of the text: the
    pieces of each word with a letter, unknown words left out."""
    words = {}
    for at, (piece, word) in enumerate(zip(encoding.ids, encoding.word_ids)):
        if word is not None and piece != unknown:
            words.setdefault(word, []).append((at, piece))
    for word, pieces in words.items():
        start, end = encoding.word_to_chars(word)
        if any(c.isalpha() for c in text[start:end]):
            yield from pieces


class Model:
    """The model's weights and vocabulary; `forward` runs the encoder."""

    def __init__(self, model_dir):
        weights = load_file(f"{model_dir}/model.safetensors")
        prefix = "" if "embeddings.word_embeddings.weight" in weights else "bert."
        self.weights = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in weights.items()}
        config = json.load(open(f"{model_dir}/config.json"))
        self.hidden = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        vocab = json.load(open(f"{model_dir}/tokenizer.json"))["model"]["vocab"]
        self.vocab = vocab
        self.tokens = sorted(vocab, key=vocab.get)

    def w(self, key):
        return self.weights[key]

    def norm(self, x, key):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w(key + ".weight") + self.w(key + ".bias")

    def dense(self, x, key):
        return x @ self.w(key + ".weight").T + self.w(key + ".bias")

    def forward(self, ids):
        """Token outputs for a batch of id rows of one length (no padding)."""
        w, hidden, heads = self.w, self.hidden, self.heads
        batch, length = ids.shape
        x = (w("embeddings.word_embeddings.weight")[ids]
             + w("embeddings.position_embeddings.weight")[np.arange(length)][None]
             + w("embeddings.token_type_embeddings.weight")[0][None, None])
        x = self.norm(x, "embeddings.LayerNorm")
        d = hidden // heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            split = lambda t: t.reshape(batch, length, heads, d).transpose(0, 2, 1, 3)
            q = split(self.dense(x, p + "attention.self.query"))
            k = split(self.dense(x, p + "attention.self.key"))
            v = split(self.dense(x, p + "attention.self.value"))
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self.norm(self.dense(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self.dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + scipy.special.erf(h / np.sqrt(2)))
            x = self.norm(self.dense(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def pieces_alone(self):
        """Each vocabulary piece run through the model alone ([CLS] piece [SEP]), its
        outputs mean-pooled: one row per piece."""
        cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        rows = np.zeros((len(self.tokens), self.hidden), np.float64)
        for start in range(0, len(self.tokens), 512):
            end = min(len(self.tokens), start + 512)
            ids = np.array([[cls, t, sep] for t in range(start, end)])
            rows[start:end] = self.forward(ids).mean(1)
            print(f"\r{end}/{len(self.tokens)} tokens", end="", file=sys.stderr)
        print(file=sys.stderr)
        return rows


def reduce(rows, dims):
    """Centres the rows and keeps `dims` principal components; gives the rows and the
    components (`None` when all dimensions are kept)."""
    rows = rows - rows.mean(0)
    if dims >= rows.shape[1]:
        return rows, None
    _, _, vt = np.linalg.svd(rows, full_matrices=False)
    vt = vt[:dims]
    # Fix each component's sign so the file is the same on every run.
    vt *= np.sign(vt[np.arange(dims), np.abs(vt).argmax(1)])[:, None]
    return rows @ vt.T, vt


def rank_weights(n):
    """log(1 + rank): the vocabulary lists frequent pieces first, so rarer pieces weigh
    more, as inverse frequency would."""
    return np.log(1 + np.arange(n))[:, None]


def write_table(path, tokens, rows):
    """8-bit values with one scale per row, in the format crates/waypoint-wordvec reads."""
    scale = np.abs(rows).max(1) / 127
    scale[scale == 0] = 1
    values = np.clip(np.round(rows / scale[:, None]), -127, 127).astype(np.int8)
    with open(path, "wb") as out:
        out.write(b"WPWV" + struct.pack("<III", 1, len(tokens), rows.shape[1]))
        for t in tokens:
            b = t.encode()
            out.write(struct.pack("<B", len(b)) + b)
        out.write(scale.astype("<f4").tobytes())
        out.write(values.tobytes())
    print(f"{path}: {len(tokens)} pieces x {rows.shape[1]} dims", file=sys.stderr)
