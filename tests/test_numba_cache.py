"""The numba cache fallback: an installed package that cannot write next to its sources, used
by an account without a writable home, still imports (its kernels cache in a temp folder)."""

import os
import tempfile

from numba.core import config

from streamforest import _numba_cache as NC


def test_falls_back_to_a_temp_folder_only_when_no_default_place_is_writable(monkeypatch):
    seen = []

    def writable(path):  # only the fallback folder (the sources may themselves be in /tmp)
        seen.append(path)
        return os.path.basename(path).startswith("streamforest-numba-")

    monkeypatch.setattr(NC, "_writable", writable)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    got = NC.ensure_cache_dir()
    assert got == config.CACHE_DIR and got.startswith(tempfile.gettempdir())
    assert any(p.endswith("__pycache__") for p in seen)  # the source folder was tried first

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(NC, "_writable", lambda path: True)
    assert NC.ensure_cache_dir() is None and config.CACHE_DIR == ""  # numba's choice stands

    monkeypatch.setattr(config, "CACHE_DIR", os.path.join(tempfile.gettempdir(), "mine"))
    assert NC.ensure_cache_dir() is None  # NUMBA_CACHE_DIR set by the user: left alone
