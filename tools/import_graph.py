"""The import graph of structrank and of its lab (structrank_lab), read from the sources (no import is run).

    python tools/import_graph.py            # each package's imports of other packages, and any circle
    python tools/import_graph.py --modules  # every module's internal imports ("*" marks one inside a function)
    python tools/import_graph.py --deferred # every import inside a function, and those that do not say why

Layers are the first level under ``structrank`` (``data``, ``metrics``, ``oracles``, ``learners``,
...; a top-level module is its own layer) and, above them, under ``structrank_lab`` (``lab.experiments``,
``lab.bench``, ``lab.nlp``). ``tests/library/test_layers.py`` checks the rules on this graph.

Imports belong at module level; one inside a function says why it is deferred with a
``# deferred: REASON`` comment at the end of its line or on the comment lines just above it. Import
statements that follow one another in a function share the comment of the first.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
#: the packages drawn: the library and the lab on top of it
PACKAGES = ("structrank", "structrank_lab")


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node, current: str, is_package: bool) -> list[str]:
    """The modules of ``PACKAGES`` an import statement names (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] in PACKAGES]
    base = node.module or ""
    if node.level:
        package = current.split(".") if is_package else current.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    if base.split(".")[0] not in PACKAGES:
        return []
    return [base]


def imports(src: Path = SRC) -> dict:
    """{module: {imported module: True if only inside a function (deferred)}}."""
    graph = {}
    for path in _sources(src):
        name = module_name(path, src)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found: dict = {}
        top = {id(n) for n in tree.body}
        guarded = {id(n) for stmt in tree.body if isinstance(stmt, ast.If) for n in ast.walk(stmt)}  # TYPE_CHECKING
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(node, name, path.name == "__init__.py"):
                    deferred = id(node) not in top and id(node) not in guarded
                    found[target] = found.get(target, True) and deferred
        graph[name] = found
    return graph


DEFERRED = re.compile(r"#\s*deferred:\s*\S")
#: a top-level comment line that explains every import inside the module's functions at once
MODULE_DEFERRED = re.compile(r"^# deferred imports:\s*\S", re.MULTILINE)


def _comments(source: str) -> dict:
    """{line number: the comment on it}, from the tokens (so a '#' inside a string is not one)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.start[0]: t.string for t in tokens if t.type == tokenize.COMMENT}


def function_imports(source: str, filename: str = "<source>") -> list:
    """[(line, explained)] for every import statement inside a function or method body.

    ``explained``: a ``# deferred: REASON`` comment ends one of the statement's lines or stands in
    the block of comment lines just above it, or the statement follows, with nothing between, an
    import statement that is explained; or the module says once, in a line of its own at the left
    margin, ``# deferred imports: REASON`` (a module whose every command or section loads its own).
    """
    tree = ast.parse(source, filename=filename)
    whole_module = MODULE_DEFERRED.search(source) is not None
    comments = _comments(source)
    lines = source.splitlines()
    found = []

    def said(node) -> bool:
        if whole_module:
            return True
        if any(DEFERRED.search(comments.get(n, "")) for n in range(node.lineno, node.end_lineno + 1)):
            return True
        above = node.lineno - 1
        while above >= 1 and lines[above - 1].lstrip().startswith("#"):
            if DEFERRED.search(comments.get(above, "")):
                return True
            above -= 1
        return False

    def visit(node, in_function: bool):
        for value in (v for _, v in ast.iter_fields(node)):
            previous = False  # the statement before was an explained import
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    if in_function:
                        previous = previous or said(child)
                        found.append((child.lineno, previous))
                    continue
                previous = False
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return sorted(found)


def deferred_imports(src: Path = SRC) -> list:
    """[(path relative to src, line, explained)] for every import inside a function in structrank and its lab."""
    out = []
    for path in _sources(src):
        rel = path.relative_to(src).as_posix()
        out += [(rel, line, ok) for line, ok in function_imports(path.read_text(encoding="utf-8"), str(path))]
    return out


def _sources(src: Path) -> list:
    return [path for package in PACKAGES for path in sorted(src.joinpath(package).rglob("*.py"))]


def layer(module: str) -> str:
    """``data`` for ``structrank.data.letor``; ``lab.bench`` for ``structrank_lab.bench.crf``; the package's
    name for its own ``__init__``."""
    parts = module.split(".")
    if parts[0] == "structrank_lab":
        return "lab." + parts[1] if len(parts) > 1 else "lab"
    return parts[1] if len(parts) > 1 else "structrank"


def layer_graph(graph: dict) -> dict:
    """{layer: {layer it imports: [(module, imported module, deferred)]}}, without a layer's own imports."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for module, targets in graph.items():
        for target, deferred in targets.items():
            if layer(target) != layer(module) and target not in PACKAGES:
                out[layer(module)][layer(target)].append((module, target, deferred))
    return out


def cycles(edges: dict) -> list:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="list every module's internal imports")
    parser.add_argument("--deferred", action="store_true",
                        help="list the imports inside functions that do not say why (a '# deferred:' comment)")
    args = parser.parse_args(argv)
    if args.deferred:
        found = deferred_imports()
        silent = [(path, line) for path, line, ok in found if not ok]
        for path, line in silent:
            print(f"src/{path}:{line}: an import inside a function without '# deferred: REASON'")
        print(f"{len(found)} imports inside functions, {len(silent)} without a reason")
        return 1 if silent else 0
    graph = imports()
    if args.modules:
        for module, targets in graph.items():
            listed = ", ".join(f"{t}{'*' if d else ''}" for t, d in sorted(targets.items()))
            print(f"{module}: {listed}")
        return 0
    layers = layer_graph(graph)
    total = sum(len(t) for t in graph.values())
    deferred = sum(d for t in graph.values() for d in t.values())
    print(f"{len(graph)} modules, {total} internal imports, {deferred} of them only inside functions")
    for source in sorted(layers):
        line = ", ".join(f"{t} ({len(v)}{', all deferred' if all(d for *_, d in v) else ''})"
                         for t, v in sorted(layers[source].items()))
        print(f"{source} -> {line}")
    module_edges = {m: [t for t, d in ts.items() if not d and t in graph] for m, ts in graph.items()}
    circles = cycles(module_edges)
    print(f"circles among module-level imports: {len(circles)}")
    for c in circles:
        print("  " + " <-> ".join(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
