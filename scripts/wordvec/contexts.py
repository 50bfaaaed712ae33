"""Static word vectors from the pieces in context: one row per WordPiece token, the mean
of all-MiniLM-L6-v2's outputs for that piece over a corpus of requests.

The distilled table (distill.py) reads each piece alone, so "book" is the same row in
"book a table" and "read a book". Here the model reads whole requests and each piece's
row is the mean of its outputs where it stood, pulled towards its row read alone by K
sentences' worth (pieces the corpus lacks keep that row, moved by the mean difference
between the two kinds of row). The rows are then centred, reduced to DIMS principal
components and weighted by log(1 + rank), as distill.py does. Pieces are read as
crates/waypoint-wordvec reads them: the tokenizer's pieces of each word with a letter,
unknown words left out. The router's network reads this table (docs/routing.md,
"Static word vectors").

    python contexts.py MODEL_DIR OUT_FILE CORPUS[:N]... [--dims 128] [--k 3]

CORPUS as learn.py takes it. Needs numpy, scipy, safetensors and tokenizers.
"""
import sys

import numpy as np

from minilm import Model, batches_by_length, corpus_parser, encode, rank_weights, read_corpus, read_pieces, reduce, write_table

parser = corpus_parser()
parser.add_argument("--k", type=float, default=3.0)
args = parser.parse_args()

texts = read_corpus(args.corpus)
model = Model(args.model_dir)
encoded = encode(args.model_dir, texts)
unknown = model.vocab["[UNK]"]
vocab_size = len(model.tokens)

# Each piece's outputs summed where it stands.
sums = np.zeros((vocab_size, model.hidden), np.float64)
counts = np.zeros(vocab_size, np.float64)
done = 0
for batch in batches_by_length(encoded):
    out = model.forward(np.array([encoded[i].ids for i in batch]))
    for row, i in enumerate(batch):
        for at, piece in read_pieces(texts[i], encoded[i], unknown):
            sums[piece] += out[row, at]
            counts[piece] += 1
    done += len(batch)
    print(f"\r{done}/{len(texts)} sentences read", end="", file=sys.stderr)
print(file=sys.stderr)

alone = model.pieces_alone()
seen = counts > 0
# A piece read alone sits elsewhere than one read in a sentence; the shift puts the
# pieces the corpus lacks among the others.
shift = (sums[seen] / counts[seen, None]).mean(0) - alone[seen].mean(0)
prior = alone + shift
rows = (sums + args.k * prior) / (counts + args.k)[:, None]
print(f"{int(seen.sum())} of {vocab_size} pieces seen in context", file=sys.stderr)

rows, _ = reduce(rows, args.dims)
rows *= rank_weights(vocab_size)
write_table(args.out_file, model.tokens, rows)
