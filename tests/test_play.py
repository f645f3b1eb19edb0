"""Playing (issue 28, stage 4): the real hand engine against phevaluator and the rules, duplicate
matches (two calling stations: exactly 0), the human agent driven by scripted input, the
blueprint agent's play against the trainer's exact expected values, action translation
against the pseudo-harmonic formula, hand histories and the ACPC protocol, and the CLI."""

import io
import os
from itertools import combinations
import subprocess
import sys

import numpy as np
import pytest

from treeplex.errors import InputError
from treeplex.model.game import GameError
from treeplex.play.agents import Blueprint, BlueprintAgent, CallingStation, Folder, HumanAgent, RandomAgent
from treeplex.play.engine import Hand, deal, replay
from treeplex.play.match import duplicate_match, play_hand


@pytest.fixture(scope="module")
def tiny(tiny_hunl):
    """A tiny abstraction (one flop class) and a blueprint trained on it in about a second."""
    return tiny_hunl


def test_hand_engine_follows_the_rules_and_phevaluator():
    from phevaluator import evaluate_cards

    rng = np.random.default_rng(1)
    for _ in range(300):
        cards = deal(rng)
        h = replay(cards, "r300c/cr900c/cc/cc")
        assert h.done and h.showdown() and h.pot == 1800
        r0, r1 = (evaluate_cards(*(cards[2 * p:2 * p + 2] + cards[4:])) for p in (0, 1))
        assert h.payoff() == 900 * int(np.sign(r1 - r0))  # phevaluator: lower is better
    h = Hand(deal(rng))
    assert h.to_act == 0 and h.to_call() == 50 and h.raise_range() == (200, 20000)
    for bad, msg in (("r150", "illegal"), ("r20001", "illegal"), ("x", "unknown")):
        with pytest.raises(GameError, match=msg):
            h.apply(bad)
    h.apply("c")
    with pytest.raises(GameError, match="fold is illegal"):
        h.apply("f")  # the big blind's option: nothing to call
    h.apply("r20000").apply("c")
    assert h.done and h.betting() == "cr20000c///" and len(h.board()) == 5
    assert replay(h.cards, "r250f").payoff() == 100  # the big blind folds: the small blind wins 100
    with pytest.raises(InputError, match="after the round"):
        replay(h.cards, "cc/cc/cc/ccc")


def test_two_calling_stations_break_even_exactly_in_duplicate():
    r = duplicate_match(CallingStation(), CallingStation(), 300, seed=3)
    assert r["mbb"] == 0 and r["ci95"] == 0 and r["pairs"] == 300
    # a folder as the small blind gives up its 50 chips at once
    assert play_hand(deal(np.random.default_rng(0)), [Folder(), CallingStation()]).payoff() == -50
    r = duplicate_match(RandomAgent(1), CallingStation(), 300, seed=3)
    assert np.isfinite(r["mbb"]) and r["ci95"] > 0
    assert len(r["per_pair"]["plain"]) == 300 and np.mean(r["per_pair"]["plain"]) * 1000 / 100 == pytest.approx(r["mbb"])
    # a repeat of the seeded match (cards and agents) gives the same pairs
    again = duplicate_match(RandomAgent(1), CallingStation(), 300, seed=3)
    assert again["per_pair"]["plain"] == r["per_pair"]["plain"]


def test_human_agent_reads_scripted_input_and_plays_legal_actions():
    script = "zz\nr10\nr400\nc\nc\nc\nc\n" * 40
    out = io.StringIO()
    human = HumanAgent(io.StringIO(script), out)
    seen = []

    class Spy(HumanAgent):
        def act(self, hand, seat):
            tok = super().act(hand, seat)
            assert hand.legal(tok)
            seen.append(tok)
            return tok

    spy = Spy(human.inp, out)
    h = play_hand(deal(np.random.default_rng(0)), [spy, CallingStation()])
    text = out.getvalue()
    assert "illegal action 'zz'" in text and "illegal action 'r10'" in text and "legal: f (fold)" in text
    assert seen[0] == "r400" and h.done and "hand over" in text
    with pytest.raises(InputError, match="input ended"):
        play_hand(deal(np.random.default_rng(0)), [HumanAgent(io.StringIO(""), io.StringIO()), CallingStation()])


def test_blueprint_agent_matches_the_trainers_exact_values(tiny):
    """Against a calling station every action stays on the blueprint's tree, so the real-game
    match estimates what the trainer's kernel computes exactly on the abstract tree with the
    station as a strategy (:func:`head_to_head`, another code path)."""
    from treeplex.blueprint.game import DECISION
    from treeplex.blueprint.train import RealDeals, head_to_head, read_checkpoint
    from treeplex.abstraction.build import load

    ab, path = tiny
    bp = Blueprint(path, ab)
    t = bp.tree
    station = np.zeros(t.n_slots, dtype=np.float32)
    for v in np.flatnonzero(t.kind == DECISION):
        k = t.n_act[v]
        a = t.labels[v].index("c" if "c" in t.labels[v] else "x")
        station[t.offset[v] + a:t.offset[v] + k * t.buckets[t.street[v]]:k] = 1
    _, arrays = read_checkpoint(path)
    exact = head_to_head(t, RealDeals(load(ab)), arrays["S"], station, 20000, seed=5)
    agent = BlueprintAgent(bp, seed=2)
    r = duplicate_match(agent, CallingStation(), 400, seed=7, table=bp.table, flops=bp.flops)
    assert agent.stats["off_tree"] == 0 and agent.stats["unreached"] == 0
    assert abs(r["mbb"] - exact["mbb"]) < 1.3 * np.hypot(r["ci95"], exact["ci95"]), (r, exact)


def test_translation_is_exact_on_tree_and_pseudo_harmonic_between(tiny):
    from treeplex.depth_limited.translation import rpat_probability

    bp = Blueprint(tiny[1], tiny[0])
    h = Hand(deal(np.random.default_rng(0)), bp.table)
    rng = np.random.default_rng(0)
    labels = bp.tree.labels[0]
    assert labels == ("f", "c", "p0.5", "p1", "a")
    for lab in labels[2:]:
        assert bp.map_action(0, h, bp.real_token(lab, h), rng) == lab
    assert bp.real_token("p1", h) == "r300" and bp.real_token("p0.5", h) == "r200"
    # a raise to 250 (0.75 pot after calling) lies between p0.5 (to 200) and p1 (to 300)
    f = rpat_probability(h.node.fraction_of(250), h.node.fraction_of(200), h.node.fraction_of(300))
    n = 4000
    low = sum(bp.map_action(0, h, "r250", rng) == "p0.5" for _ in range(n)) / n
    assert abs(low - f) < 4 * np.sqrt(f * (1 - f) / n) and 0.3 < f < 0.7
    assert bp.map_action(0, h, "r19000", rng) in ("p1", "a")
    assert bp.map_action(0, h, "f", rng) == "f" and bp.map_action(0, h, "c", rng) == "c"


def _cli(*args, stdin=None):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, "-m", "treeplex.cli", *args], capture_output=True, text=True, env=env,
                          input=stdin)


def test_cli_play_history_and_bad_inputs(tiny, tmp_path, capsys):
    from treeplex.cli import main
    from treeplex.play.history import parse_state

    ab, bp = tiny
    hist = str(tmp_path / "h.txt")
    assert main(["play", "--agent", bp, "--abstraction", ab, "--vs", "random", "--hands", "30",
                 "--history", hist]) == 0
    out = capsys.readouterr().out
    assert "mbb/g for blueprint" in out and "95% CI" in out
    lines = open(hist).read().splitlines()
    assert len(lines) == 60
    for i, line in enumerate(lines):
        s = parse_state(line)
        assert s["number"] == i and s["hand"].done and s["outcome"] == [-s["hand"].payoff(), s["hand"].payoff()]
    r = _cli("play", "--agent", "human", "--vs", "call", "--hands", "1", stdin="c\n" * 8)
    assert r.returncode == 0 and "legal:" in r.stdout, r.stderr
    for args, msg in ((["--agent", "call"], "--vs"), (["--agent", "nobody", "--vs", "call"], "agent 'nobody'"),
                      (["--agent", bp, "--vs", "call"], "--abstraction"),
                      (["--agent", "call", "--vs", "call", "--hands", "0"], "--hands"),
                      (["--agent", "call", "--vs", "call", "--history", str(tmp_path / "no" / "h")], "no such")):
        assert main(["play", *args]) == 2, args
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1, (args, err)


# ACPC protocol document's no-limit examples (holdem.nolimit.2p.reverse_blinds: 20000 stacks, blinds 50/100)
ACPC_EXAMPLES = [
    "MATCHSTATE:0:30::9s8h|",
    "MATCHSTATE:0:30:c:9s8h|",
    "MATCHSTATE:0:30:cc/:9s8h|/8c8d5c",
    "MATCHSTATE:0:30:cc/r250:9s8h|/8c8d5c",
    "MATCHSTATE:0:30:cc/r250c/:9s8h|/8c8d5c/6s",
    "MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/:|JdTc/6dJc9c/Kh",
    "MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/r20000:|JdTc/6dJc9c/Kh",
    "MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/r20000c/:KsJs|JdTc/6dJc9c/Kh/Qc",
]


def test_acpc_states_round_trip_through_the_parser():
    from treeplex.play.acpc import matchstate, parse_matchstate

    for s in ACPC_EXAMPLES:
        m = parse_matchstate(s)
        assert matchstate(m["hand"], m["position"], m["number"]) == s
    m = parse_matchstate(ACPC_EXAMPLES[-1])
    from phevaluator import evaluate_cards

    h = m["hand"]  # position 1 (the small blind, player 0) has JdTc, position 0 KsJs; all-in called on the turn
    r0, r1 = (evaluate_cards(*(h.hole(p) + h.cards[4:])) for p in (0, 1))
    assert h.done and h.pot == 40000 and h.payoff() == 20000 * np.sign(r1 - r0) != 0
    assert parse_matchstate(ACPC_EXAMPLES[1] + ":c")["action"] == "c"
    assert parse_matchstate(ACPC_EXAMPLES[3])["hand"].to_act == 0  # position 0 (the big blind, player 1) bet r250...
    for bad, msg in (("MATCHSTATE:2:0::|", "position 2"), ("MATCHSTATE:0:0:r50:9s8h|", "illegal"),
                     ("MATCHSTATE:0:0::9s9s|", "twice"), ("STATE:0:0::", "not MATCHSTATE")):
        with pytest.raises(InputError, match=msg):
            parse_matchstate(bad)


def test_acpc_server_and_client_over_loopback(tiny):
    """A dealer thread and a client in this thread on localhost: every hand the client plays,
    the dealer scores the same, with opposite signs; the dealer's AIVAT score (the client's
    policy unknown) agrees with its plain one within their intervals."""
    import threading

    from treeplex.play.acpc import connect, serve
    from treeplex.play.aivat import Aivat

    ab, path = tiny
    bp = Blueprint(path, ab)
    port, result, lines = [], {}, []

    class Sink:
        def write(self, s):
            lines.append(s)

    ready = threading.Event()

    def dealer():
        result["r"] = serve(0, BlueprintAgent(bp, seed=1), 25, seed=4, table=bp.table, flops=bp.flops,
                            history=Sink(), ready=lambda p: (port.append(p), ready.set()), timeout=60,
                            aivat=Aivat(bp, bp.flops, stride=200))

    th = threading.Thread(target=dealer)
    th.start()
    assert ready.wait(60)
    client = connect("127.0.0.1", port[0], RandomAgent(3), bp.table, timeout=60)
    th.join(60)
    r = result["r"]
    assert client["hands"] == 50 and len(lines) == 50
    assert client["chips"] == -r["mbb"] * r["pairs"] * 2 * bp.table.big_blind / 1000
    s = r["aivat"]
    assert s["pairs"] == 25 and abs(s["mbb"] - r["mbb"]) < s["ci95"] + r["ci95"], r
    from treeplex.play.history import parse_state

    assert sum(parse_state(x)["outcome"][0 if "client|" in x.split(":")[-1] else 1] for x in lines) == client["chips"]


def test_cli_serve_and_connect():
    """``treeplex play --serve`` and ``--connect`` as two processes on localhost."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    server = subprocess.Popen([sys.executable, "-m", "treeplex.cli", "play", "--agent", "call", "--serve", str(port),
                               "--hands", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(100):  # until the dealer listens
            r = _cli("play", "--agent", "random", "--connect", f"localhost:{port}")
            if r.returncode == 0 or "refused" not in r.stderr:
                break
            import time
            time.sleep(0.2)
        out, err = server.communicate(timeout=120)
    finally:
        server.kill()
    assert r.returncode == 0 and "40 hands" in r.stdout, r.stderr
    assert server.returncode == 0 and "call vs client" in out, err
    chips = int(r.stdout.split("hands, ")[1].split(" chips")[0].replace(",", ""))
    mbb = float(out.split("client: ")[1].split(" ")[0])
    assert abs(mbb * 40 * 100 / 1000 + chips) <= 0.05 * 40 * 100 / 1000 + 1e-9  # mbb printed to 0.1


# ------------------------------------------------------------------ LBR (stage 5)


def test_lbr_equity_matches_phevaluator():
    """Exact equity against a weighted range on the river and the turn (all runouts), from a
    direct loop over phevaluator; preflop the sampled equity of AA against every hand is near
    its known 85.2%."""
    from phevaluator import evaluate_cards

    from treeplex.blueprint.kernels import seed_state
    from treeplex.play.equity import HOLES as _HOLES, equity

    rng = np.random.default_rng(0)
    for n_board in (5, 4):
        cards = [int(c) for c in rng.permutation(52)[:2 + n_board]]
        hole, board = cards[:2], cards[2:]
        w = rng.random(1326) * (rng.random(1326) < 0.02)
        w[np.isin(_HOLES, cards).any(axis=1)] = 0
        num = den = 0.0
        rivers = [c for c in range(52) if c not in cards] if n_board == 4 else [None]
        for r in rivers:
            full = board + ([r] if r is not None else [])
            mine = evaluate_cards(*(hole + full))
            for h in np.flatnonzero(w):
                x, y = map(int, _HOLES[h])
                if r in (x, y):
                    continue
                other = evaluate_cards(x, y, *full)
                den += w[h]
                num += w[h] * (1.0 if mine < other else 0.5 if mine == other else 0.0)
        got = equity(np.array(hole), np.array(board), w, _HOLES, 100, seed_state(1))
        assert got == pytest.approx(num / den, abs=1e-12)
    # preflop over a dealer's few flops (a partial abstraction's): pairs (flop, hand) weighted as dealt
    from treeplex.play.lbr import AgentModel, LBRAgent

    hole = [int(c) for c in rng.permutation(52)[:2]]
    flops = np.array([sorted(rng.choice(np.setdiff1d(np.arange(52), hole), 3, replace=False)) for _ in range(2)])
    w = np.zeros(1326)
    for h in rng.choice(np.flatnonzero(~np.isin(_HOLES, hole).any(axis=1)), 5, replace=False):
        w[h] = rng.random()
    num = den = 0.0
    for f in flops.tolist():
        for t, r in combinations([c for c in range(52) if c not in hole + f], 2):
            mine = evaluate_cards(*(hole + f + [t, r]))
            for h in np.flatnonzero(w):
                x, y = map(int, _HOLES[h])
                if {x, y} & set(f + [t, r]):
                    continue
                other = evaluate_cards(x, y, *f, t, r)
                den += w[h]
                num += w[h] * (1.0 if mine < other else 0.5 if mine == other else 0.0)
    lbr = LBRAgent(AgentModel(CallingStation()), rollouts=100, flops=flops)
    assert lbr._preflop_equity(np.array(hole), w, per_flop=1081) == pytest.approx(num / den, abs=1e-12)
    aa = np.array([51, 50])
    w = np.ones(1326)
    w[np.isin(_HOLES, aa).any(axis=1)] = 0
    assert abs(equity(aa, np.zeros(0, dtype=np.int64), w, _HOLES, 3000, seed_state(2)) - 0.852) < 0.02


def test_lbr_against_a_folder_wins_the_blinds_exactly(capsys):
    """Against an agent that folds to any bet, LBR raises as the small blind (the fold
    certain, its utility is the pot) and wins 100; as the big blind the folder gives up 50:
    (100 + 50) / 2 = 75 chips = 750 mbb/g on every pair."""
    from treeplex.cli import main

    assert main(["lbr", "--opponent", "fold", "--hands", "20"]) == 0
    assert "+750.0 ± 0.0 mbb/g for LBR" in capsys.readouterr().out


def test_lbr_tracks_the_blueprints_range_by_bayes(tiny):
    """After the blueprint's first action as the small blind, LBR's weight of each hand is the
    probability of that action in the hand's preflop class, read here from the strategy sums
    by the trainer's layout (slot = offset + class * actions + action)."""
    from treeplex.abstraction.indexer import Indexer
    from treeplex.blueprint.train import read_checkpoint
    from treeplex.play.lbr import _HOLES, BlueprintModel, LBRAgent

    ab, path = tiny
    bp = Blueprint(path, ab)
    _, arrays = read_checkpoint(path)
    S = arrays["S"].astype(np.float64)
    t = bp.tree
    k = t.n_act[0]
    sums = S[t.offset[0]:t.offset[0] + k * 169].reshape(169, k)
    classes = Indexer("preflop").index(_HOLES)
    lbr = LBRAgent(BlueprintModel(bp), rollouts=20, seed=1)
    checked = 0
    for seed in range(8):
        cards = deal(np.random.default_rng(seed), bp.flops)
        h = Hand(cards, bp.table)
        lbr.begin(1, h.view(1))
        agent = BlueprintAgent(bp, seed=seed)
        agent.begin(0, h.view(0))
        tok = agent.act(h.view(0), 0)
        a = t.labels[0].index({"f": "f", "c": "c"}.get(tok) or next(
            lab for lab in t.labels[0][2:] if bp.real_token(lab, h) == tok))
        h.apply(tok)
        if h.done:
            continue
        lbr.utilities(h.view(1), 1)
        want = sums[classes, a] / sums[classes].sum(1)
        want[np.isin(_HOLES, h.hole(1)).any(axis=1)] = 0
        assert np.allclose(lbr.w, want)
        checked += 1
    assert checked >= 2


def test_cli_lbr_against_the_blueprint(tiny, tmp_path, capsys):
    from treeplex.cli import main
    from treeplex.play.history import parse_state

    ab, bp = tiny
    hist = str(tmp_path / "lbr.txt")
    assert main(["lbr", "--blueprint", bp, "--abstraction", ab, "--hands", "40", "--rollouts", "30",
                 "--history", hist]) == 0
    out = capsys.readouterr().out
    assert "mbb/g for LBR (95% CI" in out and "lower bound" in out
    assert all(parse_state(x)["hand"].done for x in open(hist).read().splitlines())
    for args, msg in ((["--blueprint", bp], "--abstraction"), (["--opponent", "fold", "--hands", "1"], "--hands"),
                      (["--opponent", "call", "--rollouts", "0"], "--rollouts")):
        assert main(["lbr", *args]) == 2, args
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1, (args, err)


def test_allin_adjustment_is_the_exact_equity_and_keeps_the_mean():
    """A turn all-in scores pot x (2e - 1) with e enumerated here over the 44 rivers by
    phevaluator; over a match with many all-ins the adjusted mean agrees with the raw one."""
    from phevaluator import evaluate_cards

    from treeplex.blueprint.kernels import seed_state
    from treeplex.play.match import allin_value

    rng = np.random.default_rng(5)
    for _ in range(5):
        cards = deal(rng)
        h = replay(cards, "r300c/cc/cr20000c/")
        e = 0.0
        rivers = [c for c in range(52) if c not in cards[:8]]
        for r in rivers:
            a, b = (evaluate_cards(*(cards[2 * p:2 * p + 2] + cards[4:8] + [r])) for p in (0, 1))
            e += (1.0 if a < b else 0.5 if a == b else 0.0) / len(rivers)
        assert allin_value(h, 1000, seed_state(0)) == pytest.approx(20000 * (2 * e - 1), abs=1e-6)
        river = replay(cards, "r300c/cc/cc/cc")
        assert allin_value(river, 1000, seed_state(0)) == river.payoff()  # a river showdown keeps its chips
    # a preflop all-in when the dealer's flops are a few (a partial abstraction's): the mean
    # over those flops that miss the hole cards, each with every turn and river
    cards = deal(rng)
    flops = np.array([sorted(rng.choice(np.setdiff1d(np.arange(52), cards[:4]), 3, replace=False)) for _ in range(3)]
                     + [[cards[0], cards[5], cards[6]]])  # the last one is blocked by a hole card
    h = replay(cards, "r20000c///")
    e, n = 0.0, 0
    for f in flops[:3].tolist():
        for t, r in combinations([c for c in range(52) if c not in cards[:4] + f], 2):
            a, b = (evaluate_cards(*(cards[2 * p:2 * p + 2] + f + [t, r])) for p in (0, 1))
            e += 1.0 if a < b else 0.5 if a == b else 0.0
            n += 1
    assert allin_value(h, 1000, seed_state(0), flops) == pytest.approx(20000 * (2 * e / n - 1), abs=1e-6)
    r = duplicate_match(RandomAgent(2), CallingStation(), 400, seed=9, allin_ev=True)
    adj = r["adjusted"]
    assert abs(r["mbb"] - adj["mbb"]) < 1.96 * max(r["ci95"], adj["ci95"])
    assert duplicate_match(CallingStation(), CallingStation(), 50, allin_ev=True)["adjusted"]["mbb"] == 0
