"""What the comments and docstrings of the library and its lab name exists: every dotted ``structrank.x.y`` name resolves (an import
and attributes), so does every name in double backquotes that starts at one of its modules (``oracles.crf``), and every
path of a ``.py`` file is a file. Comments state rules, not history: none names an issue."""

from __future__ import annotations

import ast
import importlib
import io
import pathlib
import re
import tokenize

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "structrank"
LAB = SRC.parent / "structrank_lab"
ROOT = SRC.parents[1]
#: file names that read like dotted names (the model folder's header)
FILES = {"structrank.json"}
MODULES = sorted({p.stem for package in (SRC, LAB) for p in package.iterdir()
                  if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"} - {"__init__", "__main__"})
ABSOLUTE = re.compile(r"(?<![\w./-])structrank(?:_lab)?(?:\.[A-Za-z_]\w*)+")
RELATIVE = re.compile(r"``((?:" + "|".join(MODULES) + r")(?:\.[A-Za-z_]\w*)+)``")
PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py)\b")
ISSUE = re.compile(r"\bissues? \d+", re.IGNORECASE)


def prose(path):
    """(line, text) of every comment and docstring of a module."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield node.body[0].lineno, doc


def _defined_in_source(parts) -> bool | None:
    """For a structrank module that cannot be imported here (it needs an optional extra): whether the name is its
    source file's and its first attribute is defined at the top of it (None: not a structrank module file)."""
    for i in range(len(parts), 1, -1):
        base = SRC.parent.joinpath(*parts[:i])
        path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if path.is_file():
            if i == len(parts):
                return True
            tree = ast.parse(path.read_text())
            names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
            names |= {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                      for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
            return parts[i] in names
    return None


def resolves(name: str) -> bool:
    """Whether ``name`` is a module followed by attributes that exist."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith("structrank"):  # an optional extra this machine lacks
                return bool(_defined_in_source(parts))
            continue
        except ImportError:
            continue
        for part in parts[i:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


def modules():
    return sorted(SRC.rglob("*.py")) + sorted(LAB.rglob("*.py"))


def test_every_name_and_path_in_the_prose_exists():
    missing = []
    for path in modules():
        where = path.relative_to(SRC.parent)
        for line, text in prose(path):
            for found in ABSOLUTE.finditer(text):
                name = found.group(0)
                if name not in FILES and not resolves(name):
                    missing.append(f"{where}:{line}: {name}")
            for found in RELATIVE.finditer(text):
                name = found.group(1)
                # ``torch.nn.Module`` is PyTorch's, not structrank.learners.torch_loss's
                if not any(resolves(f"{package}.{name}") for package in ("structrank", "structrank_lab")) \
                        and not resolves(name):
                    missing.append(f"{where}:{line}: ``{name}``")
            for found in PATH.finditer(text):
                rel = found.group(1)
                if not any((base / rel).exists() for base in (SRC, LAB, ROOT, SRC.parent, ROOT / "tests", ROOT / "tests" / "library", ROOT / "tests" / "lab", path.parent)):
                    missing.append(f"{where}:{line}: {rel}")
    assert not missing, "names in comments or docstrings that do not exist:\n" + "\n".join(missing)


def test_no_comment_or_docstring_names_an_issue():
    named = [f"{path.relative_to(SRC.parent)}:{line}: {found.group(0)}" for path in modules()
             for line, text in prose(path) for found in ISSUE.finditer(text)]
    assert not named, "history in the prose (say the rule instead):\n" + "\n".join(named)
