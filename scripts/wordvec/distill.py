"""Distil all-MiniLM-L6-v2 into static word vectors: one vector per WordPiece token.

Each token of the model's vocabulary is run through the model alone ([CLS] token [SEP])
and its output mean-pooled; the vectors are centred, reduced to DIMS principal
components, weighted by log(1 + rank) (the vocabulary lists frequent pieces first, so
rarer pieces weigh more, as inverse frequency would), and stored as 8-bit values with
one scale per row. A sentence's static vector is then the mean of its pieces' rows: no
model at run time. The file format is read by crates/waypoint-wordvec (docs/routing.md).

    python distill.py MODEL_DIR OUT_FILE [DIMS]
"""
import sys

from minilm import Model, rank_weights, reduce, write_table

model_dir, out_path = sys.argv[1], sys.argv[2]
dims = int(sys.argv[3]) if len(sys.argv) > 3 else 128

model = Model(model_dir)
rows, _ = reduce(model.pieces_alone(), dims)
rows *= rank_weights(len(model.tokens))
write_table(out_path, model.tokens, rows)
