"""How a learner takes its loss: ``loss`` (a registered name) and ``loss_params`` (that loss's options),
in scikit-learn's idiom (``metric`` and ``metric_params``), built once per fit into ``loss_``.

The options of a loss are declared once, by the loss (``structrank.losses.registry``: its factory's
parameters, checked against ``structrank.losses.options``), so a learner lists none of them: a loss
with an option no learner knows trains through ``loss_params={"alpha": 0.5}`` on every learner of
its kind. The options a learner sets from parameters of its own (the perceptron's ``inference`` and
``C``, a seed) are refused in ``loss_params`` with the parameter to set instead.

The flat parameters the learners took before (``k=5``, ``feature_map="dorm"``, ``gain="exp2"``, ...)
stay as deprecated aliases (``structrank.deprecation``: a FutureWarning at fit), defaulting to
``DEPRECATED``; given, each joins ``loss_params`` where its loss takes it and is ignored otherwise,
as before. Model files written before ``loss_params`` read as if it had been given
(``migrated_params``).

What it holds:

- ``LOSS_PARAMETERS``: the constraints of ``loss`` and ``loss_params``; ``flat_constraints(names)``
  those of the deprecated aliases;
- ``LossParamsMixin``: ``_loss_options`` (the options the loss is built with),
  ``_joint_parameter_problems`` (``loss_params`` checked against the loss's declared options, and
  the loss built, outside a fit, and ``_loss_problems`` of the learner's parameters with it),
  ``_fit_loss(y)`` (the one build of a fit: ``loss_`` and ``gain_``)
  and ``_trained_loss`` (``loss_``, or for a model read from a file the loss its parameters build).
"""

from __future__ import annotations

from sklearn.utils._param_validation import Hidden, InvalidParameterError, StrOptions

from structrank.deprecation import DEPRECATED, warn_renamed
from structrank.losses import build_for_labels, get_entry, get_loss, require
from structrank.losses.options import SHARED

LOSS_PARAMETERS = {"loss": [str], "loss_params": [dict, None]}


def flat_constraints(names) -> dict:
    """The constraints of the deprecated flat options ``names``: their old ones, or ``DEPRECATED`` (not given)."""
    return {name: [*SHARED[name], Hidden(StrOptions({DEPRECATED}))] for name in names}


def migrated_params(cls, params: dict) -> dict:
    """The parameters of a model file written before ``loss_params`` (its flat loss options given) as the
    class takes them now: the flat options its loss takes moved into ``loss_params``, quietly (the file's
    reader did not write them)."""
    flat = getattr(cls, "_flat_loss_options", ())
    given = {name: params[name] for name in flat if name in params and params[name] != DEPRECATED}
    if not given or params.get("loss_params") is not None:
        return params
    name = params.get("loss", cls().get_params(deep=False).get("loss"))
    try:
        taken = get_entry(name).options
    except ValueError:  # an unknown loss: the parameter check names it
        return params
    moved = {option: value for option, value in given.items() if option in taken}
    return {**params, **dict.fromkeys(given, DEPRECATED), "loss_params": moved}


class LossParamsMixin:
    """``loss`` and ``loss_params`` for a learner (see the module docstring).

    A learner declares ``_flat_loss_options`` (its deprecated aliases), ``_loss_kind`` (HINGE for the
    learners that need a max-violating structure, None for any) and, when it sets options itself,
    ``_loss_set_by`` ({option: its parameter}) and ``_loss_context()`` (their values)."""

    _flat_loss_options: tuple = ()
    _loss_kind: str | None = None
    _loss_set_by: dict = {}
    _loss_target: str = "ideal"  # the target "auto" gains are settled for (``losses.build_for_labels``)

    def _loss_context(self) -> dict:
        """{option: value} of the loss options the learner sets from its own parameters."""
        return {}

    def _loss_name(self) -> str:
        return self.loss

    def _given_loss_params(self, warn=False) -> dict:
        """``loss_params`` with the deprecated flat options that were given (a FutureWarning each with ``warn``)."""
        params = dict(self.loss_params or {})
        taken = get_entry(self._loss_name()).options
        for name in self._flat_loss_options:
            value = getattr(self, name)
            if isinstance(value, str) and value == DEPRECATED:
                continue
            if warn:
                warn_renamed(type(self).__name__, name, f"loss_params={{{name!r}: ...}}", stacklevel=4)
            if name in taken:  # an option its loss does not read was ignored before, and still is
                params.setdefault(name, value)
        return params

    def _loss_options(self, warn=False) -> dict:
        """The options the loss is built with: ``loss_params`` (and the flat aliases), then the learner's own."""
        return {**self._given_loss_params(warn), **self._loss_context()}

    def _loss_params_problems(self) -> dict:
        """{parameter: why} of ``loss`` and ``loss_params`` (and the flat aliases) read against the loss's
        declared options; nothing is built."""
        try:
            entry = get_entry(self._loss_name())
        except ValueError as exc:
            return {"loss": str(exc)}
        params = self.loss_params
        problems = entry.problems({} if params is None else params, set_by=self._loss_set_by)
        if problems:
            return {"loss_params": next(iter(problems.values()))}
        both = [name for name in self._flat_loss_options if name in (params or {}) and getattr(self, name) != DEPRECATED]
        if both:
            return {both[0]: f"{both[0]} is given twice: as a parameter (deprecated) and in loss_params; give it in "
                             "loss_params only"}
        # the flat aliases met their own constraints; a feature map the loss has no oracle for shows here
        problems = entry.problems(self._given_loss_params())
        return {"loss": next(iter(problems.values()))} if problems else {}

    def _joint_parameter_problems(self) -> dict:
        """The options read against the loss's declaration, and the loss they build, with the learner's other
        parameters (``_loss_problems``). In a fit the loss built here is the fit's (``loss_``), unless its gain is
        "auto", which waits for the labels (``_fit_loss``)."""
        problems = self._loss_params_problems()
        if problems:
            return problems
        fitting = getattr(self, "_fitting", False)
        options = self._loss_options()
        if fitting and options.get("gain", get_entry(self._loss_name()).defaults.get("gain")) == "auto":
            return {}
        try:
            loss = self._checked(get_loss(self._loss_name(), **options))
        except ValueError as exc:
            return {"loss": str(exc)}
        problems = self._unread_problems(loss)
        if fitting and not problems:
            self.loss_, self.gain_ = loss, options.get("gain", "binary")
        return problems or self._loss_problems(loss)

    def _unread_problems(self, loss) -> dict:
        """{"loss_params": why} when an option given would be ignored by the feature map ``loss`` runs with."""
        problems = get_entry(self._loss_name()).unread(self._given_loss_params(), loss.feature_map)
        return {"loss_params": next(iter(problems.values()))} if problems else {}

    def _loss_problems(self, loss) -> dict:
        """{parameter: why} the learner's other parameters cannot go with the built ``loss`` (a target it lacks)."""
        return {}

    def _start_fit(self):
        self.__dict__.pop("loss_", None)  # a refit builds its own
        self._fitting = True
        try:
            super()._start_fit()
        finally:
            self._fitting = False
        self._given_loss_params(warn=True)  # the flat aliases' FutureWarnings, pointing at the caller's fit

    def _checked(self, loss):
        return require(loss, self._loss_kind, type(self).__name__) if self._loss_kind else loss

    def _fit_loss(self, y):
        """The loss this fit trains, built once (``loss_``): at the start of the fit, or here with an "auto" gain
        settled on the labels ``y`` (``gain_``)."""
        if "loss_" in self.__dict__:
            return self.loss_
        try:
            loss, gain = build_for_labels(self._loss_name(), self._loss_options(), y, self._loss_target)
            self.loss_ = self._checked(loss)
        except ValueError as exc:
            raise InvalidParameterError(f"{type(self).__name__}: {exc}") from None
        problems = self._unread_problems(self.loss_) or self._loss_problems(self.loss_)
        if problems:
            raise InvalidParameterError(f"{type(self).__name__}: {next(iter(problems.values()))}")
        self.gain_ = gain or "binary"
        return self.loss_

    def _trained_loss(self):
        """``loss_``; for a model read from a file (which keeps its parameters and arrays, not the loss object)
        the loss its parameters build, with the gain it was trained with (``gain_``, where it is saved)."""
        loss = getattr(self, "loss_", None)
        if loss is not None:
            return loss
        options = self._loss_options()
        if hasattr(self, "gain_") and "gain" in get_entry(self._loss_name()).options:
            options["gain"] = str(self.gain_)
        return self._checked(get_loss(self._loss_name(), **options))
