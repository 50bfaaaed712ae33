"""Catalogs taught by a few examples per entry, as a user writes them, from CLINC150.

    python3 scripts/bench/fewshot.py WAYPOINT DATA_DIR OUT_DIR [-- EVAL_ARGS...]

DATA_DIR is the converted CLINC150 (scripts/bench/run makes target/bench/data/clinc150).
For each seed (5) and each number of examples per entry (3, 5, 10), ten intents drawn at
random become a catalog whose entries carry that many `examples:` from the train split;
the cases are the dev split's requests for those ten (in scope), its 100 out-of-scope
requests, and the dev requests of five other intents (out of scope for this catalog).
Runs `waypoint eval` and `waypoint calibrate` on each and prints, per number of
examples, the mean in-scope accuracy and out-of-scope recall at the default threshold
and the best in-scope accuracy the threshold sweep reaches at a given recall. Dev split
only: tune nothing here on test.
"""

import collections
import json
import random
import subprocess
import sys
from pathlib import Path

SEEDS = range(5)
PER_ENTRY = (3, 5, 10)
ENTRIES = 10
OTHER_INTENTS = 5
RECALLS = (0.7, 0.8, 0.9)


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def descriptions(catalog):
    """name → description from the converted catalog (one YAML file of quoted values)."""
    out, name = {}, None
    for line in Path(catalog).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("- name:"):
            name = json.loads(line.split(":", 1)[1])
        elif line.startswith("description:") and name:
            out[name] = json.loads(line.split(":", 1)[1])
    return out


def by_intent(cases):
    out = collections.defaultdict(list)
    for c in cases:
        out[c["expect"]["tools"][0]].append(c["request"])
    return out


def make(data, out):
    train = by_intent(read(data / "train.jsonl"))
    dev = by_intent(read(data / "dev.jsonl"))
    about = descriptions(data / "catalog" / "tools.yaml")
    intents = sorted(i for i in train if i != "unknown")
    sets = []
    for seed in SEEDS:
        for k in PER_ENTRY:
            rnd = random.Random(seed)
            chosen = rnd.sample(intents, ENTRIES)
            others = [i for i in intents if i not in chosen]
            d = out / f"seed{seed}-k{k}"
            (d / "catalog").mkdir(parents=True, exist_ok=True)
            lines = ["tools:"]
            for c in chosen:
                lines += [f"  - name: {json.dumps(c)}", f"    description: {json.dumps(about[c])}",
                          "    examples:"]
                lines += [f"      - {json.dumps(x)}" for x in rnd.sample(train[c], k)]
            (d / "catalog" / "tools.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
            cases = []
            for c in chosen:
                cases += [{"request": r, "expect": {"tools": [c], "unknown": False}} for r in dev[c]]
            gaps = dev["unknown"] + [r for o in rnd.sample(others, OTHER_INTENTS) for r in dev[o]]
            cases += [{"request": r, "expect": {"tools": ["unknown"], "unknown": True}} for r in gaps]
            with open(d / "cases.jsonl", "w", encoding="utf-8") as f:
                for i, c in enumerate(cases):
                    f.write(json.dumps({"id": f"fewshot-{i}", **c}) + "\n")
            sets.append((k, d))
    return sets


def run(bin, d, command, extra):
    args = [bin, command, str(d / "cases.jsonl"), "--catalog", str(d / "catalog"),
            "--store", "none", "--json", *extra]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    if len(argv) != 3:
        sys.exit(__doc__)
    bin, data, out = argv[0], Path(argv[1]), Path(argv[2])
    results = collections.defaultdict(list)
    for k, d in make(data, out):
        ev = run(bin, d, "eval", extra)
        curve = run(bin, d, "calibrate", extra)["curve"]
        results[k].append((ev["in_scope_accuracy"], ev["oos_recall"], curve))
    report = {}
    print("examples/entry  in scope  out-of-scope recall  " +
          "  ".join(f"best in scope at recall {r:.0%}" for r in RECALLS))
    for k, rows in sorted(results.items()):
        n = len(rows)
        ins = sum(r[0] for r in rows) / n
        oos = sum(r[1] for r in rows) / n
        # The seeds' curves averaged point by point, then the best in-scope accuracy
        # where the mean recall reaches each level.
        points = collections.defaultdict(lambda: [0.0, 0.0])
        for _, _, curve in rows:
            for p in curve:
                t = round(p["threshold"], 2)
                points[t][0] += p["in_scope_accuracy"] / n
                points[t][1] += p["oos_recall"] / n
        best = [max((a for a, r in points.values() if r >= level), default=None)
                for level in RECALLS]
        report[k] = {"in_scope_accuracy": ins, "oos_recall": oos,
                     "best_in_scope_at_recall": dict(zip(map(str, RECALLS), best))}
        cells = "  ".join("      —      " if b is None else f"{b:13.1%}" for b in best)
        print(f"{k:14d}  {ins:8.1%}  {oos:19.1%}  {cells}")
    (out / "fewshot.json").write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
