"""Fit the static word vectors to whole sentences: one row per WordPiece token, chosen so
that a sentence's mean row comes near all-MiniLM-L6-v2's vector for that sentence.

The distilled table (distill.py) reads each piece alone, so a sentence's mean row knows
its words but not what the model makes of them together. Here the model encodes a corpus
of requests (mean-pooled, unit length, less the corpus mean), the vectors are reduced to
the distilled table's principal components, and the rows are the least-squares fit of
every sentence's mean row to its vector, pulled towards the distilled rows by LAMBDA
(times the mean number of sentences a piece is in), so pieces the corpus lacks keep their
distilled rows. Pieces are read as crates/waypoint-wordvec reads them: the tokenizer's
pieces of each word with a letter, unknown words left out.

    python learn.py MODEL_DIR OUT_FILE CORPUS[:N]... [--dims 128] [--lambda 3]

A CORPUS is a JSON-lines file with a "request" field per line (the evaluation contract's
case files); ":N" takes a sample of N of its distinct requests (seeded, the same every
run). Needs numpy, scipy, safetensors and tokenizers.
"""
import sys

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import cg

from minilm import Model, batches_by_length, corpus_parser, encode, rank_weights, read_corpus, read_pieces, reduce, write_table

parser = corpus_parser()
parser.add_argument("--lambda", dest="lam", type=float, default=3.0)
args = parser.parse_args()

texts = read_corpus(args.corpus)
model = Model(args.model_dir)
encoded = encode(args.model_dir, texts)

# The model's sentence vectors.
vectors = np.zeros((len(texts), model.hidden), np.float64)
done = 0
for batch in batches_by_length(encoded):
    out = model.forward(np.array([encoded[i].ids for i in batch])).mean(1)
    vectors[batch] = out / np.linalg.norm(out, axis=1, keepdims=True)
    done += len(batch)
    print(f"\r{done}/{len(texts)} sentences encoded", end="", file=sys.stderr)
print(file=sys.stderr)

# Each sentence's pieces, as the table's reader takes them.
unknown = model.vocab["[UNK]"]
rows, cols = [], []
for i, (text, e) in enumerate(zip(texts, encoded)):
    for _, piece in read_pieces(text, e, unknown):
        rows.append(i)
        cols.append(piece)
vocab_size = len(model.tokens)
s = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), vocab_size))
count = np.asarray(s.sum(1)).ravel()
count[count == 0] = 1
s = sp.diags(1 / count) @ s  # a sentence's row: the mean of its pieces'

distilled, components = reduce(model.pieces_alone(), args.dims)
distilled *= rank_weights(vocab_size)
target = vectors - vectors.mean(0)
if components is not None:
    target = target @ components.T
start = s @ distilled
target *= (start * target).sum() / (target * target).sum()  # on the distilled rows' scale

gram = (s.T @ s).tocsr()
pull = args.lam * gram.diagonal().mean()
system = gram + pull * sp.identity(vocab_size)
rhs = s.T @ target + pull * distilled
fitted = np.zeros_like(distilled)
for j in range(distilled.shape[1]):
    fitted[:, j], _ = cg(system, rhs[:, j], x0=distilled[:, j], rtol=1e-5, maxiter=300)


def mean_cosine(pred):
    norms = np.linalg.norm(pred, axis=1).clip(1e-12) * np.linalg.norm(target, axis=1).clip(1e-12)
    return ((pred * target).sum(1) / norms).mean()


print(f"mean cosine to the model's sentence vectors: distilled {mean_cosine(start):.3f}, "
      f"fitted {mean_cosine(s @ fitted):.3f}", file=sys.stderr)
write_table(args.out_file, model.tokens, fitted)
