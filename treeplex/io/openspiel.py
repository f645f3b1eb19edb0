"""OpenSpiel games and policies (optional: ``pip install 'treeplex[openspiel]'``).

- :func:`load_openspiel` ``("liars_dice(numdice=1,dice_sides=6)")``: any two-player zero-sum
  (or constant-sum) sequential pyspiel game with listed chance outcomes, wrapped as a
  treeplex rules game (:class:`OpenSpielGame`) that :func:`treeplex.compile_game` walks.
  Infoset keys are OpenSpiel's ``information_state_string``; action labels are its
  ``action_to_string`` (with the action id added where two legal actions print alike).
  Payoffs are ``state.returns()[0]``, player 0's total return.
- :func:`to_tabular_policy` / :func:`plans_from_policy`: a solution as an OpenSpiel
  ``TabularPolicy`` and back (realization plans <-> behavioral per infoset, keyed by the same
  strings as ``TabularPolicy.state_lookup``).
- :func:`save_policy` / :func:`load_policy`: ``.pkl`` (the pickled ``TabularPolicy``) or
  ``.json`` (``{"game": ..., "policy": TabularPolicy.to_dict()}``: infostate -> [[action, prob]]).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys

import numpy as np

from ..errors import GameError, InputError
from ..model.game import Game

PREFIX = "openspiel:"
INSTALL_HINT = "OpenSpiel games need open_spiel: pip install 'treeplex[openspiel]'"


def pyspiel():
    """The ``pyspiel`` module, or an :class:`InputError` with the install hint."""
    try:
        import pyspiel as module
    except ImportError:
        raise InputError(INSTALL_HINT) from None
    return module


def load_openspiel(spec: str) -> "OpenSpielGame":
    """``"openspiel:NAME(k=v,...)"`` (or without the prefix) as a treeplex game.

    Refused, with the reason: games that are not two-player, not zero- or constant-sum,
    simultaneous-move (OpenSpiel's ``turn_based_simultaneous_game(game=...)`` converts them),
    with sampled chance, or without information-state strings.
    """
    name = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    ps = pyspiel()
    try:
        with _quiet_stderr():  # OpenSpiel's C++ side also prints the error, with every game's name
            game = ps.load_game(name)
    except Exception as e:  # SpielError: the C++ message, first line
        why = str(e).strip().splitlines()[0].replace(" Available games are:", " (pyspiel.registered_names() lists them)")
        raise GameError(f"OpenSpiel cannot load {name!r}: {why}") from None
    check_supported(game, name)
    return OpenSpielGame(game, PREFIX + name)


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 to /dev/null for the duration (C++ code writes there directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def check_supported(game, name: str) -> None:
    """Raise :class:`GameError` with a one-line reason unless treeplex can solve ``game``."""
    t = game.get_type()
    GT = type(t)
    if game.num_players() != 2:
        raise GameError(f"{name}: treeplex solves two-player games; this one has {game.num_players()} players")
    if t.utility not in (GT.Utility.ZERO_SUM, GT.Utility.CONSTANT_SUM):
        raise GameError(f"{name}: treeplex solves zero-sum games; this one is "
                        f"{t.utility.name.lower().replace('_', '-')}")
    if t.dynamics != GT.Dynamics.SEQUENTIAL:
        raise GameError(f"{name}: simultaneous-move games are not supported; load it as "
                        f"openspiel:turn_based_simultaneous_game(game={name})")
    if t.chance_mode == GT.ChanceMode.SAMPLED_STOCHASTIC:
        raise GameError(f"{name}: its chance outcomes are sampled, not listed with probabilities")
    if not t.provides_information_state_string:
        raise GameError(f"{name}: it has no information-state strings to key infosets by")
    try:  # OpenSpiel accepts some bad parameters (liars_dice(numdice=-1)) until a state is made
        game.new_initial_state()
    except Exception as e:  # noqa: BLE001 - SpielError, ValueError from C++: the first line
        raise GameError(f"OpenSpiel cannot start {name!r}: {(str(e).strip().splitlines() or [''])[0]}") from None


class OpenSpielGame(Game):
    """A pyspiel game in treeplex's rules interface; chance outcomes of probability 0 are dropped.

    ``action_ids[(player, infoset key)]`` holds OpenSpiel's action ids in the order of the
    infoset's labels, filled as the compiler walks the game (used to map policies)."""

    def __init__(self, spiel_game, name: str | None = None):
        self.spiel_game = spiel_game
        full = str(spiel_game)
        self.name = name or PREFIX + (full if len(full) < 200 else spiel_game.get_type().short_name)
        self.action_ids: dict = {}
        self.record_action_ids = True  # False in the lazy mode (treeplex.run.lazy_sampling): memory per infoset

    def initial_state(self):
        return _State(self.spiel_game.new_initial_state(), self)


class _State:
    __slots__ = ("s", "g", "_key", "_actions")

    def __init__(self, s, g):
        self.s, self.g, self._key, self._actions = s, g, None, None

    def is_terminal(self):
        return self.s.is_terminal()

    def is_chance(self):
        return self.s.is_chance_node()

    def player(self):
        return self.s.current_player()

    def infoset_key(self):
        if self._key is None:
            self._key = self.s.information_state_string(self.s.current_player())
        return self._key

    def _legal(self) -> dict:
        """label -> action id: ``action_to_string``, with the id added where two print alike."""
        if self._actions is None:
            s, p = self.s, self.s.current_player()
            acts = s.legal_actions()
            names = [s.action_to_string(p, a) for a in acts]
            if len(set(names)) < len(names):
                names = [f"{a}:{n}" for a, n in zip(acts, names)]
            self._actions = dict(zip(names, acts))
            if self.g.record_action_ids:
                self.g.action_ids.setdefault((p, self.infoset_key()), tuple(acts))
        return self._actions

    def legal_actions(self):
        return list(self._legal())

    def chance_outcomes(self):
        return [(str(a), p) for a, p in self.s.chance_outcomes() if p > 0]

    def apply(self, action):
        a = int(action) if self.s.is_chance_node() else self._legal()[action]
        return _State(self.s.child(a), self.g)

    def payoff(self):
        return self.s.returns()[0]


# ------------------------------------------------------------------ policies


def _infosets(game: OpenSpielGame, problem):
    """(player, infoset index j, key, OpenSpiel action ids) for every infoset of ``problem``."""
    for p, T in enumerate(problem.treeplexes):
        for j, key in enumerate(T.infoset_keys):
            yield p, j, key, game.action_ids[(p, key)]


def to_tabular_policy(game: OpenSpielGame, problem, x: np.ndarray, y: np.ndarray):
    """OpenSpiel ``TabularPolicy`` of the realization plans (x, y) of ``problem``, compiled
    from ``game``. Behavioral probabilities b = x[s] / x[parent]; infosets the plans never
    reach play uniformly (as :meth:`Treeplex.behavioral_from_plan` reports them), and so do
    OpenSpiel states that only zero-probability deals reach (treeplex drops those)."""
    from open_spiel.python.policy import TabularPolicy

    pol = TabularPolicy(game.spiel_game)
    b = [T.behavioral_from_plan(plan) for T, plan in zip(problem.treeplexes, (x, y))]
    for p, j, key, acts in _infosets(game, problem):
        T = problem.treeplexes[p]
        row = pol.policy_for_key(key)
        row[:] = 0.0
        row[list(acts)] = b[p][T.start[j]:T.end[j]]
    return pol


def plans_from_policy(game: OpenSpielGame, problem, pol) -> tuple[np.ndarray, np.ndarray]:
    """Realization plans (x, y) of ``problem`` from an OpenSpiel ``TabularPolicy`` (Python's,
    or C++'s ``pyspiel.TabularPolicy``, e.g. ``CFRPlusSolver().tabular_average_policy()``) or
    a ``to_dict()`` table ({infostate: [(action, prob), ...]}); the probabilities of each
    infoset's legal actions are renormalized, infosets the policy lacks play uniformly."""
    if hasattr(pol, "policy_table"):  # pyspiel.TabularPolicy
        pol = pol.policy_table()
    b = [np.ones(T.n_seqs) for T in problem.treeplexes]
    for p, j, key, acts in _infosets(game, problem):
        T = problem.treeplexes[p]
        if isinstance(pol, dict):
            if key not in pol:
                b[p][T.start[j]:T.end[j]] = 1.0 / len(acts)
                continue
            probs = dict((int(a), float(q)) for a, q in pol[key])
            row = np.array([probs.get(a, 0.0) for a in acts])
        elif key in pol.state_lookup:
            row = np.asarray(pol.policy_for_key(key), dtype=float)[list(acts)]
        else:
            b[p][T.start[j]:T.end[j]] = 1.0 / len(acts)
            continue
        if np.any(row < 0) or not row.sum() > 0:
            raise GameError(f"policy at player {p} infoset {key!r}: {row.tolist()} is not a distribution")
        b[p][T.start[j]:T.end[j]] = row / row.sum()
    return tuple(T.plan_from_behavioral(bp) for T, bp in zip(problem.treeplexes, b))


def save_policy(path: str, game: OpenSpielGame, problem, x: np.ndarray, y: np.ndarray) -> None:
    """Write (x, y) as an OpenSpiel policy: ``.pkl`` pickles the ``TabularPolicy``; ``.json``
    holds ``{"game": name, "policy": TabularPolicy.to_dict()}`` with plain floats."""
    pol = to_tabular_policy(game, problem, x, y)
    if path.endswith(".pkl"):
        with open(path, "wb") as f:
            pickle.dump(pol, f)
    elif path.endswith(".json"):
        table = {k: [[int(a), float(q)] for a, q in v] for k, v in pol.to_dict().items()}
        with open(path, "w") as f:
            json.dump({"game": str(game.spiel_game), "policy": table}, f)
    else:
        raise InputError(f"--format openspiel writes .pkl or .json files, not {path!r}")


def load_policy(path: str):
    """A policy file written by :func:`save_policy` (or any pickled OpenSpiel policy):
    the policy object, or the ``{infostate: [[action, prob]]}`` table of a ``.json`` file."""
    try:
        if path.endswith(".pkl"):
            pyspiel()  # unpickling needs it; say so in one line
            with open(path, "rb") as f:
                return pickle.load(f)
        with open(path) as f:
            data = json.load(f)
        return data["policy"]
    except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError) as e:
        raise InputError(f"{path}: not an OpenSpiel policy file ({e})") from None
