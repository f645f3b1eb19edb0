"""The ACPC dealer's text protocol (version 2.0.0) over TCP: client and server.

The dealer sends each player ``MATCHSTATE:<position>:<hand>:<betting>:<cards>`` lines (``\\r\\n``
ended) after every action and at a hand's end; a player whose turn it is answers the line it
got followed by ``:<action>`` (``f``, ``c``, ``r<total>``). A client first sends
``VERSION:2.0.0``. Positions, cards and betting are :mod:`.history`'s (the big blind is position
0; the other's hole cards are empty until a showdown shows them), e.g.
``MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/:|JdTc/6dJc9c/Kh``.

:func:`serve` deals duplicate pairs (:mod:`.match`) between a local agent and one client that
connects to localhost; :func:`connect` plays a local agent as a client of any dealer.
"""

from __future__ import annotations

import socket

from ..errors import InputError
from ..model.game import GameError
from .engine import Hand, Table, replay
from .history import cards_field, parse_cards_field, position, state_line
from .match import seat_scores, summary

VERSION = "VERSION:2.0.0"


def matchstate(h: Hand, pos: int, number: int) -> str:
    """The state line the player at ACPC position ``pos`` sees."""
    seen = (True, True) if h.showdown() else tuple(p == pos for p in (0, 1))
    return f"MATCHSTATE:{pos}:{number}:{h.betting()}:{cards_field(h, seen)}"


def parse_matchstate(line: str, table: Table = Table()) -> dict:
    """``MATCHSTATE:...`` (optionally ``:<action>`` after it, as a client answers) ->
    {position, number, betting, hand (replayed as that position sees it), action, state}."""
    f = line.strip().split(":")
    if len(f) not in (5, 6) or f[0] != "MATCHSTATE":
        raise InputError(f"acpc: {line.strip()!r} is not MATCHSTATE:<position>:<hand>:<betting>:<cards>[:<action>]")
    try:
        pos, number = int(f[1]), int(f[2])
    except ValueError:
        raise InputError(f"acpc: bad position or hand number in {line.strip()!r}") from None
    if pos not in (0, 1):
        raise InputError(f"acpc: position {pos} in {line.strip()!r}; heads-up has positions 0 and 1")
    h = replay(parse_cards_field(f[4], "acpc"), f[3], table)
    return {"position": pos, "number": number, "betting": f[3], "hand": h, "action": f[5] if len(f) == 6 else None,
            "state": ":".join(f[:5])}


def _lines(sock):
    buf = b""
    while True:
        data = sock.recv(65536)
        if not data:
            if buf.strip():
                yield buf.decode(errors="replace").strip()
            return
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace").strip()
            if text and text[0] not in "#;":  # comments, as the dealer allows
                yield text


def _send(sock, text):
    sock.sendall((text + "\r\n").encode())


def serve(port: int, agent, pairs: int, seed: int = 0, table: Table = Table(), flops=None, history=None,
          log=None, ready=None, timeout: float = 600.0, aivat=None) -> dict:
    """Deal ``pairs`` duplicate pairs on localhost:``port`` (0: any free port) between
    ``agent`` (here) and the first client that connects; ``ready(port)`` is called once the
    socket listens. Returns the local agent's summary (:func:`.match.summary`); with ``aivat``
    (an :class:`.aivat.Aivat`) its ``aivat`` summary too: the dealer sees every card, and the
    client's policy is unknown (no terms at its decisions)."""
    import numpy as np

    from .engine import deal

    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("127.0.0.1", port))
    except OSError as e:
        raise InputError(f"--serve {port}: cannot listen on localhost ({e.strerror})") from None
    srv.listen(1)
    srv.settimeout(timeout)
    if log is not None:
        print(f"acpc: dealing on localhost:{srv.getsockname()[1]}; waiting for a client", file=log, flush=True)
    if ready is not None:
        ready(srv.getsockname()[1])
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        raise InputError(f"--serve: no client connected within {timeout:.0f} s") from None
    finally:
        srv.close()
    conn.settimeout(timeout)
    rng = np.random.default_rng(seed)
    out, scored = [], []
    with conn:
        lines = _lines(conn)
        first = next(lines, "")
        if not first.startswith("VERSION:2."):
            raise InputError(f"acpc: the client sent {first!r} first, expected {VERSION}")
        number = 0
        for _ in range(pairs):
            cards = deal(rng, flops)
            u = sc = 0
            for me in (0, 1):
                h = _deal_hand(conn, lines, agent, me, cards, number, table)
                chips, score = seat_scores(h, me, aivat, (agent, None) if me == 0 else (None, agent))
                u, sc = u + chips, sc + score
                if history is not None:
                    names = [agent.name, "client"] if me == 0 else ["client", agent.name]
                    history.write(state_line(h, number, names) + "\n")
                number += 1
            out.append(u / 2)
            scored.append(sc / 2)
    r = summary(out, table.big_blind)
    if aivat is not None:
        r["aivat"] = summary(scored, table.big_blind)
    return r


def _deal_hand(conn, lines, agent, me: int, cards, number: int, table: Table) -> Hand:
    h = Hand(cards, table)
    them = 1 - me
    pos = position(them)
    agent.begin(me, h.view(me))
    _send(conn, matchstate(h, pos, number))
    while not h.done:
        if h.to_act == me:
            h.apply(agent.act(h.view(me), me))
        else:
            state = matchstate(h, pos, number)
            line = next(lines, None)
            if line is None:
                raise InputError(f"acpc: the client left in hand {number}")
            if not line.startswith(state + ":"):
                raise InputError(f"acpc: the client answered {line!r} to {state!r}")
            try:
                h.apply(line[len(state) + 1:].strip())
            except GameError as e:
                raise InputError(f"acpc: the client's action in hand {number} is illegal: {e}") from None
        _send(conn, matchstate(h, pos, number))
    agent.end(h.view(me), me)
    return h


def connect(host: str, port: int, agent, table: Table = Table(), timeout: float = 600.0) -> dict:
    """Play ``agent`` as a client of the dealer at host:port until it closes the connection;
    returns {hands, chips (the agent's total), mbb}."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as e:
        raise InputError(f"--connect {host}:{port}: {e.strerror or e}") from None
    hands, chips, number, ended = 0, 0, None, True
    with sock:
        _send(sock, VERSION)
        for line in _lines(sock):
            m = parse_matchstate(line, table)
            h, me = m["hand"], 1 - m["position"]
            if m["number"] != number:
                if not ended:
                    raise InputError(f"acpc: hand {number} did not end before hand {m['number']} began")
                number, ended = m["number"], False
                agent.begin(me, h)
            if h.done:
                if not ended:
                    agent.end(h, me)
                    hands += 1
                    chips += seat_scores(h, me)[0]
                    ended = True
            elif h.to_act == me:
                _send(sock, f"{m['state']}:{agent.act(h, me)}")
    return {"hands": hands, "chips": chips, "mbb": chips / max(hands, 1) * 1000.0 / table.big_blind}
