"""The refinement parts of ``treeplex solve``: ``--refine efpe --xi XI`` and ``--infoset-regret``."""

from __future__ import annotations

from ..errors import InputError
from ..model.metrics import perturbed_gap
from .efpe import make_efpe_solver, perturbation, solve_efpe
from .infoset_regret import InfosetRegret

DEFAULT_XI = 0.01  # the paper's best range is xi in [0.005, 0.01] (section 4)
_UNSUPPORTED = {"checkpoint": "--checkpoint", "resume": "--resume", "restart": "--restart", "prior": "--warm-start"}


def solve_refined(args, problem, params: dict, stop: dict):
    """Solve the xi-perturbed game; returns (driver Result, extra JSON fields)."""
    from ..run.driver import solve

    xi = DEFAULT_XI if args.xi is None else args.xi
    for key, flag in _UNSUPPORTED.items():
        if params.get(key):
            raise InputError(f"--refine efpe does not support {flag}")
    algorithm = params.pop("algorithm")
    if algorithm == "lp":
        res = solve_efpe(problem, "lp", xi)
    else:
        res = solve(problem, make_efpe_solver(problem, algorithm, xi, **params), **stop)
    gap = perturbed_gap(problem, perturbation(problem, xi), res.x, res.y)
    return res, {"refine": "efpe", "xi": xi, "gap_perturbed": gap}


def infoset_regret_report(problem, x, y, full: bool) -> dict:
    """``max_infoset_regret`` (player i's payoff units) and where; the full list if ``full``."""
    r = InfosetRegret(problem)(x, y)
    player, key = r.argmax
    out = {"max_infoset_regret": r.max, "max_infoset_regret_at": {"player": player, "infoset": str(key)}}
    if full:
        out["infoset_regrets"] = r.as_list()
    return out


def print_refinement(out: dict, unit: str) -> None:
    if "refine" in out:
        print(f"refinement      {out['refine']}, xi = {out['xi']:g}: the gap above is in the unperturbed game; "
              f"in the perturbed game it is {out['gap_perturbed']:.4e} {unit}")
    at = out["max_infoset_regret_at"]
    print(f"infoset regret  max {out['max_infoset_regret']:.4e} {unit} at player {at['player']} infoset "
          f"{at['infoset']!r} (regret there if it were reached; EFPE paper, section 4)")
