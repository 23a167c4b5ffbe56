"""
Islands: the sets of bodies that act on one another in a step, each solved on its own.

Two bodies share an island when a joint, a mimic pair, a loop joint or a contact point joins
them (the ground and static shapes join nothing).  Every step the formulation names the unit
each of its solver items moves (maximal: a body; tree: a tree of the forest, ``group``) and the
pairs of units its items join; the islands are the connected sets (union-find, the smallest
unit the root, so the labels come out in unit order), and each kind of item is sorted by island
keeping its order within the island.  The solver then sweeps one island at a time until that
island's own largest impulse change falls under the tolerance, as Box2D's and Bullet's island
managers do.  A robot that touches nothing of another robot's therefore sees exactly the rows, in
exactly the order and for exactly the sweeps it would see alone: it steps bit for bit as it would
in a world of its own, and a robot at rest costs no sweeps of a busy one.

The arrays live in ``arrays.ContactWork`` (``isl_*``, sized by the engine: the contact points
grow with it); the item kinds are the constants below.
"""
from .math3d import jit_inline

#: Item kinds: joint blocks (maximal) or links (tree: mimic pairs, loop joints and elements),
#: the live axes, the multi-DOF joints' friction, the contact points, the tree's loop joints' own
#: axes and its spherical loop joints' friction.
ROWS, AXES, FREE, POINTS, LOOP_AXES, LOOP_FREE = range(6)
N_KIND = 6


@jit_inline
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]  # path halving
        i = parent[i]
    return i


@jit_inline
def begin(cwork):
    """Start the step's union-find: every unit its own island."""
    parent = cwork.isl_parent
    for i in range(parent.shape[0]):
        parent[i] = i


@jit_inline
def join(parent, a, b):
    """Put units a and b (-1: the world, joining nothing) in one island."""
    if a < 0 or b < 0:
        return
    ra = _root(parent, a)
    rb = _root(parent, b)
    if ra < rb:
        parent[rb] = ra
    elif rb < ra:
        parent[ra] = rb


@jit_inline
def label(cwork):
    """Give the islands numbers in the order of their smallest unit; return how many there are."""
    parent = cwork.isl_parent
    labels = cwork.isl_label
    count = 0
    for i in range(parent.shape[0]):
        r = _root(parent, i)
        if r == i:
            labels[i] = count
            count += 1
        else:
            labels[i] = labels[r]  # r < i: numbered already
    cwork.isl_count[0] = count
    return count


@jit_inline
def put(cwork, kind, t, unit, value):
    """Name item t of a kind: the unit it moves (-1: none) and the index the solver uses."""
    cwork.isl_unit[kind, t] = unit
    cwork.isl_value[kind, t] = value


@jit_inline
def sort(cwork, kind, n):
    """
    Sort the kind's first n items by island, keeping their order (a counting sort).

    Island g's items are then ``isl_items[kind, isl_start[kind, g]:isl_start[kind, g + 1]]``;
    items that move no unit go in a last bucket, island ``isl_count[0]``.
    """
    count = cwork.isl_count[0]
    start = cwork.isl_start[kind]
    cursor = cwork.isl_cursor
    labels = cwork.isl_label
    unit = cwork.isl_unit[kind]
    for g in range(count + 2):
        start[g] = 0
    for t in range(n):
        u = unit[t]
        g = labels[u] if u >= 0 else count
        start[g + 1] += 1
    for g in range(count + 1):
        start[g + 1] += start[g]
        cursor[g] = start[g]
    for t in range(n):
        u = unit[t]
        g = labels[u] if u >= 0 else count
        cwork.isl_items[kind, cursor[g]] = cwork.isl_value[kind, t]
        cursor[g] += 1


@jit_inline
def span(cwork, kind, g):
    """Return (first, end) of island g's items of a kind in ``isl_items[kind]``."""
    return cwork.isl_start[kind, g], cwork.isl_start[kind, g + 1]


@jit_inline
def size(cwork, g):
    """Return the number of items of every kind island g holds."""
    total = 0
    for kind in range(N_KIND):
        total += cwork.isl_start[kind, g + 1] - cwork.isl_start[kind, g]
    return total
