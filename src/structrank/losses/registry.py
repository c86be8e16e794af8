"""The registry of ranking losses: name -> how to build the loss from a learner's options.

Each module of ``structrank.losses`` (other than this one and ``base``) registers its losses at
import with ``@register``; the registry imports them all the first time it is asked, so a new
loss is one new module in this package and nothing else: learners, the command line's model list
and the generated docs read the registry.

Its calls:

- ``register(name, summary, kind, feature_maps, paper, constraints)``: a decorator on a factory
  whose parameters (with their defaults) are the loss's options, declared there once: a learner's
  ``loss_params`` are checked against them (``LossEntry.problems``: an option the loss does not
  take, a value outside its constraint, ``options.SHARED`` or the entry's own);
- ``get_loss(name, **options)`` builds it (options it does not take are ignored), ``get_entry``
  gives its ``LossEntry``; ``build_for_labels`` builds the loss a fit trains, its gain settled on
  the training labels;
- ``resolve_loss(name, params, labels, ...)``: a learner's loss, from its name and ``loss_params`` to the
  built loss or the problems that keep it from being built (``Resolved``), storing nothing: every check a
  learner's loss goes through, in one place. Its two parts, ``declaration_problems`` (no build) and
  ``build_loss``, are what a fit runs once each, before its data and on its labels;
- ``loss_names(kind)`` and ``entries()`` list them (the hinges by name, then the probabilistic
  objectives);
- ``require(loss, kind, learner)``: the clear error of a loss of the wrong kind;
- ``resolve_gain(gain, loss, options, target, y)``: the NDCG gain a fit uses ("auto" settled on the
  labels), which every learner of a loss asks here rather than deciding for itself.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field

import numpy as np

from structrank.losses.base import HINGE, chosen_feature_map

_ENTRIES: dict = {}
_LOADED = False


@dataclass(frozen=True)
class LossEntry:
    """One registered loss: its name, a one-line summary, its kind, the feature maps it offers,
    and the factory that builds it from options (the factory's parameters are the options it takes)."""

    name: str
    summary: str
    kind: str
    feature_maps: tuple
    factory: object
    paper: str = ""  # where it comes from ("" for structrank's own)
    own_constraints: tuple = ()  # (option, constraints) of options the shared table does not know
    map_options: tuple = ()  # (option, feature maps) of options only some feature maps read

    @property
    def options(self) -> tuple:
        return tuple(inspect.signature(self.factory).parameters)

    @property
    def defaults(self) -> dict:
        """{option: its default}, as the factory declares them."""
        return {name: p.default for name, p in inspect.signature(self.factory).parameters.items()}

    def problems(self, params, owner="loss_params", set_by=()) -> dict:
        """{option: why} for ``params`` (a learner's ``loss_params``): not a dict, an option this loss does not
        take or that the learner sets itself (``set_by``: {option: what sets it, "its parameter C"}), a value
        outside the option's constraint. Empty when each option is one the loss takes with a value it allows;
        a combination the loss cannot build (a feature map without an oracle) shows only when it is built."""
        # deferred: scikit-learn's constraint objects load to check options, not to run a loss
        from structrank.constraints import problem
        from structrank.losses.options import SHARED

        if not isinstance(params, dict):
            return {owner: f"{owner} must be a dict of the options of loss {self.name!r} or None, got {params!r}"}
        constraints = {**SHARED, **dict(self.own_constraints)}
        found = {}
        for name, value in params.items():
            if name in set_by:
                found[name] = f"{owner}: {name!r} is set by the learner ({set_by[name]})"
            elif name not in self.options:
                taken = ", ".join(self.options) or "none"
                found[name] = f"{owner}: loss {self.name!r} takes no option {name!r}; its options: {taken}"
            else:
                why = problem(f"{owner}[{name!r}]", value, constraints.get(name, ()))
                if why is None and name == "feature_map" and value is not None:
                    why = _feature_map_problem(self.name, value, self.feature_maps)
                if why:
                    found[name] = why
        return found

    def unread(self, params, feature_map, owner="loss_params") -> dict:
        """{option: why} of the options in ``params`` (a learner's own ``loss_params``) given a value other than
        their default that the loss, built with ``feature_map``, would not read (``register``'s ``map_options``):
        ``scale`` of "map" with phi_po, ``dorm_cut`` of "ndcg" with phi_po. Checked on the built loss's feature
        map, as a learner may choose it (the latent learners' positional map for MAP)."""
        defaults, found = self.defaults, {}
        for name, maps in self.map_options:
            if name in params and feature_map not in maps and not _same(params[name], defaults[name]):
                where = " or ".join(repr(m) for m in maps)
                found[name] = (f"{owner}[{name!r}]={params[name]!r} would be ignored: loss {self.name!r} reads it only "
                               f"with feature_map {where}, and this one runs with {feature_map!r} (set "
                               f"{owner}['feature_map'], or leave {name!r} out)")
        return found

    def build(self, **options):
        """The loss with the options it takes; options it does not take are ignored (a learner
        passes all of its loss options to every loss)."""
        taken = {k: v for k, v in options.items() if k in self.options}
        return self.factory(**taken)


def _same(value, default) -> bool:
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # an array compared elementwise is not a default
        return False


def _feature_map_problem(name, feature_map, offered):
    """Why the loss ``name`` cannot run with ``feature_map`` (the feature maps it declares), or None."""
    try:
        chosen_feature_map(name, feature_map, offered)
    except ValueError as exc:
        return str(exc)
    return None


def register(name: str, summary: str, kind: str = HINGE, feature_maps: tuple = ("po",), paper: str = "",
             constraints: dict | None = None, map_options: dict | None = None):
    """Decorator: register ``factory(**options) -> RankingLoss`` under ``name``; the factory's parameters and
    their defaults are the loss's options. ``constraints``: {option: constraints} of options whose name
    ``structrank.losses.options.SHARED`` does not know (scikit-learn's constraint vocabulary).
    ``map_options``: {option: the feature maps that read it} of options the other feature maps ignore (a
    learner's ``loss_params`` giving one of them a value with another map is refused: ``LossEntry.unread``)."""

    def decorate(factory):
        if name in _ENTRIES and _ENTRIES[name].factory is not factory:
            raise ValueError(f"loss {name!r} is registered twice")
        _ENTRIES[name] = LossEntry(name, summary, kind, tuple(feature_maps), factory, paper,
                                   tuple((constraints or {}).items()),
                                   tuple((option, tuple(maps)) for option, maps in (map_options or {}).items()))
        return factory

    return decorate


def _load():
    global _LOADED
    if _LOADED:
        return
    # deferred: import cycle, structrank.losses imports this registry
    import structrank.losses as package

    for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
        if module not in ("base", "registry", "options"):  # the contract, this table, the options' constraints
            importlib.import_module(f"structrank.losses.{module}")
    _LOADED = True


def entries() -> dict:
    """{name: LossEntry} of every registered loss: the hinges by name, then the probabilistic objectives."""
    _load()
    return dict(sorted(_ENTRIES.items(), key=lambda item: (item[1].kind != HINGE, item[0])))


def loss_names(kind: str | None = None) -> tuple:
    """The registered loss names, hinges first; ``kind`` ("hinge" or "probabilistic") keeps one kind."""
    return tuple(name for name, entry in entries().items() if kind is None or entry.kind == kind)


def get_entry(name: str) -> LossEntry:
    """The ``LossEntry`` of the registered loss ``name``; ValueError naming the known ones otherwise."""
    known = entries()
    if name not in known:
        raise ValueError(f"unknown loss {name!r}; known: {', '.join(known)}")
    return known[name]


def get_loss(name: str, **options):
    """The registered loss ``name`` built with ``options`` (those it does not take are ignored)."""
    return get_entry(name).build(**options)


def require(loss, kind: str, learner: str):
    """A clear error when a learner gets a loss of the wrong kind (e.g. a CRF objective in an SVM)."""
    if loss.kind != kind:
        raise ValueError(f"{learner} needs a {kind} loss, got {loss.label!r} ({loss.kind}); "
                         f"the {kind} losses are: {', '.join(loss_names(kind))}")
    return loss


#: the values of a loss's ``gain`` option: "auto" is settled on the labels at fit (``resolve_gain``)
GAINS = ("auto", "binary", "exp2")


def resolve_gain(gain, loss, options, target, y) -> str:
    """The NDCG gain a fit uses: "auto" is graded ("exp2") when the labels ``y`` have more than two
    levels, the target is the ideal one (the latent targets are binary) and the registered loss
    ``loss`` builds with graded gains under ``options``; binary otherwise.

    >>> resolve_gain("auto", "ndcg", {}, "ideal", [0, 1, 2]), resolve_gain("auto", "map", {}, "ideal", [0, 1, 2])
    ('exp2', 'binary')
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be 'auto', 'binary' or 'exp2', got {gain!r}")
    if "gain" not in get_entry(loss).options:
        return "binary"
    return build_for_labels(loss, {**options, "gain": gain}, y, target)[1]


def build_for_labels(name, options, y, target="ideal"):
    """``(loss, gain)``: the registered loss ``name`` that a fit on labels ``y`` trains, built once from
    ``options``, with its gain settled: "auto" (the default of a loss that takes ``gain``) builds the graded
    loss ("exp2") when ``resolve_gain`` would choose it, and the binary one where that loss has no graded oracle
    for these options or ``y`` is None (no labels to grade by); ``gain`` is None for a loss without the option."""
    entry = get_entry(name)
    if "gain" not in entry.options:
        return entry.build(**options), None
    gain = options.get("gain", "auto")
    if gain == "auto":
        if target == "ideal" and y is not None and np.unique(np.asarray(y)).size > 2:
            try:
                return entry.build(**{**options, "gain": "exp2"}), "exp2"
            except ValueError:  # this loss and feature map have no graded oracle
                pass
        gain = "binary"
    return entry.build(**{**options, "gain": gain}), gain


@dataclass(frozen=True)
class Resolved:
    """A learner's loss resolved (``resolve_loss``): the built ``loss`` and the ``gain`` it was built with (None for
    a loss without the option), or, when it cannot be built as given, its ``problems`` ({parameter: why}, the first
    the one to report) and no loss.

    Examples
    --------
    >>> resolve_loss("ndcg", {"k": 5}, [0, 1, 0]).loss.label, resolve_loss("ndcg", {"k": 5}, [0, 1, 0]).gain
    ('ndcg@5/po', 'binary')
    >>> resolve_loss("map", {"k": 5}).problems["loss_params"][:40]
    "loss_params: loss 'map' takes no option "
    """

    loss: object = None
    gain: str | None = None
    problems: dict = field(default_factory=dict)


def declaration_problems(name, params=None, *, set_by=None, owner="loss_params") -> dict:
    """{"loss": why} when no loss is registered as ``name``, else {owner: why} of the first option of ``params`` (a
    learner's ``loss_params``) that the loss's declaration refuses (``LossEntry.problems``: not an option of the
    loss, one the learner sets itself, ``set_by``, or a value outside its constraint). Nothing is built: this is
    the part of a resolution that needs neither labels nor a build, which a fit checks before its data."""
    try:
        entry = get_entry(name)
    except ValueError as exc:
        return {"loss": str(exc)}
    problems = entry.problems({} if params is None else params, owner, set_by or {})
    return {owner: next(iter(problems.values()))} if problems else {}


def build_loss(name, params=None, labels=None, *, context=None, kind=None, target="ideal", learner="the learner",
               owner="loss_params") -> Resolved:
    """The loss of options its declaration takes (``declaration_problems`` found none) built for ``labels``: the
    options ``params`` (a learner's ``loss_params``) with ``context`` over them (the options the learner sets from
    its own parameters), an "auto" gain settled on the labels for ``target`` (``build_for_labels``; None, with no
    labels to grade by, builds it binary), of the ``kind`` ``learner`` needs (``require``), with no option of
    ``params`` that the built loss's feature map would not read (``LossEntry.unread``); or the problems that show
    only in the build."""
    params = {} if params is None else params
    try:
        loss, gain = build_for_labels(name, {**params, **(context or {})}, labels, target)
        if kind is not None:
            require(loss, kind, learner)
    except ValueError as exc:  # options each valid that build no loss together, or a loss of another kind
        return Resolved(problems={"loss": str(exc)})
    unread = get_entry(name).unread(params, loss.feature_map, owner)
    if unread:
        return Resolved(problems={owner: next(iter(unread.values()))})
    return Resolved(loss, gain)


def resolve_loss(name, params=None, labels=None, *, set_by=None, owner="loss_params", **build) -> Resolved:
    """A learner's loss from its name, its options ``params`` and the labels: ``declaration_problems``, then
    ``build_loss`` (``build``: its keyword arguments). A pure function: it stores nothing, and the same arguments
    give an equal result. Outside a fit both parts run without labels (``ScoreLoss.named``; a learner's
    ``parameter_problems`` for ``--set`` and model files); a fit runs each once, the declaration before its data
    and the build on its labels, which an "auto" gain needs.

    >>> resolve_loss("ndcg", {"k": 5}, [0, 1, 2]).gain, resolve_loss("ndcg", {"k": 0}).problems
    ('exp2', {'loss_params': "loss_params['k'] must be an int in the range [1, 2147483647], got 0"})
    """
    problems = declaration_problems(name, params, set_by=set_by, owner=owner)
    return Resolved(problems=problems) if problems else build_loss(name, params, labels, owner=owner, **build)
