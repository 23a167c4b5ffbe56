"""
Distance elements: a length-controlled linear actuator between two ball ends (one row).

Position constraint: C = |p_b - p_a| - L, with L the element's length (``State.joint_length``,
set by the facade while a length is prescribed).  With n = (p_b - p_a) / |p_b - p_a| and r the
end relative to its body's COM, dC/dt = n.(v_b + w_b x r_b - v_a - w_a x r_a), so
lin_a = -n, ang_a = -(r_a x n), lin_b = n, ang_b = r_b x n.  A positive row impulse pushes the
ends apart.  Ball ends carry no moment, so the row only acts along the line.
"""
import math

from .placement import at_rest, keep_all, no_columns, no_gap, no_twist, TREE_FREE
from .rows import set_row
from ..math3d import cross, dot3, jit, vneg, vscale, vsub

N_ROWS = 1
TREE_KIND = TREE_FREE


@jit
def constraint(f, C, J, length):
    """Fill C[0], J[0] from the element's world frames ``f`` and its length L (m)."""
    d = vsub(f.anchor_b, f.anchor_a)
    norm = math.sqrt(dot3(d, d))
    n = vscale(d, 1.0 / norm) if norm > 1e-12 else (1.0, 0.0, 0.0)
    C[0] = norm - length
    if J is not None:
        set_row(J, 0, vneg(n), vneg(cross(vsub(f.anchor_a, f.xa), n)), n,
                cross(vsub(f.anchor_b, f.xb), n))
    return 1


# -- placement outside the kernels (joints/placement.py) ----------------------------------
relative_pose = at_rest
relative_twist = no_twist
allowed = keep_all
columns = no_columns  # an element closes a loop: never a tree joint
anchor_gap = no_gap  # the element's length is its own (docs/prescribed.md)
