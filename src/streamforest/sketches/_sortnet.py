"""Sorting networks of 16 and 32 values held in registers, for the level 0 of the sketches of
:mod:`.sketch`: Batcher's odd-even merge sort (:func:`network`), written out one
compare-exchange a line below (the text :func:`source` makes; ``tests/test_kll.py`` checks that
the file holds it and that the networks sort).  No branch depends on the values: a sketch's
level 0 sorts a dozen random values at a time, where an insertion sort mispredicts about one
branch a value.  Not stable: ``-0.0`` and ``0.0`` may come out swapped, so callers give them no
zeros.
"""

from __future__ import annotations

from numba import njit

#: the line after which the file holds exactly what :func:`source` returns
MARKER = "# ---- written by source(); do not edit below ----\n"


def network(n: int) -> list[tuple[int, int]]:
    """Batcher's odd-even merge sort of ``n`` (a power of two) values: compare-exchanges
    ``(i, j)``, ``i < j``, in order (after each, position ``i`` holds the smaller value)."""
    pairs = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return pairs


def source(sizes=(16, 32)) -> str:
    """The compiled networks' text: ``sort<n>(x)`` sorts ``x[:n]`` in place."""
    out = []
    for n in sizes:
        out += ["", "", "@njit(cache=True)", f"def sort{n}(x):"]
        out += [f"    x{i} = x[{i}]" for i in range(n)]
        out += [f"    x{a}, x{b} = min(x{a}, x{b}), max(x{a}, x{b})" for a, b in network(n)]
        out += [f"    x[{i}] = x{i}" for i in range(n)]
    return "\n".join(out[2:]) + "\n"


# ---- written by source(); do not edit below ----
@njit(cache=True)
def sort16(x):
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    x3 = x[3]
    x4 = x[4]
    x5 = x[5]
    x6 = x[6]
    x7 = x[7]
    x8 = x[8]
    x9 = x[9]
    x10 = x[10]
    x11 = x[11]
    x12 = x[12]
    x13 = x[13]
    x14 = x[14]
    x15 = x[15]
    x0, x1 = min(x0, x1), max(x0, x1)
    x2, x3 = min(x2, x3), max(x2, x3)
    x4, x5 = min(x4, x5), max(x4, x5)
    x6, x7 = min(x6, x7), max(x6, x7)
    x8, x9 = min(x8, x9), max(x8, x9)
    x10, x11 = min(x10, x11), max(x10, x11)
    x12, x13 = min(x12, x13), max(x12, x13)
    x14, x15 = min(x14, x15), max(x14, x15)
    x0, x2 = min(x0, x2), max(x0, x2)
    x1, x3 = min(x1, x3), max(x1, x3)
    x4, x6 = min(x4, x6), max(x4, x6)
    x5, x7 = min(x5, x7), max(x5, x7)
    x8, x10 = min(x8, x10), max(x8, x10)
    x9, x11 = min(x9, x11), max(x9, x11)
    x12, x14 = min(x12, x14), max(x12, x14)
    x13, x15 = min(x13, x15), max(x13, x15)
    x1, x2 = min(x1, x2), max(x1, x2)
    x5, x6 = min(x5, x6), max(x5, x6)
    x9, x10 = min(x9, x10), max(x9, x10)
    x13, x14 = min(x13, x14), max(x13, x14)
    x0, x4 = min(x0, x4), max(x0, x4)
    x1, x5 = min(x1, x5), max(x1, x5)
    x2, x6 = min(x2, x6), max(x2, x6)
    x3, x7 = min(x3, x7), max(x3, x7)
    x8, x12 = min(x8, x12), max(x8, x12)
    x9, x13 = min(x9, x13), max(x9, x13)
    x10, x14 = min(x10, x14), max(x10, x14)
    x11, x15 = min(x11, x15), max(x11, x15)
    x2, x4 = min(x2, x4), max(x2, x4)
    x3, x5 = min(x3, x5), max(x3, x5)
    x10, x12 = min(x10, x12), max(x10, x12)
    x11, x13 = min(x11, x13), max(x11, x13)
    x1, x2 = min(x1, x2), max(x1, x2)
    x3, x4 = min(x3, x4), max(x3, x4)
    x5, x6 = min(x5, x6), max(x5, x6)
    x9, x10 = min(x9, x10), max(x9, x10)
    x11, x12 = min(x11, x12), max(x11, x12)
    x13, x14 = min(x13, x14), max(x13, x14)
    x0, x8 = min(x0, x8), max(x0, x8)
    x1, x9 = min(x1, x9), max(x1, x9)
    x2, x10 = min(x2, x10), max(x2, x10)
    x3, x11 = min(x3, x11), max(x3, x11)
    x4, x12 = min(x4, x12), max(x4, x12)
    x5, x13 = min(x5, x13), max(x5, x13)
    x6, x14 = min(x6, x14), max(x6, x14)
    x7, x15 = min(x7, x15), max(x7, x15)
    x4, x8 = min(x4, x8), max(x4, x8)
    x5, x9 = min(x5, x9), max(x5, x9)
    x6, x10 = min(x6, x10), max(x6, x10)
    x7, x11 = min(x7, x11), max(x7, x11)
    x2, x4 = min(x2, x4), max(x2, x4)
    x3, x5 = min(x3, x5), max(x3, x5)
    x6, x8 = min(x6, x8), max(x6, x8)
    x7, x9 = min(x7, x9), max(x7, x9)
    x10, x12 = min(x10, x12), max(x10, x12)
    x11, x13 = min(x11, x13), max(x11, x13)
    x1, x2 = min(x1, x2), max(x1, x2)
    x3, x4 = min(x3, x4), max(x3, x4)
    x5, x6 = min(x5, x6), max(x5, x6)
    x7, x8 = min(x7, x8), max(x7, x8)
    x9, x10 = min(x9, x10), max(x9, x10)
    x11, x12 = min(x11, x12), max(x11, x12)
    x13, x14 = min(x13, x14), max(x13, x14)
    x[0] = x0
    x[1] = x1
    x[2] = x2
    x[3] = x3
    x[4] = x4
    x[5] = x5
    x[6] = x6
    x[7] = x7
    x[8] = x8
    x[9] = x9
    x[10] = x10
    x[11] = x11
    x[12] = x12
    x[13] = x13
    x[14] = x14
    x[15] = x15


@njit(cache=True)
def sort32(x):
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    x3 = x[3]
    x4 = x[4]
    x5 = x[5]
    x6 = x[6]
    x7 = x[7]
    x8 = x[8]
    x9 = x[9]
    x10 = x[10]
    x11 = x[11]
    x12 = x[12]
    x13 = x[13]
    x14 = x[14]
    x15 = x[15]
    x16 = x[16]
    x17 = x[17]
    x18 = x[18]
    x19 = x[19]
    x20 = x[20]
    x21 = x[21]
    x22 = x[22]
    x23 = x[23]
    x24 = x[24]
    x25 = x[25]
    x26 = x[26]
    x27 = x[27]
    x28 = x[28]
    x29 = x[29]
    x30 = x[30]
    x31 = x[31]
    x0, x1 = min(x0, x1), max(x0, x1)
    x2, x3 = min(x2, x3), max(x2, x3)
    x4, x5 = min(x4, x5), max(x4, x5)
    x6, x7 = min(x6, x7), max(x6, x7)
    x8, x9 = min(x8, x9), max(x8, x9)
    x10, x11 = min(x10, x11), max(x10, x11)
    x12, x13 = min(x12, x13), max(x12, x13)
    x14, x15 = min(x14, x15), max(x14, x15)
    x16, x17 = min(x16, x17), max(x16, x17)
    x18, x19 = min(x18, x19), max(x18, x19)
    x20, x21 = min(x20, x21), max(x20, x21)
    x22, x23 = min(x22, x23), max(x22, x23)
    x24, x25 = min(x24, x25), max(x24, x25)
    x26, x27 = min(x26, x27), max(x26, x27)
    x28, x29 = min(x28, x29), max(x28, x29)
    x30, x31 = min(x30, x31), max(x30, x31)
    x0, x2 = min(x0, x2), max(x0, x2)
    x1, x3 = min(x1, x3), max(x1, x3)
    x4, x6 = min(x4, x6), max(x4, x6)
    x5, x7 = min(x5, x7), max(x5, x7)
    x8, x10 = min(x8, x10), max(x8, x10)
    x9, x11 = min(x9, x11), max(x9, x11)
    x12, x14 = min(x12, x14), max(x12, x14)
    x13, x15 = min(x13, x15), max(x13, x15)
    x16, x18 = min(x16, x18), max(x16, x18)
    x17, x19 = min(x17, x19), max(x17, x19)
    x20, x22 = min(x20, x22), max(x20, x22)
    x21, x23 = min(x21, x23), max(x21, x23)
    x24, x26 = min(x24, x26), max(x24, x26)
    x25, x27 = min(x25, x27), max(x25, x27)
    x28, x30 = min(x28, x30), max(x28, x30)
    x29, x31 = min(x29, x31), max(x29, x31)
    x1, x2 = min(x1, x2), max(x1, x2)
    x5, x6 = min(x5, x6), max(x5, x6)
    x9, x10 = min(x9, x10), max(x9, x10)
    x13, x14 = min(x13, x14), max(x13, x14)
    x17, x18 = min(x17, x18), max(x17, x18)
    x21, x22 = min(x21, x22), max(x21, x22)
    x25, x26 = min(x25, x26), max(x25, x26)
    x29, x30 = min(x29, x30), max(x29, x30)
    x0, x4 = min(x0, x4), max(x0, x4)
    x1, x5 = min(x1, x5), max(x1, x5)
    x2, x6 = min(x2, x6), max(x2, x6)
    x3, x7 = min(x3, x7), max(x3, x7)
    x8, x12 = min(x8, x12), max(x8, x12)
    x9, x13 = min(x9, x13), max(x9, x13)
    x10, x14 = min(x10, x14), max(x10, x14)
    x11, x15 = min(x11, x15), max(x11, x15)
    x16, x20 = min(x16, x20), max(x16, x20)
    x17, x21 = min(x17, x21), max(x17, x21)
    x18, x22 = min(x18, x22), max(x18, x22)
    x19, x23 = min(x19, x23), max(x19, x23)
    x24, x28 = min(x24, x28), max(x24, x28)
    x25, x29 = min(x25, x29), max(x25, x29)
    x26, x30 = min(x26, x30), max(x26, x30)
    x27, x31 = min(x27, x31), max(x27, x31)
    x2, x4 = min(x2, x4), max(x2, x4)
    x3, x5 = min(x3, x5), max(x3, x5)
    x10, x12 = min(x10, x12), max(x10, x12)
    x11, x13 = min(x11, x13), max(x11, x13)
    x18, x20 = min(x18, x20), max(x18, x20)
    x19, x21 = min(x19, x21), max(x19, x21)
    x26, x28 = min(x26, x28), max(x26, x28)
    x27, x29 = min(x27, x29), max(x27, x29)
    x1, x2 = min(x1, x2), max(x1, x2)
    x3, x4 = min(x3, x4), max(x3, x4)
    x5, x6 = min(x5, x6), max(x5, x6)
    x9, x10 = min(x9, x10), max(x9, x10)
    x11, x12 = min(x11, x12), max(x11, x12)
    x13, x14 = min(x13, x14), max(x13, x14)
    x17, x18 = min(x17, x18), max(x17, x18)
    x19, x20 = min(x19, x20), max(x19, x20)
    x21, x22 = min(x21, x22), max(x21, x22)
    x25, x26 = min(x25, x26), max(x25, x26)
    x27, x28 = min(x27, x28), max(x27, x28)
    x29, x30 = min(x29, x30), max(x29, x30)
    x0, x8 = min(x0, x8), max(x0, x8)
    x1, x9 = min(x1, x9), max(x1, x9)
    x2, x10 = min(x2, x10), max(x2, x10)
    x3, x11 = min(x3, x11), max(x3, x11)
    x4, x12 = min(x4, x12), max(x4, x12)
    x5, x13 = min(x5, x13), max(x5, x13)
    x6, x14 = min(x6, x14), max(x6, x14)
    x7, x15 = min(x7, x15), max(x7, x15)
    x16, x24 = min(x16, x24), max(x16, x24)
    x17, x25 = min(x17, x25), max(x17, x25)
    x18, x26 = min(x18, x26), max(x18, x26)
    x19, x27 = min(x19, x27), max(x19, x27)
    x20, x28 = min(x20, x28), max(x20, x28)
    x21, x29 = min(x21, x29), max(x21, x29)
    x22, x30 = min(x22, x30), max(x22, x30)
    x23, x31 = min(x23, x31), max(x23, x31)
    x4, x8 = min(x4, x8), max(x4, x8)
    x5, x9 = min(x5, x9), max(x5, x9)
    x6, x10 = min(x6, x10), max(x6, x10)
    x7, x11 = min(x7, x11), max(x7, x11)
    x20, x24 = min(x20, x24), max(x20, x24)
    x21, x25 = min(x21, x25), max(x21, x25)
    x22, x26 = min(x22, x26), max(x22, x26)
    x23, x27 = min(x23, x27), max(x23, x27)
    x2, x4 = min(x2, x4), max(x2, x4)
    x3, x5 = min(x3, x5), max(x3, x5)
    x6, x8 = min(x6, x8), max(x6, x8)
    x7, x9 = min(x7, x9), max(x7, x9)
    x10, x12 = min(x10, x12), max(x10, x12)
    x11, x13 = min(x11, x13), max(x11, x13)
    x18, x20 = min(x18, x20), max(x18, x20)
    x19, x21 = min(x19, x21), max(x19, x21)
    x22, x24 = min(x22, x24), max(x22, x24)
    x23, x25 = min(x23, x25), max(x23, x25)
    x26, x28 = min(x26, x28), max(x26, x28)
    x27, x29 = min(x27, x29), max(x27, x29)
    x1, x2 = min(x1, x2), max(x1, x2)
    x3, x4 = min(x3, x4), max(x3, x4)
    x5, x6 = min(x5, x6), max(x5, x6)
    x7, x8 = min(x7, x8), max(x7, x8)
    x9, x10 = min(x9, x10), max(x9, x10)
    x11, x12 = min(x11, x12), max(x11, x12)
    x13, x14 = min(x13, x14), max(x13, x14)
    x17, x18 = min(x17, x18), max(x17, x18)
    x19, x20 = min(x19, x20), max(x19, x20)
    x21, x22 = min(x21, x22), max(x21, x22)
    x23, x24 = min(x23, x24), max(x23, x24)
    x25, x26 = min(x25, x26), max(x25, x26)
    x27, x28 = min(x27, x28), max(x27, x28)
    x29, x30 = min(x29, x30), max(x29, x30)
    x0, x16 = min(x0, x16), max(x0, x16)
    x1, x17 = min(x1, x17), max(x1, x17)
    x2, x18 = min(x2, x18), max(x2, x18)
    x3, x19 = min(x3, x19), max(x3, x19)
    x4, x20 = min(x4, x20), max(x4, x20)
    x5, x21 = min(x5, x21), max(x5, x21)
    x6, x22 = min(x6, x22), max(x6, x22)
    x7, x23 = min(x7, x23), max(x7, x23)
    x8, x24 = min(x8, x24), max(x8, x24)
    x9, x25 = min(x9, x25), max(x9, x25)
    x10, x26 = min(x10, x26), max(x10, x26)
    x11, x27 = min(x11, x27), max(x11, x27)
    x12, x28 = min(x12, x28), max(x12, x28)
    x13, x29 = min(x13, x29), max(x13, x29)
    x14, x30 = min(x14, x30), max(x14, x30)
    x15, x31 = min(x15, x31), max(x15, x31)
    x8, x16 = min(x8, x16), max(x8, x16)
    x9, x17 = min(x9, x17), max(x9, x17)
    x10, x18 = min(x10, x18), max(x10, x18)
    x11, x19 = min(x11, x19), max(x11, x19)
    x12, x20 = min(x12, x20), max(x12, x20)
    x13, x21 = min(x13, x21), max(x13, x21)
    x14, x22 = min(x14, x22), max(x14, x22)
    x15, x23 = min(x15, x23), max(x15, x23)
    x4, x8 = min(x4, x8), max(x4, x8)
    x5, x9 = min(x5, x9), max(x5, x9)
    x6, x10 = min(x6, x10), max(x6, x10)
    x7, x11 = min(x7, x11), max(x7, x11)
    x12, x16 = min(x12, x16), max(x12, x16)
    x13, x17 = min(x13, x17), max(x13, x17)
    x14, x18 = min(x14, x18), max(x14, x18)
    x15, x19 = min(x15, x19), max(x15, x19)
    x20, x24 = min(x20, x24), max(x20, x24)
    x21, x25 = min(x21, x25), max(x21, x25)
    x22, x26 = min(x22, x26), max(x22, x26)
    x23, x27 = min(x23, x27), max(x23, x27)
    x2, x4 = min(x2, x4), max(x2, x4)
    x3, x5 = min(x3, x5), max(x3, x5)
    x6, x8 = min(x6, x8), max(x6, x8)
    x7, x9 = min(x7, x9), max(x7, x9)
    x10, x12 = min(x10, x12), max(x10, x12)
    x11, x13 = min(x11, x13), max(x11, x13)
    x14, x16 = min(x14, x16), max(x14, x16)
    x15, x17 = min(x15, x17), max(x15, x17)
    x18, x20 = min(x18, x20), max(x18, x20)
    x19, x21 = min(x19, x21), max(x19, x21)
    x22, x24 = min(x22, x24), max(x22, x24)
    x23, x25 = min(x23, x25), max(x23, x25)
    x26, x28 = min(x26, x28), max(x26, x28)
    x27, x29 = min(x27, x29), max(x27, x29)
    x1, x2 = min(x1, x2), max(x1, x2)
    x3, x4 = min(x3, x4), max(x3, x4)
    x5, x6 = min(x5, x6), max(x5, x6)
    x7, x8 = min(x7, x8), max(x7, x8)
    x9, x10 = min(x9, x10), max(x9, x10)
    x11, x12 = min(x11, x12), max(x11, x12)
    x13, x14 = min(x13, x14), max(x13, x14)
    x15, x16 = min(x15, x16), max(x15, x16)
    x17, x18 = min(x17, x18), max(x17, x18)
    x19, x20 = min(x19, x20), max(x19, x20)
    x21, x22 = min(x21, x22), max(x21, x22)
    x23, x24 = min(x23, x24), max(x23, x24)
    x25, x26 = min(x25, x26), max(x25, x26)
    x27, x28 = min(x27, x28), max(x27, x28)
    x29, x30 = min(x29, x30), max(x29, x30)
    x[0] = x0
    x[1] = x1
    x[2] = x2
    x[3] = x3
    x[4] = x4
    x[5] = x5
    x[6] = x6
    x[7] = x7
    x[8] = x8
    x[9] = x9
    x[10] = x10
    x[11] = x11
    x[12] = x12
    x[13] = x13
    x[14] = x14
    x[15] = x15
    x[16] = x16
    x[17] = x17
    x[18] = x18
    x[19] = x19
    x[20] = x20
    x[21] = x21
    x[22] = x22
    x[23] = x23
    x[24] = x24
    x[25] = x25
    x[26] = x26
    x[27] = x27
    x[28] = x28
    x[29] = x29
    x[30] = x30
    x[31] = x31
