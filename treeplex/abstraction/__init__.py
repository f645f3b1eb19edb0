"""Card abstraction for hold'em (issue 28, stage 1): a suit-isomorphic hand indexer per street,
river equities, equity histograms clustered under the earth mover's distance, and
``treeplex abstraction build``."""
