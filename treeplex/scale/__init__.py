"""Scale-out: batches of spots (local processes or Ray), one spot split over workers, flop
subsets and batch reports."""
