"""
The drive model: DC motors with gears, driven by voltage; one model for both formulations.

Model (per drive; rotor speed w_m is a state of its own, relative to the stator on the parent):
    u = R i + L di/dt + Ke w_m,      J_m dw_m/dt = Kt i - b_m w_m - tau_g,
    gear: w_m = N qdot, output effort at the joint  tau_q = g tau_g,
    g = eta N while the motor drives the load (tau_g w_m >= 0), (2 - eta) N while the load
    drives the motor: the gear's Coulomb losses, (1 - eta) of the transmitted torque, always
    oppose the motion.  The joint sees the reflected inertia N^2 J_m and can back-drive the
    motor.

Over a step dt (backward Euler on the current, ``armature_current``):
    i+ = (L/dt i + u - Ke w_m+) / R',   R' = R + L/dt,
so the rotor torque is linear in the rotor speed at the step's end (``motor_row``):
    Kt i+ - b_m w_m+ = tau0 - c w_m+,   tau0 = Kt (L/dt i + u) / R',  c = Kt Ke / R' + b_m,
a *soft row* on the rotor, stable for any dt (dt >> L/R included): the back-EMF and the motor
friction act as an implicit damper.  With a current limit the driver's current loop holds
|i+| <= i_max; while it holds, Kt i+ - b_m w_m+ = +-Kt i_max - b_m w_m+ (tau0 = +-Kt i_max,
c = b_m; ``limited_motor_row`` judges this at a given rotor speed).  After the step the current
is ``current_after_step``; the effort the gear delivers is ``output_effort``.  The inverse,
the voltage a motion needs (``voltage_for_effort``), runs the same equations backwards.

The scalar functions here are the model; the two formulations solve it in their own ways:
- maximal coordinates (``prepare_drives``, ``warm_start_drives``, ``axes.solve_axes``,
  ``finish_drives``): the gear is a bilateral row w_m - N qdot = 0 and the motor the soft row
  lambda_m = dt tau0 - dt c w_m+ (or, current-limited, |lambda_m + dt b_m w_m+| <=
  dt Kt i_max).  The joint coordinate is seen through its joint's own bilateral block with the
  constrained inverse mass k (``axes.py``), and the gear and motor rows form a 2 x 2 system in
  (rotor, coordinate), solved exactly each sweep in ``axes.solve_axes``, so large gear ratios
  on light links (N^2 J_m >> link inertia) converge at once.  The gear losses are Coulomb
  friction on the geared coordinate bounded by (1 - eta) times the impulse the gear transmits,
  as contact friction is bounded by the normal impulse.
- the tree, on a loop joint (no coordinate of the tree): the same rotor, gear and motor rows,
  solved by the same functions (``prepare_drive``, ``warm_start_drive``,
  ``axes.solve_axis_rows``, ``finish_drive``) on the joint's coordinate row seen through the
  joint's own rows (``tree_rows.loop_axis_rows``, ``solve_loop_axes``).
- the tree's own joints (``tree._dof_terms``, ``tree._finish_drives``): the rotor is the
  joint's armature N^2 J_m and the motor row the generalized force g (tau0 - c N qdot+),
  implicit in qdot+; the current limit and the gear's direction (g) are judged at the
  start-of-step speed.  The armature is outside the gear, so there the losses act on
  Kt i - b_m w_m only, not on the rotor's inertial torque J_m dw_m/dt (the same as the
  maximal engine when eta = 1 or at a steady speed).

Both write the output effort tau_q over the step into ``State.drive_effort``.
"""
from .arrays import EFFICIENCY, LIMIT_IMPULSE, MOTOR_D, MOTOR_F, ROTOR_D
from .axes import push_along_jacobian, REST_SPEED
from .math3d import jit_inline, jit_inline_entry

GEAR, MOTOR, GEAR_FRICTION = 0, 1, 2


# -- the model: scalar functions (compiled into both engines, callable from Python) ------------
@jit_inline_entry
def armature_current(voltage, current, rotor_speed, dt, resistance, inductance, ke):
    """
    Backward-Euler armature current at the end of a step, without the current limit.

    Args:
        voltage: armature voltage over the step, V.
        current: current at the step's start, A.
        rotor_speed: rotor speed at the step's end, rad/s.
        dt: step, s.
        resistance, inductance, ke: R (ohm), L (H), Ke (V s/rad).

    Returns:
        i+ = (L/dt i + u - Ke w_m+) / (R + L/dt), A.
    """
    return ((inductance / dt * current + voltage - ke * rotor_speed)
            / (resistance + inductance / dt))


@jit_inline_entry
def motor_row(voltage, current, dt, resistance, inductance, kt, ke, viscous):
    """
    Return the rotor torque over a step with the current free, linear in the end speed.

    Kt i+ - b_m w_m+ = tau0 - c w_m+ with i+ from ``armature_current``.

    Args:
        voltage, current, dt: as ``armature_current``.
        resistance, inductance, kt, ke, viscous: R (ohm), L (H), Kt (N m/A), Ke (V s/rad),
            b_m (N m s/rad).

    Returns:
        (tau0, c): tau0 = Kt (L/dt i + u) / R', N m; c = Kt Ke / R' + b_m, N m s/rad.
    """
    r_eff = resistance + inductance / dt
    return kt * (inductance / dt * current + voltage) / r_eff, kt * ke / r_eff + viscous


@jit_inline_entry
def limited_motor_row(voltage, current, rotor_speed, dt, resistance, inductance, kt, ke,
                      viscous, current_limit):
    """
    Return the rotor torque over a step with the current limit judged at ``rotor_speed``.

    Args:
        voltage, current, dt, resistance, inductance, kt, ke, viscous: as ``motor_row``.
        rotor_speed: the speed the current is predicted at (``armature_current``), rad/s.
        current_limit: i_max, A (inf: none).

    Returns:
        (tau0, c, held): held is +1 or -1 when the predicted current is beyond +-i_max (then
        the current loop holds it: tau0 = +-Kt i_max, N m, and c = b_m, N m s/rad), 0 when it
        is within (``motor_row``).
    """
    predicted = armature_current(voltage, current, rotor_speed, dt, resistance, inductance, ke)
    if abs(predicted) > current_limit:
        held = 1.0 if predicted > 0.0 else -1.0
        return held * kt * current_limit, viscous, held
    tau0, c = motor_row(voltage, current, dt, resistance, inductance, kt, ke, viscous)
    return tau0, c, 0.0


@jit_inline_entry
def current_after_step(voltage, current, rotor_speed, dt, resistance, inductance, ke,
                       current_limit, held):
    """
    Return the armature current at the end of a step.

    Args:
        voltage, current, dt, resistance, inductance, ke: as ``armature_current``.
        rotor_speed: rotor speed at the step's end, rad/s.
        current_limit: i_max, A (inf: none).
        held: +1 or -1 when the current limit held the motor torque over the step, else 0.

    Returns:
        held i_max while the limit held, else ``armature_current`` clipped to +-i_max, A.
    """
    if held != 0.0:
        return held * current_limit
    free = armature_current(voltage, current, rotor_speed, dt, resistance, inductance, ke)
    return min(max(free, -current_limit), current_limit)


@jit_inline_entry
def gear_gain(gear, efficiency, power):
    """
    Output effort per transmitted rotor torque, g = tau_q / tau_g.

    Args:
        gear: N, rotor speed / joint speed.
        efficiency: eta, in (0, 1].
        power: the sign of the power the motor gives the load (tau_g w_m, or tau_q qdot).

    Returns:
        eta N while the motor drives the load (power >= 0), (2 - eta) N while the load drives
        the motor.
    """
    return (efficiency if power >= 0.0 else 2.0 - efficiency) * gear


@jit_inline_entry
def output_effort(gain, current, rotor_speed, rotor_accel, kt, viscous, rotor_inertia):
    """
    Return the effort the gear puts on the joint, tau_q = g (Kt i - b_m w_m - J_m dw_m/dt).

    Args:
        gain: ``gear_gain``.
        current: A; rotor_speed: rad/s; rotor_accel: rad/s^2.
        kt, viscous, rotor_inertia: Kt (N m/A), b_m (N m s/rad), J_m (kg m^2).

    Returns:
        N m, or N on a prismatic joint.
    """
    return gain * (kt * current - viscous * rotor_speed - rotor_inertia * rotor_accel)


@jit_inline_entry
def voltage_for_effort(effort, joint_rate, joint_accel, current, dt, gear, efficiency,
                       resistance, inductance, kt, ke, viscous, rotor_inertia):
    """
    Invert the model over one step: the voltage that gives an output effort.

    The effort is taken back through the gear (``gear_gain``, judged on effort x joint_rate;
    a joint at rest, |joint_rate| <= ``axes.REST_SPEED``, as driving: the motor holds the load),
    the rotor (``output_effort``) and the armature's backward-Euler step
    (u = R i + L (i - i_prev) / dt + Ke N qdot), so ``current_after_step`` (free current) and
    ``output_effort`` of the result give ``effort`` back.

    Args:
        effort: output effort at the joint over the step, N m or N.
        joint_rate: joint speed at the step's end, rad/s or m/s.
        joint_accel: (joint_rate - rate at the start) / dt, rad/s^2 or m/s^2.
        current: current at the step's start, A.
        dt: step, s.
        gear, efficiency: N, eta.
        resistance, inductance, kt, ke, viscous, rotor_inertia: R (ohm), L (H), Kt (N m/A),
            Ke (V s/rad), b_m (N m s/rad), J_m (kg m^2).

    Returns:
        (voltage V, current A, motor torque Kt i N m) over the step.
    """
    rotor_speed = gear * joint_rate
    # at rest the motor holds the load through the gear (g = eta N), whatever the sign of a
    # speed left over from rounding
    power = effort * joint_rate if abs(joint_rate) > REST_SPEED else 0.0
    motor_torque = (effort / gear_gain(gear, efficiency, power)
                    + rotor_inertia * gear * joint_accel + viscous * rotor_speed)
    needed = motor_torque / kt
    voltage = (resistance * needed + inductance * (needed - current) / dt + ke * rotor_speed)
    return voltage, needed, motor_torque


# -- the gear and motor rows (maximal coordinates, and a loop joint's drive in the tree) ------
@jit_inline
def prepare_drive(drives, state, d, soft, ainv, k, dt):
    """
    Set up drive d's motor row and its inverse gear/motor matrices for this step.

    The motor is the soft row lambda_m = F - D w_m+ with F = dt tau0 and D = dt c
    (``motor_row``); the 2 x 2 matrix of (gear, motor),
        gear:  (jm + N^2 k) dg + jm dm = -(w_m - N qdot)
        motor: D jm dg + (1 + D jm) dm = F - D w_m - lambda_m
    (jm = 1/J_m, k the coordinate's constrained inverse mass), is constant over the step: it
    is inverted here for both motor modes, free and current-limited (D = dt b_m).

    Args:
        drives: arrays.Drives.
        state: the engine's state (drive_voltage, drive_current: arrays.State's fields).
        d: drive index.
        soft: (n_drive, 5) the motor rows, row d written (arrays.MOTOR_F .. EFFICIENCY).
        ainv: (n_drive, 2, 2, 2) the inverse matrices, row d written.
        k: the driven coordinate's constrained inverse mass.
        dt: step, s.
    """
    tau0, c = motor_row(state.drive_voltage[d], state.drive_current[d], dt,
                        drives.resistance[d], drives.inductance[d], drives.kt[d],
                        drives.ke[d], drives.viscous[d])
    soft[d, MOTOR_F] = dt * tau0
    soft[d, MOTOR_D] = dt * c
    soft[d, ROTOR_D] = dt * drives.viscous[d]
    soft[d, LIMIT_IMPULSE] = dt * drives.kt[d] * drives.current_limit[d]
    soft[d, EFFICIENCY] = drives.efficiency[d]
    jm = drives.inv_rotor_inertia[d]
    n = drives.gear[d]
    a11 = jm + n * n * k
    for mode in range(2):
        damp = soft[d, MOTOR_D] if mode == 0 else soft[d, ROTOR_D]
        a21 = damp * jm
        a22 = 1.0 + damp * jm
        det = a11 * a22 - jm * a21
        ainv[d, mode, 0, 0] = a22 / det
        ainv[d, mode, 0, 1] = -jm / det
        ainv[d, mode, 1, 0] = -a21 / det
        ainv[d, mode, 1, 1] = a11 / det


@jit_inline
def warm_start_drive(drives, state, d, enabled):
    """
    Apply drive d's last gear and motor impulses to its rotor (or clear them).

    Returns:
        the coordinate's share, -N gear + gear friction (N m s or N s), for the caller to
        apply along its coordinate's unconstrained response (the joint's rows' own warm start
        holds last step's reactions).
    """
    impulses = state.drive_impulse
    if not enabled:
        impulses[d, GEAR] = impulses[d, MOTOR] = impulses[d, GEAR_FRICTION] = 0.0
    g = impulses[d, GEAR]
    state.rotor_speed[d] += drives.inv_rotor_inertia[d] * (g + impulses[d, MOTOR])
    return -drives.gear[d] * g + impulses[d, GEAR_FRICTION]


@jit_inline
def finish_drive(drives, state, d, dt):
    """
    Write drive d's current at the step's end (``current_after_step``) and its output effort.

    The solve leaves the motor row within the current limit at the final rotor speed, so the
    limit holds exactly where the free current would exceed it.  The output effort is the
    coordinate impulse of the gear and its losses over dt, (-N g + lambda_f) / dt.
    """
    impulses = state.drive_impulse
    state.drive_current[d] = current_after_step(
        state.drive_voltage[d], state.drive_current[d], state.rotor_speed[d], dt,
        drives.resistance[d], drives.inductance[d], drives.ke[d], drives.current_limit[d], 0.0)
    state.drive_effort[d] = (-drives.gear[d] * impulses[d, GEAR]
                             + impulses[d, GEAR_FRICTION]) / dt


@jit_inline
def prepare_drives(drives, work, state, dt):
    """Set up every drive's motor row and gear/motor inverses (``prepare_drive``)."""
    for d in range(drives.axis.shape[0]):
        prepare_drive(drives, state, d, work.drive_soft, work.drive_ainv,
                      work.axis_k[drives.axis[d]], dt)


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
    body = joints.body
    for d in range(drives.axis.shape[0]):
        P = warm_start_drive(drives, state, d, enabled)
        push_along_jacobian(vel, coord_J, drives.axis[d], body, drives.joint[d], inv_mass,
                            inv_inertia, P)


@jit_inline
def finish_drives(drives, state, dt):
    """Write every drive's current and output effort after the solve (``finish_drive``)."""
    for d in range(drives.axis.shape[0]):
        finish_drive(drives, state, d, dt)
