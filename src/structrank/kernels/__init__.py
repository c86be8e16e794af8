"""Kernels over vectors, token sequences and trees, and the Nyström feature map (Croce et al. 2016).

Every kernel counts its evaluations (``n_evaluations``), so that a model's cost at
classification time can be measured in kernel evaluations. Kernels combine with ``+`` and ``*``,
and ``PartKernel`` applies one to a field of composite objects.

- ``base``: Kernel, SumKernel, ProductKernel, ScaledKernel, PartKernel, LinearKernel, and
  parallel_gram (a Gram matrix in tiles over joblib workers);
- ``vector``: PolynomialKernel, RBFKernel;
- ``strings``: WordSequenceKernel (gap-weighted word subsequences, numba);
- ``trees``: Tree, parse_tree, SubsetTreeKernel (SST), PartialTreeKernel (PTK), numba;
- ``nystroem``: NystroemFeatures, an sklearn transformer over arbitrary objects.
"""

from structrank.kernels.base import (
    Kernel,
    LinearKernel,
    PartKernel,
    ProductKernel,
    ScaledKernel,
    SumKernel,
    n_objects,
    parallel_gram,
    take,
)
from structrank.kernels.nystroem import NystroemFeatures
from structrank.kernels.strings import WordSequenceKernel
from structrank.kernels.trees import PartialTreeKernel, SubsetTreeKernel, Tree, parse_tree
from structrank.kernels.vector import PolynomialKernel, RBFKernel

__all__ = [
    "Kernel",
    "LinearKernel",
    "NystroemFeatures",
    "PartKernel",
    "PartialTreeKernel",
    "PolynomialKernel",
    "ProductKernel",
    "RBFKernel",
    "ScaledKernel",
    "SubsetTreeKernel",
    "SumKernel",
    "Tree",
    "WordSequenceKernel",
    "n_objects",
    "parallel_gram",
    "parse_tree",
    "take",
]
