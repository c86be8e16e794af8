"""Old names of public keywords and attributes, still accepted for a while with a FutureWarning.

When a public name changes (issue 23: one name per concept, ``eval_set`` for the dev set,
``relevant_from`` for the relevance threshold, ``random_state`` for a seed), the old one keeps
working for a release or two, with a FutureWarning that names the new one. Every rename goes
through this module, so they all read alike and one grep finds them when they are removed.
"""

from __future__ import annotations

import functools
import warnings

#: the default of a deprecated keyword that takes a value (a learner's flat loss options): not given
DEPRECATED = "deprecated"


def warn_renamed(owner: str, old: str, new: str, stacklevel: int = 2) -> None:
    """FutureWarning: ``owner``'s ``old`` is now written ``new``, pointing at the line ``stacklevel``
    frames above the function that calls this one (2: that function's caller)."""
    warnings.warn(f"{owner}: {old} is renamed {new}; the old name will be removed in a future release",
                  FutureWarning, stacklevel=stacklevel + 1)


def renamed_keywords(renames: dict):
    """Decorator: the function also takes the old keywords of ``renames``, each with a FutureWarning.

    ``renames`` maps an old keyword to its new one (``{"min_label": "relevant_from"}``), or a tuple of
    old keywords to one new keyword that takes them together as a tuple
    (``{("dev_features", "dev"): "eval_set"}``: ``fit(X, data, dev_features=F, dev=D)`` is
    ``fit(X, data, eval_set=(F, D))``). Giving an old keyword and its new one, or only some of a
    tuple's, is a TypeError, as any wrong keyword is.

    Examples
    --------
    >>> @renamed_keywords({"min_label": "relevant_from"})
    ... def good(labels, relevant_from=1):
    ...     return [label >= relevant_from for label in labels]
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     good([0, 2], min_label=2)
    [False, True]
    >>> print(caught[0].message)
    good: min_label is renamed relevant_from; the old name will be removed in a future release
    """

    def decorate(func):
        owner = func.__qualname__

        @functools.wraps(func)
        def call(*args, **kwargs):
            for old, new in renames.items():
                names = old if isinstance(old, tuple) else (old,)
                given = [name for name in names if name in kwargs]
                if not given:
                    continue
                if new in kwargs:
                    raise TypeError(f"{owner}() got {given[0]!r} and its new name {new!r}: pass {new!r} only")
                if len(given) < len(names):
                    raise TypeError(f"{owner}(): pass {new}=({', '.join(names)}), not {given[0]!r} alone")
                values = tuple(kwargs.pop(name) for name in names)
                kwargs[new] = values if isinstance(old, tuple) else values[0]
                warn_renamed(owner, " and ".join(names), f"{new}=({', '.join(names)})" if isinstance(old, tuple)
                             else new)
            return func(*args, **kwargs)

        return call

    return decorate


def renamed_attribute(old: str, new: str) -> property:
    """A read-only class attribute ``old`` that gives the learned attribute ``new``, with a FutureWarning
    (absent, as ``new`` is, before fit: ``hasattr`` stays quiet)."""

    def get(self):
        if not hasattr(self, new):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {old!r}")
        warn_renamed(type(self).__name__, old, new)
        return getattr(self, new)

    return property(get, doc=f"Old name of ``{new}`` (FutureWarning).")
