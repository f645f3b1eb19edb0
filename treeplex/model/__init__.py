"""The game model: the rules protocol (``Game``/``State``), the compiler, ``Problem(X, Y, A)``
with its payoff operators, metrics (gap, exploitability = gap/2, mbb/g), strategies and the
exact LP."""
