"""Playing and evaluating HUNL agents (issue 28, stages 4 and 5): the real game, agents,
duplicate matches, hand histories, the ACPC protocol, local best response."""
