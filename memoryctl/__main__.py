import sys

from memoryctl.cli import main

sys.exit(main())
