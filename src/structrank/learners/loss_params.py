"""How a learner takes its loss: ``loss`` (a registered name) and ``loss_params`` (that loss's options),
in scikit-learn's idiom (``metric`` and ``metric_params``), built once per fit into ``loss_``.

The options of a loss are declared once, by the loss (``structrank.losses.registry``: its factory's
parameters, checked against ``structrank.losses.options``), so a learner lists none of them: a loss
with an option no learner knows trains through ``loss_params={"alpha": 0.5}`` on every learner of
its kind. The options a learner sets from parameters of its own (the perceptron's ``inference`` and
``C``, a seed) are refused in ``loss_params`` with the parameter to set instead.

A loss's options are given in ``loss_params`` only (``loss_params={"k": 5}``, never ``k=5``). A model
file whose header holds them flat, as files were written before ``loss_params``, reads through one
migration (``migrated_params``): each flat option its loss takes moves into ``loss_params``.

What it holds:

- ``LOSS_PARAMETERS``: the constraints of ``loss`` and ``loss_params``; ``migrated_params`` (an old header's
  flat options into ``loss_params``);
- ``LossParamsMixin``: ``_loss_options`` (the options the loss is built with),
  ``_joint_parameter_problems`` (``loss_params`` checked against the loss's declared options, and
  the loss built, outside a fit, and ``_loss_problems`` of the learner's parameters with it),
  ``_fit_loss(y)`` (the one build of a fit: ``loss_`` and ``gain_``)
  and ``_trained_loss`` (``loss_``, or for a model read from a file the loss its parameters build).
"""

from __future__ import annotations

from sklearn.utils._param_validation import InvalidParameterError

from structrank.losses import build_for_labels, get_entry, get_loss, require
from structrank.losses.options import SHARED

LOSS_PARAMETERS = {"loss": [str], "loss_params": [dict, None]}


#: the loss options model files held flat in their header before ``loss_params`` (``migrated_params``)
FLAT_OPTIONS = ("k", "feature_map", "gain", "discount", "dorm_cut", "components", "relevant_from", "crf_param")


def migrated_params(cls, params: dict) -> dict:
    """The parameters of a model file's header as the class takes them: the flat loss options of a file written
    before ``loss_params`` (``k``, ``feature_map``, ...) moved into ``loss_params`` where its loss takes them, the
    others dropped (its learner ignored them), quietly (the file's reader did not write them)."""
    own = cls().get_params(deep=False)
    flat = {name: params[name] for name in FLAT_OPTIONS if name in params and name not in own}
    if not flat:
        return params
    rest = {name: value for name, value in params.items() if name not in flat}
    if rest.get("loss_params") is not None:
        return rest
    name = rest.get("loss", own.get("loss"))
    try:
        taken = get_entry(name).options
    except ValueError:  # an unknown loss: the parameter check names it
        return rest
    return {**rest, "loss_params": {option: value for option, value in flat.items() if option in taken}}


class LossParamsMixin:
    """``loss`` and ``loss_params`` for a learner (see the module docstring).

    A learner declares ``_loss_kind`` (HINGE for the
    learners that need a max-violating structure, None for any) and, when it sets options itself,
    ``_loss_set_by`` ({option: its parameter}) and ``_loss_context()`` (their values)."""

    _loss_kind: str | None = None
    _loss_set_by: dict = {}
    _loss_target: str = "ideal"  # the target "auto" gains are settled for (``losses.build_for_labels``)

    def _loss_context(self) -> dict:
        """{option: value} of the loss options the learner sets from its own parameters."""
        return {}

    def _loss_name(self) -> str:
        return self.loss

    def _given_loss_params(self) -> dict:
        """``loss_params`` as given (an empty dict for None)."""
        return dict(self.loss_params or {})

    def _loss_options(self) -> dict:
        """The options the loss is built with: ``loss_params``, then the learner's own."""
        return {**self._given_loss_params(), **self._loss_context()}

    def _loss_params_problems(self) -> dict:
        """{parameter: why} of ``loss`` and ``loss_params`` read against the loss's declared options; nothing is
        built."""
        try:
            entry = get_entry(self._loss_name())
        except ValueError as exc:
            return {"loss": str(exc)}
        params = self.loss_params
        problems = entry.problems({} if params is None else params, set_by=self._loss_set_by)
        if problems:
            return {"loss_params": next(iter(problems.values()))}
        return {}

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
