"""
The wrench a joint transmits, from the accumulated impulses of all its rows in the last step.

Every row of the joint acts on its child body through the child's slot of its Jacobian,
J_child = [d, r x d] (a force d through the child's COM and the torque r x d about it), so the
impulse the parent gave the child over the step is
    P_child = sum over rows of J_child^T lambda
over the joint's bilateral block (which also holds the reactions of the coordinate rows),
its coordinate rows (the drive's output effort, friction, damping, limits, speed limits and
the commanded effort's impulse tau dt, all along the coordinate Jacobian), the Coulomb rows
of a spherical or planar joint, and the mimic blocks that couple it.  Divided by dt it is the
mean wrench of the step; the Jacobians are this step's, taken at the poses the step started
from (``Work.backup``), so the caller moves the torque to the sensor point with those poses.
"""
from .axes import coordinate_jacobian
from .math3d import entry


@entry
def joint_impulse_on_child(j, x, f, joints, blocks, mimics, axes, state, work, dt, out):
    """
    Impulse the parent applied to joint j's child in the last step, about the child's COM.

    Args:
        j: joint index.
        x: the joint's axis index (coordinate rows), -1 if none.
        f: the joint's multi-DOF friction index, -1 if none.
        joints: Joints (arrays.py).
        blocks: Blocks.
        mimics: Mimics.
        axes: Axes.
        state: State after the step.
        work: Work after the step (this step's Jacobians and start poses).
        dt: time step, s.
        out: (6,) written with the force impulse (N s) and the torque impulse about the child's
            COM (N m s), world frame.
    """
    for c in range(6):
        out[c] = 0.0
    k = joints.block[j]
    if k >= 0:
        for i in range(blocks.dim[k]):
            r = blocks.row0[k] + i
            for c in range(6):
                out[c] += work.row_J[r, 1, c] * state.row_impulse[r]
    for m in range(mimics.follower.shape[0]):
        slot = 1 if mimics.follower[m] == j else (3 if mimics.leader[m] == j else -1)
        if slot < 0:
            continue
        for kb in range(blocks.kind.shape[0]):
            if blocks.kind[kb] == 1 and blocks.source[kb] == m:
                r = blocks.row0[kb]
                for c in range(6):
                    out[c] += work.row_J[r, slot, c] * state.row_impulse[r]
    coordinate = state.joint_effort[j] * dt
    if x >= 0:
        for row in range(state.axis_impulse.shape[1]):
            coordinate += state.axis_impulse[x, row]
        d = axes.drive[x]
        if d >= 0:
            coordinate += state.drive_effort[d] * dt  # the gear and its losses
    if coordinate != 0.0:
        coordinate_jacobian(j, joints.type, joints.body, joints.axis_body, joints.cpos,
                            work.rot, state.body_pos, work.jrow, 0)
        for c in range(6):
            out[c] += work.jrow[0, 1, c] * coordinate
    if f >= 0:
        for row in range(3):
            for c in range(6):
                out[c] += work.free_J[f, row, 1, c] * state.free_impulse[f, row]
