"""Files in and out: Gambit ``.efg``, OpenSpiel games and policies, atomic writes, plots."""
