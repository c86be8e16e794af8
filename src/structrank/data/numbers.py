"""Numbers in numba: the mirror of ``grammar.NUMBER`` and ``grammar.INTEGER`` for the kernels that
read text a byte at a time (the SVMlight/LETOR parser, the TREC qrels and run reader).

A kernel cannot call Python per token, so this module holds the grammar's pieces as numba functions;
tests/library/test_grammar.py checks on generated tokens that ``is_number`` and ``grammar.NUMBER`` agree.

- ``space``: the white space ``bytes.split()`` splits at (ASCII space, tab, LF, VT, FF, CR);
- ``decimal``: the exact fast path for a decimal. One with at most 18 significant digits and a
  power of ten within 10^+-22 whose digits fit in 53 bits is one correctly rounded IEEE
  multiplication or division of two exact doubles (Clinger's fast path), so its value is the one
  ``float`` gives; any other token is left to the caller (``ok`` False);
- ``is_number``: whether a token matches ``grammar.NUMBER`` (for the tokens ``decimal`` leaves);
- ``integer``: ``grammar.INTEGER`` within a bound, without overflow.

Light: NumPy and numba only; ``structrank.metrics`` may import it (it is no file reader).
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit

TWO53 = 2**53
POW10 = np.array([10.0**i for i in range(23)])  # exact doubles: 10^22 = 2^22 * 5^22, 5^22 < 2^53
INT64_MAX = 2**63 - 1
WORDS = (np.frombuffer(b"inf", np.uint8), np.frombuffer(b"infinity", np.uint8), np.frombuffer(b"nan", np.uint8))


@njit(cache=True, nogil=True, inline="always")
def space(b):
    # bytes.split()'s whitespace: space, \t, \n, \v, \f, \r
    return b == 32 or (9 <= b <= 13)


@njit(cache=True, nogil=True, inline="always")
def _digits(buf, p, end, mantissa, digits):
    """Read the digits from p on into the mantissa (``digits``: its significant digits so far,
    leading zeros not counted): ``(p after them, mantissa, digits, how many were read)``, the last
    -1 when the mantissa would pass 18 digits (the fast path's limit)."""
    start = p
    while p < end and 48 <= buf[p] <= 57:
        d = buf[p] - 48
        if mantissa != 0 or d != 0:
            digits += 1
            if digits > 18:
                return p, mantissa, digits, -1
            mantissa = mantissa * 10 + d
        p += 1
    return p, mantissa, digits, p - start


@njit(cache=True, nogil=True)
def decimal(buf, start, end, pow10):
    """(value, ok): the fast path for ``[+-]digits[.digits][(e|E)[+-]digits]``; ok False otherwise."""
    p = start
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):  # + -
        negative = buf[p] == 45
        p += 1
    p, mantissa, digits, n_whole = _digits(buf, p, end, 0, 0)
    if n_whole < 0:
        return 0.0, False
    n_fraction = 0
    if p < end and buf[p] == 46:  # .
        p, mantissa, digits, n_fraction = _digits(buf, p + 1, end, mantissa, digits)
        if n_fraction < 0:
            return 0.0, False
    if n_whole + n_fraction == 0:
        return 0.0, False
    exponent = -n_fraction
    if p < end and (buf[p] == 101 or buf[p] == 69):  # e E
        p += 1
        exp_negative = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            exp_negative = buf[p] == 45
            p += 1
        if p == end:
            return 0.0, False
        e = 0
        while p < end and 48 <= buf[p] <= 57:
            if e < 100000:
                e = e * 10 + (buf[p] - 48)
            p += 1
        exponent += -e if exp_negative else e
    if p != end:
        return 0.0, False
    if mantissa == 0:
        return -0.0 if negative else 0.0, True
    if mantissa > TWO53 or exponent > 22 or exponent < -22:
        return 0.0, False
    value = float(mantissa)
    value = value * pow10[exponent] if exponent >= 0 else value / pow10[-exponent]
    return -value if negative else value, True


@njit(cache=True, nogil=True)
def integer(buf, start, end, limit):
    """(value, ok) for ``[+-]digits`` in [-limit - 1, limit] (int64's range for limit 2^63 - 1)."""
    p = start
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        negative = buf[p] == 45
        p += 1
    if p == end:
        return 0, False
    lowest = -limit - 1 if negative else -limit
    value = 0  # -|x| so far: the negative range holds int64's lowest value, the positive one does not
    while p < end:
        d = buf[p] - 48
        if d < 0 or d > 9:
            return 0, False
        bound = (lowest + d) // 10  # value * 10 - d >= lowest, without overflow: value >= ceil(...)
        if bound * 10 != lowest + d:
            bound += 1
        if value < bound:
            return 0, False
        value = value * 10 - d
        p += 1
    return (value if negative else -value), True


@njit(cache=True, nogil=True)
def _word(buf, start, end, word):
    """Whether buf[start:end] is ``word`` (lowercase ASCII letters) in any case."""
    if end - start != word.shape[0]:
        return False
    for i in range(word.shape[0]):
        if buf[start + i] | 32 != word[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def is_number(buf, start, end, words):
    """Whether buf[start:end] matches ``grammar.NUMBER`` (checked for the tokens the fast path
    leaves to NumPy, whose conversion also reads ``1_5`` and ``+nan``): ASCII decimal digits with
    an optional sign, point and exponent, or ``inf``/``infinity``/``nan`` in any case."""
    p = start
    if p < end and (buf[p] == 43 or buf[p] == 45):  # + -
        p += 1
    for w in range(len(words)):
        if _word(buf, p, end, words[w]):
            return True
    n_digits = 0
    while p < end and 48 <= buf[p] <= 57:
        p += 1
        n_digits += 1
    if p < end and buf[p] == 46:  # .
        p += 1
        while p < end and 48 <= buf[p] <= 57:
            p += 1
            n_digits += 1
    if n_digits == 0:
        return False
    if p < end and (buf[p] == 101 or buf[p] == 69):  # e E
        p += 1
        if p < end and (buf[p] == 43 or buf[p] == 45):
            p += 1
        if p == end:
            return False
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    return p == end
