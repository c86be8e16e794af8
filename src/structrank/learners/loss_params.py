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
- ``LossParamsMixin``: what is the learner's own in its loss (the options it sets, ``_loss_context``; the kind
  and target it needs; ``_loss_problems``, its other parameters against the built loss) and its loss resolved
  from them through ``losses.resolve_loss``'s two parts: ``_loss_params_problems`` (the declaration, nothing
  built) and ``_built_loss`` (the build). ``parameter_problems`` (``--set``, model files) runs both, without
  labels; a fit runs each once, the first before its data and the second on its labels (``_fit_loss``:
  ``loss_`` and ``gain_``); a model read from a file builds its loss again (``_trained_loss``).
"""

from __future__ import annotations

from structrank.constraints import InvalidParameterError

from structrank.losses import Resolved, build_loss, declaration_problems, get_entry

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

    A learner declares ``_loss_kind`` (HINGE for the learners that need a max-violating structure, None for
    any), ``_loss_target`` (the target an "auto" gain is settled for) and, when it sets options itself,
    ``_loss_set_by`` ({option: its parameter}) and ``_loss_context()`` (their values)."""

    _loss_kind: str | None = None
    _loss_set_by: dict = {}
    _loss_target: str = "ideal"  # the target "auto" gains are settled for (``losses.build_for_labels``)

    def _loss_context(self) -> dict:
        """{option: value} of the loss options the learner sets from its own parameters."""
        return {}

    def _loss_problems(self, loss) -> dict:
        """{parameter: why} the learner's other parameters cannot go with the built ``loss`` (a target it lacks)."""
        return {}

    def _loss_params_problems(self) -> dict:
        """``loss`` and ``loss_params`` read against the loss's declaration (``losses.declaration_problems``)."""
        return declaration_problems(self.loss, self.loss_params, set_by=self._loss_set_by)

    def _built_loss(self, labels=None, context=None) -> Resolved:
        """The learner's loss built for ``labels`` (``losses.build_loss``; ``context`` over the learner's own
        options), or the problems of the build and of the learner's other parameters with it (``_loss_problems``).
        Stores nothing."""
        resolved = build_loss(self.loss, self.loss_params, labels, context={**self._loss_context(), **(context or {})},
                              kind=self._loss_kind, target=self._loss_target, learner=type(self).__name__)
        problems = resolved.problems or self._loss_problems(resolved.loss)
        return Resolved(problems=problems) if problems else resolved

    def _fit_loss(self, y):
        """The loss this fit trains, built once on its labels ``y`` (None: an "auto" gain is binary), its options
        read against the declaration before the data (``_start_fit``): ``loss_`` and ``gain_``;
        InvalidParameterError naming the class and the first problem when it cannot be built."""
        resolved = self._built_loss(y)
        self.loss_, self.gain_ = _built(self, resolved), resolved.gain or "binary"
        return self.loss_

    def _trained_loss(self):
        """``loss_``; for a model read from a file (which keeps its parameters and arrays, not the loss object)
        the loss its parameters build, with the gain it was trained with (``gain_``, where it is saved)."""
        loss = getattr(self, "loss_", None)
        if loss is not None:
            return loss
        saved = {"gain": str(self.gain_)} if hasattr(self, "gain_") else {}  # a loss without the option ignores it
        return _built(self, self._built_loss(context=saved))


def _built(learner, resolved: Resolved):
    """The loss of ``resolved``; InvalidParameterError naming ``learner``'s class and the first problem otherwise."""
    if resolved.problems:
        raise InvalidParameterError(f"{type(learner).__name__}: {next(iter(resolved.problems.values()))}")
    return resolved.loss
