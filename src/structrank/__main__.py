import sys

from structrank.cli import main

sys.exit(main())
