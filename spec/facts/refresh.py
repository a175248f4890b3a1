#!/usr/bin/env python3
"""Writes the facts the tests compare the spec against, from the two documents the spec
implements: the interface (its endpoint tables: every section, method, path and
parameter) and the vendor's OpenAPI document (its routes, parameters, schemas and example
values, its prose left out). The tests read these copies, so a clone needs nothing beside
it; run this when either document changes, and commit what it writes.

    python3 spec/facts/refresh.py [SHARED]          # SHARED defaults to ../shared
    python3 spec/facts/refresh.py [SHARED] --check  # exits 1 when a fact is out of date

SHARED holds interface/payments-api.md and reference/nomba-openapi.json.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Keys whose values are prose: left out, except where a key of this name is data (a
# property called `description`, a value inside an example).
PROSE = {"description", "summary", "externalDocs"}
# Under these keys everything is data, kept whole.
DATA = {"example", "examples", "default", "enum", "const", "x-example"}


def strip(value, parent=None):
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if parent in DATA:
                out[key] = inner
            elif key in PROSE and parent != "properties":
                # OpenAPI requires a response's and the info's description: kept, empty.
                if key == "description" and parent in ("response", "info"):
                    out[key] = ""
                continue
            elif key in DATA:
                out[key] = inner
            else:
                kind = "response" if parent == "responses" else key
                out[key] = strip(inner, "info" if key == "info" else kind)
        return out
    if isinstance(value, list):
        return [strip(inner, parent) for inner in value]
    return value


def interface_facts(text):
    """The `## Endpoints` part of the interface: its `###` sections, table rows, and the
    one-line notes between them that say where an operation is also listed."""
    lines = ["<!-- Written by spec/facts/refresh.py from the interface (payments-api.md): its endpoints. -->"]
    inside = False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == "Endpoints"
            if inside:
                lines.append(line)
            continue
        if inside and line.strip():
            lines.append(line)
    return "\n".join(lines) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    shared = args[0] if args else os.path.join(HERE, "..", "..", "..", "shared")
    with open(os.path.join(shared, "interface", "payments-api.md"), encoding="utf-8") as f:
        interface = interface_facts(f.read())
    with open(os.path.join(shared, "reference", "nomba-openapi.json"), encoding="utf-8") as f:
        document = json.dumps(strip(json.load(f)), indent=1, ensure_ascii=False) + "\n"
    facts = {"interface-endpoints.md": interface, "vendor-openapi.json": document}
    stale = []
    for name, text in facts.items():
        path = os.path.join(HERE, name)
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if check:
            stale.append(name)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote spec/facts/{name}")
    if stale:
        print(
            "out of date with the documents beside the repository: "
            + ", ".join(f"spec/facts/{n}" for n in stale)
            + " (run python3 spec/facts/refresh.py, and commit what it writes)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
