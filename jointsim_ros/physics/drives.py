"""
DC motors with gears, driven by voltage, solved inside the sequential-impulse loop.

Model (per drive; rotor speed w_m is a state of its own, relative to the stator on the parent):
    u = R i + L di/dt + Ke w_m,      J_m dw_m/dt = Kt i - b_m w_m - tau_gear,
    gear (bilateral row): w_m - N qdot = 0, which puts N tau_gear on the joint coordinate q,
    so the joint sees the reflected inertia N^2 J_m and can back-drive the motor.

Implicit discretisation (backward Euler on the current, inside the solve):
    i+ = (L/dt i + u - Ke w_m+) / R',   R' = R + L/dt,
so the motor is a *soft row* on the rotor whose impulse obeys
    lambda_m = dt tau0 - dt c w_m+,     tau0 = Kt (L/dt i + u) / R',  c = Kt Ke / R' + b_m,
which is stable for any dt (dt >> L/R included): the back-EMF and the friction act as an implicit
damper.  With a current limit the electrical part is clamped, |lambda_m + dt b_m w_m+| <=
dt Kt i_max, and the row becomes lambda_m = +-dt Kt i_max - dt b_m w_m+.

Exact per drive: the joint coordinate is seen through its joint's own bilateral block with the
constrained inverse mass k (``axes.py``), and the gear and motor rows form a 2 x 2 system in
(rotor, coordinate), solved exactly each sweep in ``axes.solve_axes``, so large gear ratios on
light links (N^2 J_m >> link inertia) converge at once.

Gear losses (efficiency eta < 1) are Coulomb friction on the geared coordinate, bounded by
(1 - eta) times the impulse the gear transmits, as contact friction is bounded by the normal
impulse.
"""
from .axes import push_along_jacobian
from .math3d import jit_inline

GEAR, MOTOR, GEAR_FRICTION = 0, 1, 2


@jit_inline
def prepare_drives(drives, work, state, dt):
    """
    Implicit electrical terms and the inverse gear/motor matrices of every drive.

    The motor is the soft row lambda_m = F - D w_m+ with F = dt tau0 and D = dt c; the 2 x 2
    matrix of (gear, motor),
        gear:  (jm + N^2 k) dg + jm dm = -(w_m - N qdot)
        motor: D jm dg + (1 + D jm) dm = F - D w_m - lambda_m
    (jm = 1/J_m, k the axis' constrained inverse mass), is constant over the step: it is
    inverted here for both motor modes, free and current-limited (D = dt b_m).
    """
    soft = work.drive_soft
    ainv = work.drive_ainv
    inv_k = work.axis_k
    for d in range(drives.axis.shape[0]):
        r_eff = drives.resistance[d] + drives.inductance[d] / dt
        kt = drives.kt[d]
        tau0 = kt * (drives.inductance[d] / dt * state.drive_current[d]
                     + state.drive_voltage[d]) / r_eff
        soft[d, 0] = dt * tau0
        soft[d, 1] = dt * (kt * drives.ke[d] / r_eff + drives.viscous[d])
        soft[d, 2] = dt * drives.viscous[d]
        soft[d, 3] = dt * kt * drives.current_limit[d]
        soft[d, 4] = drives.efficiency[d]
        jm = drives.inv_rotor_inertia[d]
        n = drives.gear[d]
        a11 = jm + n * n * inv_k[drives.axis[d]]
        for mode in range(2):
            damp = soft[d, 1] if mode == 0 else dt * drives.viscous[d]
            a21 = damp * jm
            a22 = 1.0 + damp * jm
            det = a11 * a22 - jm * a21
            ainv[d, mode, 0, 0] = a22 / det
            ainv[d, mode, 0, 1] = -jm / det
            ainv[d, mode, 1, 0] = -a21 / det
            ainv[d, mode, 1, 1] = a11 / det


@jit_inline
def warm_start_drives(bodies, joints, drives, state, work, enabled):
    """
    Apply last step's gear, motor and gear-friction impulses (or clear them).

    The rotor takes gear and motor impulses; the coordinate takes -N gear + gear friction along
    M^-1 J_q^T alone (the joint block's warm start already holds last step's reactions).
    """
    vel = work.vel
    coord_J = work.axis_J
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    impulses = state.drive_impulse
    body = joints.body
    for d in range(drives.axis.shape[0]):
        if not enabled:
            impulses[d, GEAR] = impulses[d, MOTOR] = impulses[d, GEAR_FRICTION] = 0.0
        g = impulses[d, GEAR]
        state.rotor_speed[d] += drives.inv_rotor_inertia[d] * (g + impulses[d, MOTOR])
        P = -drives.gear[d] * g + impulses[d, GEAR_FRICTION]
        push_along_jacobian(vel, coord_J, drives.axis[d], body, drives.joint[d], inv_mass,
                            inv_inertia, P)


@jit_inline
def finish_drives(drives, state, dt):
    """Armature current i+ = (lambda_m + dt b_m w_m+) / (dt Kt) from the motor row's impulse."""
    for d in range(drives.axis.shape[0]):
        electric = state.drive_impulse[d, MOTOR] + dt * drives.viscous[d] * state.rotor_speed[d]
        state.drive_current[d] = electric / (dt * drives.kt[d])
