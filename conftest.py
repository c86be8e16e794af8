"""Root pytest configuration: modules of optional extras are not collected (as doctests) without them."""

import importlib.util

# structrank/torch.py is the optional ``torch`` extra: it imports torch at the top
collect_ignore = [] if importlib.util.find_spec("torch") else ["src/structrank/torch.py"]
