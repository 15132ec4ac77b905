"""``fem.compiled.Bound``: a compiled function called with arguments of the types of its
first call goes straight to the compiled version; an argument of another type, dtype,
dimension or layout (also inside a named tuple) goes through numba's dispatcher again, so
that the result is always the one the dispatcher gives."""

from collections import namedtuple

import numba
import numpy as np

from fem.compiled import Bound

Pair = namedtuple("Pair", "a b")


@numba.njit(cache=False)
def _reads(pair, x, s):
    """pair.a[1] + 10 x[1] + 100 s: wrong if x is read with the wrong stride or dtype."""
    return pair.a[1] + 10.0 * x[1] + 100.0 * s


def expected(pair, x, s):
    return float(pair.a[1] + 10.0 * x[1] + 100.0 * s)


class Counted:
    """The dispatcher, counting the calls that go through it."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.dispatcher(*args)

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)


def test_same_types_take_the_compiled_version_directly():
    counted = Counted(_reads)
    bound = Bound(counted)
    pair = Pair(np.arange(3.0), np.zeros(2))
    x = np.arange(3.0)
    assert bound(pair, x, 1.0) == expected(pair, x, 1.0)
    assert bound.entry is not None
    for s in (0.5, 2.0):
        assert bound(pair, x + s, s) == expected(pair, x + s, s)
    assert counted.calls == 1


def test_other_types_go_through_the_dispatcher():
    counted = Counted(_reads)
    bound = Bound(counted)
    pair = Pair(np.arange(3.0), np.zeros(2))
    x = np.arange(3.0)
    bound(pair, x, 1.0)
    cases = [
        (pair, np.arange(6.0)[::2], 1.0),                   # strided: another layout
        (pair, np.arange(3), 1.0),                          # integers
        (pair, np.arange(3, dtype=np.float32), 1.0),        # another float
        (pair, np.broadcast_to(np.arange(3.0), (3,)), 1.0), # read-only
        (pair, x, 3),                                       # an int scalar
        (pair, x, np.float64(2.5)),                         # a numpy scalar
        (Pair(np.arange(3), np.zeros(2)), x, 1.0),          # a named tuple of other types
        (Pair(np.arange(3.0), np.zeros(2)[None]), x, 1.0),  # ... another dimension
    ]
    for args in cases:
        before = counted.calls
        for _ in range(2):          # once to bind, once through the binding
            assert bound(*args) == expected(*args), args
        assert counted.calls == before + 1, args


def test_a_plain_function_is_called_as_is():
    calls = []

    def plain(a):
        calls.append(a)
        return 2 * a

    bound = Bound(plain)
    assert bound(2) == 4 and bound(3) == 6
    assert calls == [2, 3] and bound.entry is None


def test_arrays_of_one_numba_type_share_the_binding():
    # a single row is both C and Fortran contiguous: numba types it C, as any C array
    counted = Counted(_reads)
    bound = Bound(counted)
    pair = Pair(np.arange(3.0), np.zeros(2))
    bound(pair, np.ones((1, 3))[0], 1.0)
    x = np.arange(4.0)
    assert bound(pair, x, 2.0) == expected(pair, x, 2.0)
    assert counted.calls == 1


def test_a_new_named_tuple_of_the_same_types_keeps_the_binding():
    # a scheme makes its outputs anew for each chunk: same types, another object
    counted = Counted(_reads)
    bound = Bound(counted)
    x = np.arange(3.0)
    bound(Pair(np.arange(3.0), np.zeros(2)), x, 1.0)
    for shift in (1.0, 2.0):
        pair = Pair(np.arange(3.0) + shift, np.zeros(2))
        assert bound(pair, x, 1.0) == expected(pair, x, 1.0)
    assert counted.calls == 1
