"""structrank: structured, loss-sensitive learning to rank and reranking."""

__version__ = "0.1.0"

from structrank.errors import DataFormatError, DataValidationError, StructRankError  # noqa: E402

__all__ = ["DataFormatError", "DataValidationError", "StructRankError", "__version__"]
