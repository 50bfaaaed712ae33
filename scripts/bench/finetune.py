#!/usr/bin/env python3
"""A fine-tuned sentence encoder as MixSNIPS' clause classifier: would it pass the bar?

MixSNIPS builds every request from a stock of single questions joined by " , ",
" and then ", " and also " or " and ", so a question misread costs every request it is
in. This study asks whether a transformer fine-tuned on the questions reads them better
than Waypoint's trained router, which learns from n-grams:

1. Each split's requests are cut at those joiners; a piece found in two or more requests
   whose intent sets share exactly one intent is taught (or scored) as that intent.
2. all-MiniLM-L6-v2 (its word embeddings frozen, the rest fine-tuned) with mean pooling
   and a linear layer learns the train split's pieces (AdamW, 2 epochs, batch 32).
3. Each piece of the evaluated split is classified; a request's predicted intent set is
   the union over its pieces ("emulated" set accuracy, the same cut for both models).
   With `--waypoint URL` (a running `waypoint serve --http ... --catalog
   target/bench/data/mixsnips/catalog --train target/bench/data/mixsnips/train.jsonl`)
   each piece is also planned alone by Waypoint, and the two are compared.

The piece cut is cruder than Waypoint's segmenter (it also cuts inside questions, as in
"book a table for phyllis ward and i"), so compare the two columns with each other, not
with `waypoint eval`'s figures. Findings: docs/performance.md, "A fine-tuned encoder for
MixSNIPS' questions".

    finetune.py DATA_DIR SPLIT [--waypoint URL] [--epochs N]

DATA_DIR is the converted MixSNIPS folder (target/bench/data/mixsnips, made by
scripts/bench/run); the model comes from scripts/embed-model (or WAYPOINT_EMBED_MODEL).
It needs torch and transformers, which `scripts/bench/run --minilm` installs into
~/.cache/waypoint/bench-venv: run it with that environment's python.
"""
import argparse
import json
import os
import random
import re
import subprocess
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import torch
from peers import cases  # the same case reader as the peers, beside this script
from transformers import AutoModel, AutoTokenizer

JOINERS = re.compile(r" , | and then | and also | and ")


def requests(path):
    """Each case's request and its set of intents."""
    return [(text, set(labels)) for text, labels, _ in cases(path)]


def labelled_pieces(reqs):
    """Pieces seen in two or more requests whose intent sets share exactly one intent."""
    seen = defaultdict(list)
    for text, labels in reqs:
        for piece in JOINERS.split(text):
            seen[piece].append(labels)
    out = {}
    for piece, sets in seen.items():
        common = set.intersection(*sets)
        if len(sets) >= 2 and len(common) == 1:
            out[piece] = (next(iter(common)), len(sets))
    return out


class Classifier(torch.nn.Module):
    def __init__(self, folder, classes):
        super().__init__()
        self.tok = AutoTokenizer.from_pretrained(folder)
        self.enc = AutoModel.from_pretrained(folder)
        self.head = torch.nn.Linear(self.enc.config.hidden_size, classes)
        for name, p in self.enc.named_parameters():
            p.requires_grad = "embeddings" not in name

    def forward(self, texts):
        b = self.tok(texts, padding=True, truncation=True, max_length=40, return_tensors="pt")
        h = self.enc(**b).last_hidden_state
        mask = b["attention_mask"].unsqueeze(-1).float()
        return self.head((h * mask).sum(1) / mask.sum(1))


def train(model, data, epochs):
    encoder = [p for p in model.enc.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": encoder, "lr": 5e-5}, {"params": model.head.parameters(), "lr": 1e-3}],
        weight_decay=0.01,
    )
    steps = epochs * ((len(data) + 31) // 32)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min(1.0, (k + 1) / 100) * max(0.0, 1 - k / steps)
    )
    start, step = time.time(), 0
    model.train()
    for _ in range(epochs):
        random.shuffle(data)
        for i in range(0, len(data), 32):
            batch = data[i : i + 32]
            loss = torch.nn.functional.cross_entropy(
                model([t for t, _ in batch]), torch.tensor([c for _, c in batch])
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 100 == 0:
                print(f"step {step}/{steps}, loss {loss.item():.3f}, {time.time() - start:.0f} s", flush=True)
    model.eval()
    return time.time() - start


def classify(model, texts, classes):
    out = {}
    with torch.no_grad():
        for i in range(0, len(texts), 64):
            chunk = texts[i : i + 64]
            for t, k in zip(chunk, model(chunk).argmax(-1).tolist()):
                out[t] = {classes[k]}
    return out


def planned(url, text):
    body = json.dumps({"request": text}).encode()
    req = urllib.request.Request(f"{url}/v1/plan", data=body, headers={"content-type": "application/json"})
    steps = json.load(urllib.request.urlopen(req))["steps"]
    return {s["tool"] for s in steps if s.get("tool") and s["tool"] != "unknown"}


def report(name, labels_of, reqs, pieces):
    right = sum(labels_of[p] == {c} for p, (c, _) in pieces.items())
    weighted = sum(n * (labels_of[p] == {c}) for p, (c, n) in pieces.items())
    sets = sum(set().union(*(labels_of[p] for p in JOINERS.split(t))) == g for t, g in reqs)
    return {
        "model": name,
        "pieces_right": right / len(pieces),
        "pieces_right_weighted": weighted / sum(n for _, n in pieces.values()),
        "emulated_set_accuracy": sets / len(reqs),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("split")
    ap.add_argument("--waypoint", help="base URL of a running `waypoint serve --http`")
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    random.seed(0)
    torch.manual_seed(0)
    installer = Path(__file__).resolve().parents[1] / "embed-model"
    folder = os.environ.get("WAYPOINT_EMBED_MODEL") or subprocess.run(
        [str(installer), "install"], check=True, capture_output=True, text=True
    ).stdout.strip()

    taught = labelled_pieces(requests(Path(args.data) / "train.jsonl"))
    classes = sorted({c for c, _ in taught.values()})
    index = {c: k for k, c in enumerate(classes)}
    model = Classifier(folder, len(classes))
    seconds = train(model, [(t, index[c]) for t, (c, _) in taught.items()], args.epochs)

    reqs = requests(Path(args.data) / f"{args.split}.jsonl")
    pieces = labelled_pieces(reqs)
    every = sorted({p for t, _ in reqs for p in JOINERS.split(t)})
    rows = [report("fine-tuned MiniLM", classify(model, every, classes), reqs, pieces)]
    if args.waypoint:
        rows.append(report("waypoint", {p: planned(args.waypoint, p) for p in every}, reqs, pieces))
    print(json.dumps({"taught_pieces": len(taught), "training_seconds": round(seconds), "scored_pieces": len(pieces), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
