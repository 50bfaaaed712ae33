#!/usr/bin/env python3
"""Converts the argument benchmarks into Waypoint's evaluation contract (docs/contracts.md).

    python3 scripts/bench/args.py SRC OUT

SRC holds `nestful/` (IBM NESTFUL v1: 300 samples in three subsets, each with its tool
specs) and `taskbench/` (the 59 labelled TaskBench samples over daily-life APIs, Hugging
Face tasks and multimedia tools). For each set OUT/NAME gets `catalog/tools.yaml` (one
tool per spec, its parameters as an input schema) and `cases.jsonl` with `tools` (the
calls in order), `links` (a call that uses an earlier call's output) and `args` (each
call's argument values; a reference to an earlier output is `{"$ref": "that_tool"}`).
A case whose calls name one tool twice keeps the first call's arguments only, since
`expect.args` has one entry per tool. Nothing is downloaded.
"""

import json
import os
import re
import sys


def snake(name):
    """`SkyScrapperFlightSearch` → `sky_scrapper_flight_search`; Waypoint names are lower case."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return re.sub(r"[^a-z0-9_.-]+", "_", s.lower()).strip("_")


def schema_type(t):
    """A spec's type as a JSON Schema fragment."""
    t = (t or "string").lower()
    if t in ("integer", "int"):
        return {"type": "integer"}
    if t in ("number", "float", "double"):
        return {"type": "number"}
    if t in ("boolean", "bool"):
        return {"type": "boolean"}
    if t in ("array", "list"):
        return {"type": "array"}
    if t == "date":
        return {"type": "string", "format": "date"}
    return {"type": "string"}


def write(out, name, tools, cases):
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "catalog"), exist_ok=True)
    with open(os.path.join(folder, "catalog", "tools.yaml"), "w") as f:
        f.write("tools:\n")
        for t in tools:
            f.write(f"  - name: {json.dumps(t['name'])}\n")
            f.write(f"    description: {json.dumps(t['description'] or t['name'])}\n")
            f.write(f"    input_schema: {json.dumps(t['schema'], ensure_ascii=False)}\n")
            for key in ("accepts", "produces"):
                if t.get(key):
                    f.write(f"    {key}: {json.dumps(t[key])}\n")
    with open(os.path.join(folder, "cases.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{name}: {len(tools)} tools, {len(cases)} cases", file=sys.stderr)


def nestful_tool(spec):
    params = {}
    for key in ("path_parameters", "query_parameters", "parameters", "arguments"):
        if isinstance(spec.get(key), dict):
            params.update(spec[key])
    props, required = {}, []
    for pname, p in params.items():
        p = p if isinstance(p, dict) else {}
        s = schema_type(p.get("type"))
        if p.get("description"):
            s["description"] = p["description"]
        options = p.get("enum") or p.get("allowed_values")
        if isinstance(options, list) and options:
            s["enum"] = options
        props[pname] = s
        if p.get("required"):
            required.append(pname)
    schema = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    # What a call takes and gives, by parameter name: a later call that takes what an
    # earlier one gives ("the distance of the best route") can be linked to it.
    outputs = spec.get("output_parameters")
    return {
        "name": snake(spec["name"]),
        "description": spec.get("description", ""),
        "schema": schema,
        "accepts": list(props),
        "produces": list(outputs) if isinstance(outputs, dict) else [],
    }


REF = re.compile(r"^\$(var\d+)(?:\.[^$]*)?\$$")


def nestful(src, out):
    folder = os.path.join(src, "nestful", "data")
    sets = [
        ("nestful-executable", "executable/executable"),
        ("nestful-glaive", "non-executable/non-executable-glaive"),
        ("nestful-sgd", "non-executable/non-executable-sgd"),
    ]
    for name, stem in sets:
        specs = json.load(open(os.path.join(folder, stem + "-spec.json")))
        data = json.load(open(os.path.join(folder, stem + "-data.json")))
        tools, known = [], set()
        for spec in specs:  # a spec listed twice keeps its first definition
            t = nestful_tool(spec)
            if t["name"] not in known:
                tools.append(t)
                known.add(t["name"])
        cases = []
        for i, sample in enumerate(data):
            calls = [c for c in sample["output"] if c.get("name") != "var_result"]
            label_tool = {c.get("label"): snake(c["name"]) for c in calls}
            tool_names, links, args = [], [], {}
            for c in calls:
                tool = snake(c["name"])
                if tool not in known:
                    break
                tool_names.append(tool)
                values = {}
                for k, v in (c.get("arguments") or {}).items():
                    m = REF.match(v) if isinstance(v, str) else None
                    if m:
                        src_tool = label_tool.get(m.group(1))
                        if src_tool:
                            values[k] = {"$ref": src_tool}
                            if [src_tool, tool] not in links:
                                links.append([src_tool, tool])
                    else:
                        values[k] = v
                args.setdefault(tool, values)
            else:
                cases.append({
                    "id": f"{name}-{i}",
                    "request": sample["input"],
                    "expect": {"tools": tool_names, "links": links, "args": args},
                })
        write(out, name, tools, cases)


def taskbench(src, out):
    folder = os.path.join(src, "taskbench")
    for domain in ("dailylifeapis", "huggingface", "multimedia"):
        nodes = json.load(open(os.path.join(folder, domain, "tool_desc.json")))["nodes"]
        tools, params_of = [], {}
        for n in nodes:
            name = snake(n["id"])
            props, names = {}, []
            if "parameters" in n:
                for p in n["parameters"]:
                    s = schema_type(p.get("type"))
                    if p.get("desc"):
                        s["description"] = p["desc"]
                    props[p["name"]] = s
                    names.append(p["name"])
            else:
                # Positional inputs named by their kind: image, text, text_2 …
                for kind in n.get("input-type", []):
                    pname = kind if kind not in props else f"{kind}_{len(names) + 1}"
                    props[pname] = {"type": "string", "description": f"the {kind}"}
                    names.append(pname)
            params_of[name] = names
            schema = {"type": "object", "properties": props, "required": names}
            tools.append({
                "name": name,
                "description": n.get("desc", ""),
                "schema": schema,
                "accepts": n.get("input-type", []),
                "produces": n.get("output-type", []),
            })
        cases = []
        path = os.path.join(folder, "labelled_sample", f"{domain}_data_sample.jsonl")
        for line in open(path):
            r = json.loads(line)
            order = [snake(t["task"]) for t in r["task_nodes"]]
            args = {}
            for node in r["task_nodes"]:
                tool = snake(node["task"])
                values = {}
                for i, a in enumerate(node.get("arguments", [])):
                    if isinstance(a, dict):
                        k, v = a.get("name"), a.get("value")
                    else:
                        names = params_of.get(tool, [])
                        k, v = (names[i] if i < len(names) else f"arg{i}"), a
                    m = re.match(r"^<node-(\d+)>$", v) if isinstance(v, str) else None
                    if m and int(m.group(1)) < len(order):
                        v = {"$ref": order[int(m.group(1))]}
                    values[k] = v
                args.setdefault(tool, values)
            links = [[snake(l["source"]), snake(l["target"])] for l in r.get("task_links", [])]
            cases.append({
                "id": f"taskbench-{domain}-{r['id']}",
                "request": r["user_request"],
                "expect": {"tools": order, "links": links, "args": args},
            })
        write(out, f"taskbench-{domain}", tools, cases)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src, out = sys.argv[1], sys.argv[2]
    nestful(src, out)
    taskbench(src, out)


if __name__ == "__main__":
    main()
