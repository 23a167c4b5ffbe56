"""
The element of a centrifugal governor (issue 9): tree and maximal formulations against Lagrange.

Four degrees of freedom: body 1 turns about the vertical axis (gamma1) driven towards the
commanded speed w0(t) by the generalized force k (w0 - dgamma1); the slider A runs along body
1's arm (y2), tied to the axis by a spring -c (y2 - y20); the collar turns about the arm's axis
(beta2) and body 2 about the collar's transverse axis (alpha2); gravity acts.  Every link has
real mass and inertia.

The reference is written here, independently of the engine: hand-written forward kinematics
(rotation matrices), body Jacobians by central differences, the mass matrix
M = sum m Jv^T Jv + Jw^T I_world Jw, Lagrange's equations
    M qdd = Q - (dM/dt qd - dT/dq) + Q_gravity,
with dM/dt qd and dT/dq by central differences of M, integrated by RK4.
"""
from jointsim_ros import Simulator
import numpy as np
import pytest
from robots import inertial, joint, link, robot

G = 9.81
K_SPEED = 2.0          # N m s/rad, gain of the speed-holding torque
C_SPRING = 60.0        # N/m
Y20 = 0.25             # m, free length of the spring
ARM_HEIGHT = 0.4       # m, height of the arm above the base
BOB = 0.2              # m, body 2's COM below the collar
MASS = {'body1': 2.0, 'slider': 0.3, 'collar': 0.15, 'body2': 1.0}
INERTIA = {'body1': (0.06, 0.05, 0.02), 'slider': (2e-4, 3e-4, 3e-4),
           'collar': (1e-4, 1.5e-4, 1.2e-4), 'body2': (0.012, 0.010, 0.004)}
COM1 = np.array([0.05, 0.0, 0.25])   # body 1's COM in its frame, m
Q0 = np.array([0.0, 0.32, 0.3, 0.5])      # gamma1 rad, y2 m, beta2 rad, alpha2 rad
QD0 = np.array([2.0, 0.0, -0.5, 0.4])     # rad/s, m/s, rad/s, rad/s
NAMES = ('gamma1', 'y2', 'beta2', 'alpha2')
DURATION = 1.0


def commanded_speed(t):
    """w0(t), rad/s."""
    return 3.0 + 0.5 * np.sin(2.0 * t)


def generalized_forces(t, q, qd):
    """Return the speed-holding torque on gamma1 and the spring on y2 (N m, N)."""
    return np.array([K_SPEED * (commanded_speed(t) - qd[0]), -C_SPRING * (q[1] - Y20), 0.0, 0.0])


def governor_urdf():
    """Return the four-link chain world -z-> body1 -x (slide)-> slider -x-> collar -y-> body2."""
    def inert(name, xyz='0 0 0'):
        return inertial(MASS[name], *INERTIA[name], xyz=xyz)
    return robot(
        'governor', link('world'),
        link('body1', inert('body1', ' '.join(str(v) for v in COM1))),
        link('slider', inert('slider')), link('collar', inert('collar')),
        link('body2', inert('body2', f'0 0 {-BOB}')),
        joint('gamma1', 'continuous', 'world', 'body1', axis='0 0 1'),
        joint('y2', 'prismatic', 'body1', 'slider', xyz=f'0 0 {ARM_HEIGHT}', axis='1 0 0',
              extra='<limit lower="-10" upper="10" effort="1e6" velocity="1e3"/>'),
        joint('beta2', 'continuous', 'slider', 'collar', axis='1 0 0'),
        joint('alpha2', 'continuous', 'collar', 'body2', axis='0 1 0'))


# ---- the independent reference -----------------------------------------------------------

def _rot(axis, angle):
    """(..., 3, 3) rotations about a coordinate axis (0 x, 1 y, 2 z) by angle (...,)."""
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros(np.shape(angle) + (3, 3))
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    out[..., axis, axis] = 1.0
    out[..., i, i] = c
    out[..., j, j] = c
    out[..., i, j] = -s
    out[..., j, i] = s
    return out


def body_poses(q):
    """COM positions (..., 4, 3) and rotations (..., 4, 3, 3) of body1, slider, collar, body2."""
    q = np.asarray(q, dtype=float)
    r1 = _rot(2, q[..., 0])
    rc = r1 @ _rot(0, q[..., 2])
    r2 = rc @ _rot(1, q[..., 3])
    point_a = np.einsum('...ij,...j->...i', r1,
                        np.stack([q[..., 1], 0.0 * q[..., 1], ARM_HEIGHT + 0.0 * q[..., 1]], -1))
    c1 = np.einsum('...ij,j->...i', r1, COM1)
    c2 = point_a + np.einsum('...ij,j->...i', r2, np.array([0.0, 0.0, -BOB]))
    return np.stack([c1, point_a, point_a, c2], -2), np.stack([r1, r1, rc, r2], -3)


def _jacobians(q, eps=1e-5):
    """Linear (..., 4, 3, 4) and angular (..., 4, 3, 4) body Jacobians by central differences."""
    q = np.asarray(q, dtype=float)
    steps = eps * np.eye(4)
    qp = q[..., None, :] + steps
    qm = q[..., None, :] - steps
    cp, rp = body_poses(qp)      # (..., 4 coords, 4 bodies, ...)
    cm, rm = body_poses(qm)
    _, r0 = body_poses(q)
    jv = np.moveaxis((cp - cm) / (2 * eps), -3, -1)
    dr = (rp - rm) / (2 * eps)                       # (..., k, b, 3, 3)
    w = dr @ np.swapaxes(r0[..., None, :, :, :], -1, -2)   # dR R^T, skew
    jw = np.stack([w[..., 2, 1], w[..., 0, 2], w[..., 1, 0]], -1)  # (..., k, b, 3)
    return jv, np.moveaxis(jw, -3, -1), r0


def mass_matrix(q):
    """(..., 4, 4) generalized mass matrix, and the gravity forces (..., 4)."""
    jv, jw, rot = _jacobians(q)
    mass = np.array([MASS[n] for n in ('body1', 'slider', 'collar', 'body2')])
    inertia = np.array([np.diag(INERTIA[n]) for n in ('body1', 'slider', 'collar', 'body2')])
    i_world = rot @ inertia @ np.swapaxes(rot, -1, -2)
    m = np.einsum('b,...bik,...bil->...kl', mass, jv, jv)
    m += np.einsum('...bik,...bij,...bjl->...kl', jw, i_world, jw)
    gravity = np.einsum('b,i,...bik->...k', mass, np.array([0.0, 0.0, -G]), jv)
    return m, gravity


def lagrange_acceleration(q, qd, forces, eps=1e-4):
    """Return qdd from Lagrange's equations with the generalized forces (N m, N)."""
    steps = eps * np.eye(4)
    configs = np.concatenate([q[None], q + steps, q - steps, q[None] + eps * qd[None],
                              q[None] - eps * qd[None]])
    m_all, gravity_all = mass_matrix(configs)
    m0, grav = m_all[0], gravity_all[0]
    dm_dq = (m_all[1:5] - m_all[5:9]) / (2 * eps)          # (k, 4, 4)
    mdot_qd = (m_all[9] - m_all[10]) / (2 * eps) @ qd
    dt_dq = 0.5 * np.einsum('i,kij,j->k', qd, dm_dq, qd)
    return np.linalg.solve(m0, forces + grav - mdot_qd + dt_dq)


def lagrange_reference(duration, sample, substeps, hold=False):
    """
    RK4 on Lagrange's equations; samples of q every ``sample`` s.

    hold: the generalized forces are held over each sample interval from its start (as a
    simulator applies efforts set before a step), instead of following the state continuously.
    """
    q, qd = Q0.copy(), QD0.copy()
    h = sample / substeps
    out = [q.copy()]
    for n in range(int(round(duration / sample))):
        t0 = n * sample
        held = generalized_forces(t0, q, qd)
        for s in range(substeps):
            t = t0 + s * h

            def rate(tt, y):
                f = held if hold else generalized_forces(tt, y[:4], y[4:])
                return np.concatenate((y[4:], lagrange_acceleration(y[:4], y[4:], f)))
            y = np.concatenate((q, qd))
            k1 = rate(t, y)
            k2 = rate(t + h / 2, y + h / 2 * k1)
            k3 = rate(t + h / 2, y + h / 2 * k2)
            k4 = rate(t + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            q, qd = y[:4], y[4:]
        out.append(q.copy())
    return np.array(out)


def simulate(formulation, dt, duration=DURATION, integrator='semi_implicit_euler'):
    """Joint positions every dt (first row the start) with the efforts set before each step."""
    config = {'dt': dt, 'gravity': [0.0, 0.0, -G],
              'solver': {'formulation': formulation, 'integrator': integrator},
              'initial_positions': dict(zip(NAMES, Q0.tolist())),
              'initial_velocities': dict(zip(NAMES, QD0.tolist())),
              'limits': {'enforce_effort': False}}
    if formulation == 'maximal':
        config['solver'].update({'iterations': 60, 'tolerance': 1e-12})
    sim = Simulator.from_urdf(governor_urdf(), config)
    assert sim.joint_names == NAMES
    out = [sim.joint_positions()]
    anchor = 0.0
    for _ in range(int(round(duration / dt))):
        forces = generalized_forces(sim.time, sim.joint_positions(), sim.joint_velocities())
        sim.set_joint_efforts({'gamma1': forces[0], 'y2': forces[1]})
        sim.step(1)
        out.append(sim.joint_positions())
        anchor = max(anchor, max(sim.joint_anchor_errors().values()))
    return np.array(out), anchor


@pytest.fixture(scope='module')
def reference():
    """Continuous-force reference sampled every 0.5 ms (RK4, h = 0.125 ms)."""
    return lagrange_reference(DURATION, 5e-4, 4)


def _error(run, ref, dt):
    stride = int(round(dt / 5e-4))
    return np.max(np.abs(run - ref[::stride][:len(run)]), axis=0)


def test_the_lagrange_reference_is_converged():
    # a check of the reference itself: halving its step changes nothing that matters
    coarse = lagrange_reference(0.2, 1e-3, 1)
    fine = lagrange_reference(0.2, 1e-3, 4)
    assert np.max(np.abs(coarse - fine)) < 1e-8


def test_tree_rk4_matches_lagrange_to_integration_precision():
    # forces held over each 1 ms step in both: what remains is RK4's error, not the model's
    ref = lagrange_reference(DURATION, 1e-3, 4, hold=True)
    run, anchor = simulate('tree', 1e-3, integrator='rk4')
    assert np.max(np.abs(run - ref)) < 5e-7  # measured 4.5e-8
    assert anchor < 1e-12


def test_tree_and_maximal_agree_with_lagrange_within_first_order_error(reference):
    tree, tree_anchor = simulate('tree', 1e-3)
    symplectic, _ = simulate('tree', 1e-3, integrator='symplectic_euler')
    maximal, _ = simulate('maximal', 1e-3)
    err_tree = _error(tree, reference, 1e-3)
    err_symplectic = _error(symplectic, reference, 1e-3)
    err_max = _error(maximal, reference, 1e-3)
    print('tree error (rad, m, rad, rad):', err_tree, 'symplectic:', err_symplectic,
          'maximal:', err_max)
    # measured at 1 ms: tree semi-implicit 2.3e-3, symplectic 4.8e-3, maximal 2.7e-3 (all
    # halve with dt: first order)
    assert np.all(err_tree < 5e-3) and np.all(err_max < 5e-3)
    assert np.all(err_symplectic < 1e-2)
    assert np.max(np.abs(tree - maximal)) < 5e-3
    assert tree_anchor < 1e-12


@pytest.mark.parametrize('formulation, integrator', [
    ('tree', 'semi_implicit_euler'), ('tree', 'symplectic_euler'),
    ('maximal', 'semi_implicit_euler')])
def test_error_halves_when_dt_halves(reference, formulation, integrator):
    errors = [np.max(_error(simulate(formulation, dt, integrator=integrator)[0], reference,
                            dt)) for dt in (1e-3, 5e-4)]
    ratio = errors[1] / errors[0]
    print(formulation, integrator, 'errors at 1 and 0.5 ms:', errors, 'ratio', ratio)
    assert 0.4 < ratio < 0.6
