"""The ``structrank`` command: a dispatcher to its commands (``structrank.commands``, one module each).

Other tools and scripts depend on the commands' names and formats (see DESIGN.md); keep them stable.
Every input problem ends in one line naming the file, the line and the problem, and exit code 2
(set STRUCTRANK_DEBUG=1 for the whole traceback).

- Start-up: only the command named on the line is built in full (``build_parser(only=...)``), and its
  long help only for ``--help`` (``details``); the others are stubs, which carry their one-line help
  (``HELP`` of each command's module) only when ``--help`` may list them, so that ``--help`` and
  ``--version`` import no model or experiment (docs/BENCHMARKS.md, "Start-up and reading", times them
  beside ``python -c pass``). Another package's commands (entry points, ``structrank.commands.plugins``)
  are looked up only for a name that is not the library's or when every command is listed.
- Errors: every exception ends in one line on stderr (``error_line``; an OSError as ``FILE:
  reason``). Exit code 2 for input and system errors (``StructRankError``, ``ValueError``,
  ``OSError`` (dask's connection errors included, named as ``--scheduler``), SQLite errors,
  ``RecursionError``, ``MemoryError``), 1 and "internal error" for anything else; Ctrl-C exits 130
  with one line. Warnings print as one line (``_one_line_warning``). A reader that closes standard
  output early (``structrank evaluate --json | head``) ends the command quietly, exit 141 (128 +
  SIGPIPE, as ``cat`` and ``grep`` end; ``BROKEN_PIPE_EXIT``).
- Inputs: each command's input files (its module's ``INPUTS``) are checked to exist before the command
  is built, so a missing ``--train`` is reported in a fraction of a second, not after the models'
  imports, in the words its reader would use (``check_input_paths``).
- Options and outputs: the commands' own (``structrank.commands.options``); every ``--out`` (and
  ``compare --plot``) goes through ``atomic.check_output`` first. ``-`` reads standard input (``--data``,
  ``--scores``, ``--run``, ``--qrels``: ``structrank.files.read_bytes``) and writes standard output (``--out``).
- ``--quiet`` (before or after the command) silences progress messages and tqdm bars (``TQDM_DISABLE``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import warnings
from pathlib import Path

from structrank import __version__, commands
from structrank.errors import DataFormatError, StructRankError


def build_parser(only=None, details=True):
    """The parser; ``only``: build that command in full and the others as stubs, so that
    ``structrank --help`` and a command's start-up do not import every model and experiment (None:
    every command in full); ``details``: the help that only ``--help`` prints (the command's long
    descriptions, and the stubs' one-line helps): True, or the command line, whose model name, if any,
    asks ``train`` for that model's help; False: none."""
    parser = argparse.ArgumentParser(
        prog="structrank", description="Structured, loss-sensitive learning to rank and reranking."
    )
    parser.add_argument("--version", action="version", version=f"structrank {__version__}")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or progress messages")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listing = _lists_commands(only, details)
    # every name, the plugins' too: for the listing, and for an unknown name (a plugin's, or the error's list)
    everything = only is None or listing or (only and only not in commands.LIBRARY)
    for name in commands.names() if everything else commands.LIBRARY:
        if only in (None, name):
            commands.find(name).add_parser(sub, details)
        elif listing:
            sub.add_parser(name, help=commands.find(name).HELP)
        else:  # no help is printed: the name alone, and the command's module is not imported
            sub.add_parser(name)
    for command in sub.choices.values():  # --quiet after the command too (SUPPRESS keeps one given before it)
        command.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                             help="no progress bars or progress messages")
    return parser


def _lists_commands(only, details) -> bool:
    """Whether the top-level help may print, listing every command with its one-line help: ``details`` is
    True, or a command line asking for help before the command ``only`` names (or naming none)."""
    if not isinstance(details, list) or only not in details:
        return bool(details)
    before = details[:details.index(only)]
    return "-h" in before or "--help" in before


def _one_line_warning(message, category, filename, lineno, line=None):
    """Warnings as one line (no source line): ``structrank: CategoryName: message``."""
    return f"structrank: {category.__name__}: {str(message).splitlines()[0] if str(message) else ''}\n"


def main(argv=None):
    """The ``structrank`` command. ``argv`` None: the process's own arguments, and the process ends
    after it (the console script, ``python -m structrank``)."""
    try:
        code = _main(argv)
        if argv is None:
            sys.stdout.flush()  # a reader that closed the pipe early is seen here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:  # Ctrl-C, even while the parser imports the models: the shell's code, no traceback
        print("structrank: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away(argv)
    finally:
        if argv is None:
            _spare_the_last_collections()


#: the exit code of a command whose reader closed standard output early (``structrank evaluate | head``):
#: 128 + SIGPIPE, as the shell reports a program that SIGPIPE ended (``cat``, ``grep``)
BROKEN_PIPE_EXIT = 141


def _reader_went_away(argv):
    """The end of a command whose standard output was closed before it finished writing: no message
    (the reader chose to stop reading), exit 141. A process that ends here points its standard
    output at the null device first, so that Python's own flush at exit finds no broken pipe."""
    if argv is None:
        with contextlib.suppress(OSError, ValueError):  # no file descriptor (a replaced sys.stdout)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    return BROKEN_PIPE_EXIT


def _spare_the_last_collections():
    """Keep the ending interpreter's garbage collections from walking every object alive.

    numba and LLVM leave hundreds of thousands of objects behind, and the collections Python runs
    as it shuts down walk them all: when this was written, a fifth of ``structrank evaluate``'s wall
    time (docs/ARCHITECTURE.md). ``gc.freeze`` puts the live objects out of the collector's reach;
    the memory goes back to the system with the process. Nothing is lost: every output was written
    and closed (atomically) before this, objects still die when their last reference goes, atexit
    handlers still run, and the standard streams are still flushed. Only for a process that ends
    here (``argv`` None), never for a caller that goes on (the tests call ``main(argv)``).
    """
    gc.freeze()


def _show_warnings():
    """Show every warning once per place (Python hides ResourceWarning and DeprecationWarning by default), but
    keep the caller's "error" filters above that (``python -W error::ResourceWarning -m structrank``, or a test's
    ``filterwarnings("error::ResourceWarning")`` around ``main(argv)``): a stricter caller stays strict."""
    errors = [f for f in warnings.filters if f[0] == "error"]
    warnings.simplefilter("default")
    for action, message, category, module, lineno in reversed(errors):
        warnings.filterwarnings(action, message.pattern if message else "", category, module.pattern if module else "",
                                lineno)


def _command_of(argv):
    """The command named in ``argv`` ("" for none: top-level --help or --version), without parsing it."""
    return next((a for a in argv if not a.startswith("-")), "")


class _ArgumentProblem(Exception):
    """A line the input check cannot read: the command's own parser reports it."""


class _InputOptionsParser(argparse.ArgumentParser):
    def error(self, message):
        raise _ArgumentProblem(message)


def check_input_paths(command, argv) -> None:
    """DataFormatError for the first input file of ``command`` in ``argv`` that is missing, a folder (but one
    holding TREC QA TRAIN-ALL's files) or not a regular file (a model file: missing), as its reader would say;
    ``-`` (standard input) and abbreviated option names are left to the command. Only the command's module is
    imported (its top level is light, ``structrank.commands``), and ``structrank.files``."""
    if not command or "-h" in argv or "--help" in argv:
        return
    found = commands.find(command)
    options = getattr(found, "INPUTS", ()) if found is not None else ()
    if not options:
        return
    from structrank.files import open_regular, train_all_folder  # deferred: start-up time, commands reading files

    parser = _InputOptionsParser(add_help=False, allow_abbrev=False)
    for option in options:
        parser.add_argument(option, action="append", default=[])
    try:
        known, _ = parser.parse_known_args(argv)
    except _ArgumentProblem:
        return
    for option in options:
        for path in getattr(known, option[2:].replace("-", "_")):
            if path == "-" or not path:
                continue
            if option == "--model":  # model_io's words; what a model file holds is read with numpy
                if not os.path.lexists(path):
                    raise DataFormatError(path, None, "model file not found")
                continue
            if train_all_folder(path):  # TREC QA TRAIN-ALL's files; a folder holding some of them: its error
                continue
            open_regular(Path(path)).close()


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_of(argv)
    found = commands.find(command) if command else None
    if isinstance(found, commands.Unloadable):  # before its parser: any line given to it gets the import's error
        print(f"structrank {command}: error: {found.problem()}", file=sys.stderr)
        return 2
    try:
        check_input_paths(command, argv)
    except (DataFormatError, OSError) as exc:  # OSError: a path under a file, too long, a loop, no permission
        print(f"structrank {command}: {error_line(exc)}", file=sys.stderr)
        return 2
    # "" or an unknown name: every command a stub
    parser = build_parser(only=command, details=("-h" in argv or "--help" in argv) and argv)
    args = parser.parse_args(argv)
    _show_warnings()
    warnings.formatwarning = _one_line_warning
    if args.quiet:
        os.environ["TQDM_DISABLE"] = "1"  # tqdm reads its options from TQDM_* variables
    try:
        return commands.find(command).run(args)
    except BrokenPipeError:
        raise  # not an error of the command's: main ends it quietly
    except Exception as exc:  # noqa: BLE001 -- every error ends in one line (STRUCTRANK_DEBUG=1: the traceback)
        if os.environ.get("STRUCTRANK_DEBUG"):  # the whole traceback, for reporting a bug
            raise
        print(f"structrank {command}: {error_line(exc)}", file=sys.stderr)
        return 2 if _is_input_error(exc) else 1


def _is_input_error(exc) -> bool:
    """Whether ``exc`` is about the user's inputs or the system (exit 2) rather than a bug (exit 1)."""
    sqlite3 = sys.modules.get("sqlite3")  # imported only by the commands that open a store
    return (isinstance(exc, (StructRankError, ValueError, OSError, RecursionError, MemoryError))
            or (sqlite3 is not None and isinstance(exc, sqlite3.Error)))


def error_line(exc) -> str:
    """One line for ``exc``, naming the file when the error carries one.

    An OSError's own text is ``[Errno 2] No such file or directory: 'x'``; this gives ``x: No such
    file or directory``. A message of several lines keeps its first (the rest is a traceback or
    detail that STRUCTRANK_DEBUG=1 shows).
    """
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else f"{exc.filename}"
        text = f"{where or repr(where)}: {exc.strerror}"
    elif isinstance(exc, RecursionError):
        text = f"an input nested too deeply to read ({exc})"
    else:
        text = str(exc) or type(exc).__name__
    text = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    kind = "error" if _is_input_error(exc) else f"internal error ({type(exc).__name__}; STRUCTRANK_DEBUG=1 shows " \
                                                  "the traceback)"
    return f"{kind}: {text}"


if __name__ == "__main__":
    sys.exit(main())
