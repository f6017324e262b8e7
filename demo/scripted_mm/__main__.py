"""``python demo/scripted_mm -acp -config agent.yaml``, as demo/mm runs it.

Run by its path, not with ``-m``: ``-m`` would put the current directory (the user's project,
the agent's cwd) first on ``sys.path``, where any ``yaml.py`` would shadow a real module.
"""

import os
import sys

if not __package__:  # run by path: sys.path[0] is this folder; the package's parent is wanted
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from scripted_mm.cli import main

sys.exit(main(sys.argv[1:]))
