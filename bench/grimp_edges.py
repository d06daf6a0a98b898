"""Runs grimp on one package of an unpacked wheel and prints its edges as JSON.

Usage: grimp_edges.py ROOT PACKAGE
ROOT is the folder holding PACKAGE (a site-packages-like folder). Prints
{"seconds": build time, "modules": N, "edges": [[from_file, to_file, line], ...]}
with files relative to ROOT: grimp's modules mapped to files.
"""

import json
import os
import sys
import time


def module_file(root, module):
    base = os.path.join(root, *module.split("."))
    for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, root).replace(os.sep, "/")
    return None


def main():
    root, package = sys.argv[1], sys.argv[2]
    sys.path.insert(0, root)
    start = time.perf_counter()
    import grimp

    imported = time.perf_counter()
    graph = grimp.build_graph(package, cache_dir=None)
    built = time.perf_counter()
    edges = []
    unmapped = 0
    for importer in graph.modules:
        source = module_file(root, importer)
        for imported_module in graph.find_modules_directly_imported_by(importer):
            target = module_file(root, imported_module)
            if source is None or target is None:
                unmapped += 1
                continue
            details = graph.get_import_details(importer=importer, imported=imported_module)
            lines = sorted({d["line_number"] for d in details}) or [0]
            edges.append([source, target, lines])
    json.dump(
        {
            "seconds": built - imported,
            "import_seconds": imported - start,
            "modules": len(graph.modules),
            "unmapped": unmapped,
            "edges": edges,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
