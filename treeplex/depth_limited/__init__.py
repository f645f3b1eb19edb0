"""Depth-limited solving with multi-valued states (Brown, Sandholm & Amos 2018).

- :mod:`.subgame`: depth-limited subgames for any game (leaf = the opponent picks one of k
  continuation values per leaf infoset), the resolve gadget, solving with cost accounting;
- :mod:`.leaves`, :mod:`.sets`: NLFH leaf-value tables; bias and self-generative sets;
- :mod:`.nested`: nested solving of an off-tree bet; :mod:`.translation`: RPAT baseline;
- :mod:`.evaluation`: exact exploitability; :mod:`.arena`: duplicate self-play matches.
"""

from .blueprint import Blueprint, compute_blueprint
from .subgame import DepthLimitedGame, SubgameSolution, resolve_gadget, root_chance, solve_subgame

__all__ = ["Blueprint", "DepthLimitedGame", "SubgameSolution", "compute_blueprint", "resolve_gadget",
           "root_chance", "solve_subgame"]
