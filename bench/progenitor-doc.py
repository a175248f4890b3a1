"""The vendor's OpenAPI document as progenitor 0.15 accepts it, for bench/build-cost.sh.

progenitor refuses the document as it is. This changes only what it refuses:
- every operation gets a unique operationId (made from its method and path when absent);
- a query string written into a path key leaves the key;
- every path variable is declared as a path parameter;
- each operation keeps one success answer (progenitor types one) and no error answers.

Usage: progenitor-doc.py VENDOR.json OUT.json
"""
import json, re, sys
doc = json.load(open(sys.argv[1]))
seen = set()
paths = {}
for path, item in doc["paths"].items():
    clean = path.split("?")[0]
    target = paths.setdefault(clean, {})
    for method, op in item.items():
        if method not in ("get", "post", "put", "delete", "patch"):
            target.setdefault(method, op)
            continue
        if method in target:
            continue
        base = op.get("operationId") or (method + "_" + re.sub(r"[^a-zA-Z0-9]+", "_", clean).strip("_"))
        base = re.sub(r"[^a-zA-Z0-9_]", "_", base)
        name, n = base, 2
        while name.lower() in seen:
            name, n = f"{base}_{n}", n + 1
        seen.add(name.lower())
        op["operationId"] = name
        # Every path variable declared as a path parameter.
        params = op.setdefault("parameters", []) + item.get("parameters", [])
        declared = {p.get("name") for p in params if p.get("in") == "path"}
        for var in re.findall(r"{([^}]+)}", clean):
            if var not in declared:
                op["parameters"].append({"name": var, "in": "path", "required": True, "schema": {"type": "string"}})
        # One success answer (progenitor types one), and no error answers of other types.
        responses = op.get("responses", {})
        ok = sorted(code for code in responses if code.startswith("2"))
        op["responses"] = {code: responses[code] for code in ok[:1]} or {"200": {"description": "ok"}}
        target[method] = op
doc["paths"] = paths
json.dump(doc, open(sys.argv[2], "w"))
