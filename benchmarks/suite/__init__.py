"""The reproduction suite behind ``benchmarks/reproduce.py``: one module per paper section
(:mod:`.jmlr`, :mod:`.hdi_table`, :mod:`.qo`, :mod:`.thesis`, :mod:`.peers`), the profiles
(:mod:`.profiles`) and the Markdown report (:mod:`.report`)."""
