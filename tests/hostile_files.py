"""Hostile model files made from good ones, at the archive's level (issue #48): what an attacker
or a careless tool does to a file without going through :func:`streamforest.save`.

- :func:`inflate_array`: an array entry whose ``.npy`` header declares more rows, its data padded
  with zeros and deflated at level 1 (as save does) or 9 (a zip bomb), with a valid checksum;
- :func:`pad_manifest`: ``manifest.json`` followed by spaces (valid JSON that loads);
- :func:`swap_byte_order`: an array entry rewritten big-endian (``>f8``, the same values);
- :func:`duplicate_entry`: a second entry of one name (two ``manifest.json``, the last edited);
- :func:`edit_manifest`: the manifest's JSON changed by a function;
- truncation and byte flips are plain byte edits.

Large entries are never built in memory: a stream of ``n`` zero (or space) bytes is made of
independent deflate blocks of one MiB each (:func:`_filler`), computed once per level, and its
CRC-32 combined from its parts' (:func:`crc32_combine`); the archive is written by
:func:`write_zip` from compressed payloads (zipfile can only compress what it is given).  Used by
``tests/test_file_hostile.py`` and ``benchmarks/file_fuzz.py``.
"""

from __future__ import annotations

import functools
import io
import json
import struct
import zipfile
import zlib
from typing import NamedTuple

import numpy as np

MIB = 2**20


class Entry(NamedTuple):
    """An archive entry as written: its name, method, compressed payload (bytes, or a list of
    chunks), CRC-32 and uncompressed size."""

    name: str
    method: int
    payload: object
    crc: int
    size: int


def read_entries(blob: bytes) -> list[tuple[str, bytes]]:
    """``(name, uncompressed bytes)`` of every entry of a model file, in order."""
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def plain(name: str, data: bytes, level: int = 1) -> Entry:
    """An entry holding ``data``, deflated at ``level`` (0: stored)."""
    if level == 0:
        return Entry(name, zipfile.ZIP_STORED, data, zlib.crc32(data), len(data))
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return Entry(name, zipfile.ZIP_DEFLATED, c.compress(data) + c.flush(), zlib.crc32(data),
                 len(data))  # fmt: skip


@functools.lru_cache(maxsize=8)
def _filler(byte: int, level: int) -> bytes:
    """One MiB of ``byte`` deflated as an independent, flushed (not final) block."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(bytes([byte]) * MIB) + c.flush(zlib.Z_FULL_FLUSH)


def _gf2_times(matrix: list, vector: int) -> int:
    total, i = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector >>= 1
        i += 1
    return total


def _gf2_square(matrix: list) -> list:
    return [_gf2_times(matrix, matrix[n]) for n in range(32)]


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of ``A + B`` from ``crc1`` (of ``A``), ``crc2`` (of ``B``) and ``len(B)``
    (zlib's ``crc32_combine``, which Python's zlib lacks)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]
    even = _gf2_square(odd)
    odd = _gf2_square(even)
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


@functools.lru_cache(maxsize=256)
def _fill_crc(byte: int, n: int) -> int:
    """The CRC-32 of ``n`` bytes ``byte`` (halving: no large buffer)."""
    if n <= MIB:
        return zlib.crc32(bytes([byte]) * n)
    half = n // 2
    crc = crc32_combine(_fill_crc(byte, half), _fill_crc(byte, half), half)
    return crc32_combine(crc, _fill_crc(byte, n - 2 * half), n - 2 * half)


def padded(name: str, head: bytes, n: int, byte: int = 0, level: int = 1) -> Entry:
    """An entry of ``head`` then ``n`` bytes ``byte``, deflated at ``level`` without building
    them: independent flushed blocks (a deflate block only refers back within itself here),
    then an empty final block; its CRC-32 combined from the parts'."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    chunks = [c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)]
    whole, rest = divmod(n, MIB)
    chunks += [_filler(byte, level)] * whole
    if rest:
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        chunks.append(c.compress(bytes([byte]) * rest) + c.flush(zlib.Z_FULL_FLUSH))
    chunks.append(zlib.compressobj(level, zlib.DEFLATED, -15).flush())  # the final block
    crc = crc32_combine(zlib.crc32(head), _fill_crc(byte, n), n)
    return Entry(name, zipfile.ZIP_DEFLATED, chunks, crc, len(head) + n)


def write_zip(entries: list[Entry]) -> bytes:
    """A zip archive of ``entries`` (sizes below 4 GiB: no zip64), as zipfile writes one."""
    out = io.BytesIO()
    central = []
    for e in entries:
        name = e.name.encode()
        chunks = e.payload if isinstance(e.payload, list) else [e.payload]
        csize = sum(len(c) for c in chunks)
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, e.method, 0, 33,
                              e.crc, csize, e.size, len(name), 0))  # fmt: skip
        out.write(name)
        for c in chunks:
            out.write(c)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, e.method, 0, 33,
                                   e.crc, csize, e.size, len(name), 0, 0, 0, 0, 0o644 << 16,
                                   offset) + name)  # fmt: skip
    start = out.tell()
    for c in central:
        out.write(c)
    size = out.tell() - start
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), size,
                          start, 0))  # fmt: skip
    return out.getvalue()


def rebuild(blob: bytes, replace: dict | None = None, extra: list | None = None,
            level: int = 1) -> bytes:  # fmt: skip
    """``blob``'s entries (each deflated again at ``level``), those named in ``replace``
    replaced by its :class:`Entry`, then ``extra`` entries."""
    replace = replace or {}
    out = [replace.get(n) or plain(n, d, level) for n, d in read_entries(blob)]
    return write_zip(out + list(extra or []))


def npy_header(data: bytes) -> tuple[dict, int]:
    """The header dict of a ``.npy`` entry and where its data starts."""
    f = io.BytesIO(data)
    version = np.lib.format.read_magic(f)
    read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
            else np.lib.format.read_array_header_2_0)  # fmt: skip
    shape, fortran, dtype = read(f)
    return {
        "shape": shape,
        "fortran_order": fortran,
        "descr": np.lib.format.dtype_to_descr(dtype),
    }, f.tell()


def _header_bytes(d: dict) -> bytes:
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, d) if len(repr(d)) < 60000 else (
        np.lib.format.write_array_header_2_0(f, d)
    )
    return f.getvalue()


def array_entries(blob: bytes) -> list[tuple[str, dict, int]]:
    """``(name, header dict, uncompressed size)`` of every ``.npy`` entry of non-zero size."""
    out = []
    for name, data in read_entries(blob):
        if name.endswith(".npy"):
            d, start = npy_header(data)
            if len(data) > start:
                out.append((name, d, len(data)))
    return out


def inflate_array(blob: bytes, name: str, size: int, level: int = 1) -> bytes:
    """``blob`` with array entry ``name`` declaring about ``size`` bytes (its first dimension
    grown), its data padded with zeros, deflated at ``level``."""
    data = dict(read_entries(blob))[name]
    d, start = npy_header(data)
    shape = d["shape"] or (1,)
    itemsize = np.dtype(np.lib.format.descr_to_dtype(d["descr"])).itemsize
    row = itemsize * int(np.prod(shape[1:], dtype=np.int64)) or itemsize
    rows = max(shape[0] + 1, size // row)
    new = dict(d, shape=(rows, *shape[1:]), fortran_order=False)
    head = _header_bytes(new) + data[start:]
    return rebuild(blob, {name: padded(name, head, rows * row - (len(data) - start), 0, level)})


def pad_manifest(blob: bytes, n: int, level: int = 1) -> bytes:
    """``blob`` with its manifest followed by ``n`` spaces (still valid JSON)."""
    data = dict(read_entries(blob))["manifest.json"]
    return rebuild(blob, {"manifest.json": padded("manifest.json", data, n, ord(" "), level)})


def swap_byte_order(blob: bytes, name: str, keep_values: bool = True) -> bytes:
    """``blob`` with array entry ``name`` stored in the other byte order (``keep_values``: the
    same numbers, byte-swapped; else the same bytes read the other way)."""
    data = dict(read_entries(blob))[name]
    d, start = npy_header(data)
    dtype = np.lib.format.descr_to_dtype(d["descr"])
    a = np.frombuffer(data[start:], dtype=dtype)
    other = dtype.newbyteorder()
    raw = a.astype(other).tobytes() if keep_values else data[start:]
    head = _header_bytes(dict(d, descr=np.lib.format.dtype_to_descr(other)))
    return rebuild(blob, {name: plain(name, head + raw)})


def duplicate_entry(blob: bytes, name: str, edit=None) -> bytes:
    """``blob`` with a second entry ``name`` (its data passed through ``edit``) at the end."""
    data = dict(read_entries(blob))[name]
    return rebuild(blob, extra=[plain(name, edit(data) if edit else data)])


def edit_manifest(blob: bytes, edit) -> bytes:
    """``blob`` with its manifest's JSON changed in place by ``edit(manifest)``."""
    manifest = json.loads(dict(read_entries(blob))["manifest.json"])
    edit(manifest)
    text = json.dumps(manifest, separators=(",", ":")).encode()
    return rebuild(blob, {"manifest.json": plain("manifest.json", text)})
