"""The ``structrank`` command's commands: one module each, found by name (``structrank.cli`` only dispatches).

A command is a module (or any object an entry point names) with:

- ``HELP``: its one-line help, which ``structrank --help`` lists;
- ``INPUTS``: the options that name its input files (``("--train", "--vali")``, or ``()``), checked to exist
  before the command is built (``structrank.cli.check_input_paths``);
- ``add_parser(sub, details)``: adds its parser, named as the command, to ``sub`` (argparse's subparsers) and
  returns it; ``details`` is the command line when ``--help`` was asked for (True: the full help, False:
  none), for a command whose help costs time to build;
- ``run(args) -> int``: runs it on the parsed arguments, returning the exit code; an error raises (the
  dispatcher turns it into one line and the exit code). The dispatcher calls the ``run`` of the command named
  on the line, so an option's name (``evaluate --run``) never hides it.

Its top level imports only the standard library and light structrank modules (``structrank.atomic``,
``structrank.errors``, ``structrank.paths``, ``structrank.commands.options``): ``structrank --help`` imports
every command module for its ``HELP``; the rest waits inside its functions.

The library's commands are ``LIBRARY``, each the module ``structrank.commands.<name>``. Another installed
package adds commands through Python entry points of the group ``structrank.commands`` (name = module path):

    [project.entry-points."structrank.commands"]
    mycommand = "mypackage.mycommand"

A library command's name wins over a plugin's. The entry points are read only for a name that is not a
library command, or when every command is listed (``names()``), so that a library command starts without them.
A plugin that cannot be imported stands as ``Unloadable``: ``structrank --help`` still lists every command,
and running the broken one ends in one line that names its entry point and the import's error.
"""

from __future__ import annotations

import functools
import importlib

#: the library's commands, in the order ``structrank --help`` lists them (plugins follow, by name)
LIBRARY = ("train", "predict", "evaluate", "compare", "featurize", "demo", "losses", "export", "fuse")
#: the entry point group through which another package adds commands
GROUP = "structrank.commands"


@functools.lru_cache(maxsize=None)
def plugins() -> dict:
    """{name: entry point} of the other packages' commands (the first of a name; the library's names left out)."""
    # deferred: start-up time, read only when a name is not the library's or every command is listed
    from importlib.metadata import entry_points

    found = {}
    for point in entry_points(group=GROUP):
        if point.name not in LIBRARY:
            found.setdefault(point.name, point)
    return found


class Unloadable:
    """A plugin command whose entry point fails to load: listed, and refused in one line when run."""

    INPUTS = ()

    def __init__(self, name, point, error):
        self.name, self.point, self.error = name, point, error
        self.HELP = f"(cannot be loaded: {type(error).__name__})"

    def add_parser(self, sub, details=None):
        return sub.add_parser(self.name, help=self.HELP)

    def problem(self) -> str:
        """The one line that says why the command cannot run."""
        first = (str(self.error).strip().splitlines() or [""])[0]
        return (f"the command {self.name!r} (entry point {self.point.value!r} of the group {GROUP}) cannot be "
                f"loaded: {type(self.error).__name__}: {first}")

    def run(self, args):
        from structrank.errors import StructRankError  # deferred: runs only for a broken plugin

        raise StructRankError(self.problem())


def find(name):
    """The command ``name`` (its module), None when no command has that name, or ``Unloadable`` for a plugin
    whose module fails to import."""
    if name in LIBRARY:
        return importlib.import_module(f"{__name__}.{name}")
    if not name or name.startswith("-"):
        return None
    point = plugins().get(name)
    if point is None:
        return None
    try:
        return point.load()
    except Exception as exc:  # noqa: BLE001 -- another package's import: any error, reported when it is run
        return Unloadable(name, point, exc)


def names() -> tuple:
    """Every command's name: the library's, then the plugins' by name."""
    return LIBRARY + tuple(sorted(plugins()))
