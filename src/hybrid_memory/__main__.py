import sys

from hybrid_memory.cli import main

sys.exit(main())
