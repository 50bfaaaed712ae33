#!/usr/bin/env python3
"""Turns CLINC150 into a Waypoint catalog and evaluation cases.

One tool per intent (its name and words as the description, no examples), the train
split as `--train` cases, and an evaluation split where in-scope requests expect their
intent's tool and out-of-scope ones expect a gap.

    python3 scripts/bench/clinc150.py ../shared/benchmarks/clinc150/data_full.json OUT val
    waypoint eval OUT/val.jsonl --catalog OUT/catalog.yaml --train OUT/train.jsonl
"""
import json
import sys
from pathlib import Path


def main() -> None:
    if len(sys.argv) != 4 or sys.argv[3] not in ("val", "test"):
        sys.exit("usage: clinc150.py DATA_FULL_JSON OUT_DIR val|test")
    data = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    split = sys.argv[3]
    out.mkdir(parents=True, exist_ok=True)
    intents = sorted({intent for _, intent in data["train"]})
    lines = ["tools:"]
    for intent in intents:
        words = intent.replace("_", " ")
        lines.append(f"  - name: {intent}\n    description: \"{words}\"")
    (out / "catalog.yaml").write_text("\n".join(lines) + "\n")

    def case(i: int, text: str, expect: dict) -> str:
        return json.dumps({"id": f"{split}-{i}", "request": text, "expect": expect})

    (out / "train.jsonl").write_text(
        "\n".join(case(i, t, {"tools": [n]}) for i, (t, n) in enumerate(data["train"])) + "\n"
    )
    rows = [case(i, t, {"tools": [n], "unknown": False}) for i, (t, n) in enumerate(data[split])]
    base = len(rows)
    rows += [case(base + i, t, {"unknown": True}) for i, (t, _) in enumerate(data[f"oos_{split}"])]
    (out / f"{split}.jsonl").write_text("\n".join(rows) + "\n")
    print(f"{len(intents)} tools, {len(data['train'])} training requests, {len(rows)} {split} cases -> {out}")


if __name__ == "__main__":
    main()
