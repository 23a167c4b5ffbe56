"""
Tree formulation: exact joints, conservation laws and the energy behaviour of its integrators.

Joints are exact by construction (bodies are placed by forward kinematics from generalized
coordinates), so anchors never drift; a free system conserves momentum and energy (exactly in
the continuous equations: RK4 shows it to its own accuracy); symplectic Euler keeps the energy
error bounded (no secular drift) and first order in dt.
"""
from jointsim_ros import Simulator
import numpy as np
import pytest
from robots import box_inertial, chain, double_pendulum, inertial, joint, link, robot

ARM = 'urdf/jointsim_arm.urdf.xacro'


def zoo():
    """Return a floating box carrying spherical, planar, prismatic, revolute and fixed joints."""
    lim = '<limit lower="-5" upper="5" effort="100" velocity="100"/>'
    return robot(
        'zoo', link('base', box_inertial(3.0, (0.3, 0.2, 0.1))),
        link('ball', box_inertial(1.0, (0.1, 0.1, 0.4), xyz='0 0 0.2')),
        link('plate', box_inertial(0.8, (0.3, 0.2, 0.05), xyz='0.1 0 0')),
        link('slide', box_inertial(0.5, (0.2, 0.05, 0.05), xyz='0.1 0.02 0')),
        link('hinge', box_inertial(0.4, (0.05, 0.3, 0.05), xyz='0 0.15 0.01')),
        link('tip', inertial(0.1, 1e-4, 1e-4, 1e-4)),
        joint('j_ball', 'spherical', 'base', 'ball', xyz='0.15 0 0.05'),
        joint('j_plate', 'planar', 'ball', 'plate', xyz='0 0 0.4', axis='0 0.6 0.8'),
        joint('j_slide', 'prismatic', 'plate', 'slide', xyz='0.2 0 0', axis='1 0 0',
              extra=lim),
        joint('j_hinge', 'continuous', 'slide', 'hinge', xyz='0.2 0 0', axis='0 0 1'),
        joint('j_tip', 'fixed', 'hinge', 'tip', xyz='0 0.3 0'))


def zoo_sim(integrator, gravity=(0.0, 0.0, 0.0), dt=1e-3):
    """Return the zoo floating in space, every joint moving, in the tree formulation."""
    sim = Simulator.from_urdf(zoo(), {
        'dt': dt, 'gravity': list(gravity), 'base': 'floating', 'ground': {'enabled': False},
        'keep_fixed_joints': ['j_tip'],
        'solver': {'formulation': 'tree', 'integrator': integrator},
        'initial_positions': {'j_slide': 0.05, 'j_hinge': 0.4},
        'initial_velocities': {'j_slide': 0.3, 'j_hinge': -2.0}})
    sim.set_base_state([0.1, 0.2, 1.0], [0.9, 0.1, 0.3, 0.2], [0.2, -0.1, 0.3], [0.5, 1.0, -0.7])
    return sim


def momenta(sim):
    """Linear momentum (N s) and angular momentum about the world origin (N m s), and COM."""
    engine = sim._engine
    st = engine.state
    mass = 1.0 / engine.bodies.inv_mass
    linear = (mass[:, None] * st.body_lin_vel).sum(axis=0)
    angular = (st.body_ang_mom + np.cross(st.body_pos, mass[:, None] * st.body_lin_vel)).sum(0)
    com = (mass[:, None] * st.body_pos).sum(axis=0) / mass.sum()
    return linear, angular, com


def test_every_joint_type_moves_in_the_zoo():
    sim = zoo_sim('symplectic_euler')
    start = {name: sim.link_pose(name)[1] for name in ('ball', 'plate', 'hinge')}
    sim.step(300)
    for name, quat in start.items():
        assert abs(abs(quat @ sim.link_pose(name)[1]) - 1.0) > 1e-4, name
    assert max(sim.joint_anchor_errors().values()) < 1e-12


def test_free_system_conserves_momentum_and_energy_rk4():
    sim = zoo_sim('rk4')
    lin0, ang0, _ = momenta(sim)
    e0 = sum(sim.mechanical_energy())
    worst = np.zeros(3)
    for _ in range(20):
        sim.step(100)
        lin, ang, _ = momenta(sim)
        worst = np.maximum(worst, [np.linalg.norm(lin - lin0), np.linalg.norm(ang - ang0),
                                   abs(sum(sim.mechanical_energy()) - e0)])
    print('RK4 momentum, angular momentum, energy errors over 2 s:', worst, 'E0', e0)
    assert worst[0] < 1e-9 * max(1.0, np.linalg.norm(lin0))
    assert worst[1] < 1e-7 * max(1.0, np.linalg.norm(ang0))
    assert worst[2] < 1e-7 * e0
    assert max(sim.joint_anchor_errors().values()) < 1e-12


def _internal_effort_run(integrator, seconds=2.0):
    """
    Run the zoo at rest in space, moving its scalar joints on sinusoidal efforts, for 2 s.

    Return the largest change of linear momentum (N s), of angular momentum about the origin
    (N m s) and of the centre of mass (m) over the run, the largest momentum (N s) and angular
    momentum (N m s) of a single body, and the hinge's largest speed (rad/s).
    """
    sim = Simulator.from_urdf(zoo(), {
        'gravity': [0.0, 0.0, 0.0], 'base': 'floating', 'ground': {'enabled': False},
        'keep_fixed_joints': ['j_tip'],
        'solver': {'formulation': 'tree', 'integrator': integrator},
        'initial_positions': {'j_slide': 0.05, 'j_hinge': 0.4}})
    sim.set_base_state([0.1, 0.2, 1.0], [0.9, 0.1, 0.3, 0.2])  # at rest: zero momentum
    mass = 1.0 / sim._engine.bodies.inv_mass
    lin0, ang0, com0 = momenta(sim)
    drift, largest, hinge = np.zeros(3), np.zeros(2), 0.0
    for _ in range(int(round(seconds / sim.dt))):
        t = sim.time
        sim.set_joint_efforts({'j_slide': 1.0 * np.sin(2 * np.pi * 1.5 * t),
                               'j_hinge': 0.1 * np.sin(2 * np.pi * 1.1 * t + 0.3)})
        sim.step(1)
        lin, ang, com = momenta(sim)
        drift = np.maximum(drift, [np.linalg.norm(lin - lin0), np.linalg.norm(ang - ang0),
                                   np.linalg.norm(com - com0)])
        st = sim._engine.state
        p = mass[:, None] * st.body_lin_vel
        h = st.body_ang_mom + np.cross(st.body_pos, p)
        largest = np.maximum(largest, [np.linalg.norm(p, axis=1).max(),
                                       np.linalg.norm(h, axis=1).max()])
        hinge = max(hinge, abs(sim.joint_velocities()[sim.joint_names.index('j_hinge')]))
    assert max(sim.joint_anchor_errors().values()) < 1e-12
    return drift, largest, hinge


def test_internal_efforts_keep_momentum_and_the_centre_of_mass():
    # joint efforts are internal: the momenta stay zero and the COM still. RK4 keeps them to
    # its truncation error (h^4: 1.3e-12 N s at 1 ms, 8e-14 at 0.5 ms; 3 N and 0.5 N m, the
    # hinge at 19 rad/s, give 1.8e-9 of the largest body momentum); the Euler steps to first
    # order in dt (printed, bounded loosely: 3.7e-3 and 5.0e-3 at 1 ms, half at 0.5 ms).
    # Symplectic Euler keeps its carried impulse of the base, H(q_n) qd_n+1, to 1e-13; what
    # drifts is the state's H(q_n+1) qd_n+1.
    out = {}
    for integrator in ('rk4', 'semi_implicit_euler', 'symplectic_euler'):
        drift, largest, hinge = out[integrator] = _internal_effort_run(integrator)
        print(f'{integrator}: momentum {drift[0]:.1e} N s ({drift[0] / largest[0]:.1e} of the '
              f'largest body momentum, {largest[0]:.3f} N s), angular momentum {drift[1]:.1e} '
              f'N m s ({drift[1] / largest[1]:.1e} of {largest[1]:.3f} N m s), COM moved '
              f'{drift[2]:.1e} m, hinge up to {hinge:.2f} rad/s')
    drift, largest, hinge = out['rk4']
    assert hinge > 1.0  # the joints do move
    assert drift[0] < 1e-9 * largest[0]
    assert drift[1] < 1e-9 * largest[1]
    assert drift[2] < 1e-9
    for integrator in ('semi_implicit_euler', 'symplectic_euler'):
        drift, largest, _ = out[integrator]
        assert drift[0] < 5e-2 * largest[0] and drift[1] < 5e-2 * largest[1]
        assert drift[2] < 1e-3


def test_free_fall_of_the_centre_of_mass_is_a_parabola():
    g = np.array([0.0, 0.0, -9.81])
    sim = zoo_sim('rk4', gravity=g)
    lin0, _, com0 = momenta(sim)
    total = 1.0 / sim._engine.bodies.inv_mass
    v0 = lin0 / total.sum()
    sim.step(1000)
    _, _, com = momenta(sim)
    t = sim.time
    assert np.linalg.norm(com - (com0 + v0 * t + 0.5 * g * t * t)) < 1e-8


def test_symplectic_euler_conserves_momentum_to_first_order():
    errors = []
    for dt in (2e-3, 1e-3):
        sim = zoo_sim('symplectic_euler', dt=dt)
        lin0, ang0, _ = momenta(sim)
        sim.step(int(round(1.0 / dt)))
        lin, ang, _ = momenta(sim)
        errors.append(np.linalg.norm(ang - ang0) + np.linalg.norm(lin - lin0))
    print('Euler momentum errors over 1 s at 2 and 1 ms:', errors)
    assert 0.3 < errors[1] / errors[0] < 0.7


@pytest.mark.parametrize('integrator, damping',
                         [('symplectic_euler', 0.0), ('semi_implicit_euler', 2.0)])
def test_no_joint_drift_on_the_arm_over_a_long_run(integrator, damping):
    # undamped, the semi-implicit velocity form gains energy until it diverges (7 s here):
    # it runs with joint damping, as a real arm has
    names = [f'joint_a{k}' for k in range(1, 8)]
    sim = Simulator.from_urdf(ARM, {'solver': {'formulation': 'tree', 'integrator': integrator},
                                    'joints': {n: {'damping': damping} for n in names},
                                    'initial_positions': {n: (-1) ** k * 0.5
                                                          for k, n in enumerate(names)}})
    worst = 0.0
    for _ in range(20):
        sim.step(1000)
        worst = max(worst, max(sim.joint_anchor_errors().values()))
    assert sim.time == pytest.approx(20.0)
    assert worst < 1e-12  # rounding only: bodies are placed from the joint coordinates


def _energy_errors(integrator, dt, duration):
    sim = Simulator.from_urdf(double_pendulum(), {
        'dt': dt, 'solver': {'formulation': 'tree', 'integrator': integrator},
        'initial_positions': {'shoulder': 1.2, 'elbow': -0.4}})
    e0 = sum(sim.mechanical_energy())
    e_rest = -2.0 * 9.81 - 1.0 * 9.81  # both bobs hanging: z = -1 and -2 m
    out = []
    for _ in range(int(round(duration / 0.01))):
        sim.step(int(round(0.01 / dt)))
        out.append((sum(sim.mechanical_energy()) - e0) / (e0 - e_rest))
    return np.abs(np.array(out))


def test_symplectic_euler_energy_error_is_bounded_and_first_order():
    long = _energy_errors('symplectic_euler', 1e-3, 40.0)
    first, last = long[:1000].max(), long[-1000:].max()
    print('Euler energy error (of E0 - E_rest): first 10 s', first, 'last 10 s', last)
    assert last < 1.5 * first  # bounded: no secular drift over 40 s
    half = _energy_errors('symplectic_euler', 5e-4, 10.0).max()
    assert 0.35 < half / first < 0.65
    assert first < 2e-2


def test_semi_implicit_euler_energy_error_is_first_order_but_not_bounded():
    # the velocity form is not symplectic for a configuration-dependent mass matrix: its
    # energy error grows (docs/tree.md); it is still first order in dt
    long = _energy_errors('semi_implicit_euler', 1e-3, 40.0)
    first, last = long[:1000].max(), long[-1000:].max()
    half = _energy_errors('semi_implicit_euler', 5e-4, 10.0).max()
    print('semi-implicit energy error: first 10 s', first, 'last 10 s', last, 'half dt', half)
    assert 0.35 < half / first < 0.65
    assert last > 1.5 * first


def test_rk4_energy_error_is_small():
    err = _energy_errors('rk4', 1e-3, 10.0).max()
    print('RK4 energy error over 10 s at 1 ms:', err)
    assert err < 1e-6


def test_symplectic_step_reports_its_fallback_on_a_whipping_chain():
    from robots import chain
    sim = Simulator.from_urdf(chain(32), {'solver': {'formulation': 'tree',
                                                     'integrator': 'symplectic_euler'}})
    sim.set_joint_state({n: 0.3 * (-1) ** k for k, n in enumerate(sim.joint_names)})
    reasons = set()
    for _ in range(500):
        reasons.add(sim.step(1).stop_reason)
    assert reasons == {'tolerance', 'iterations'}  # converged steps and fallen-back steps
    assert 0 < sim._engine.tree_work.fallbacks[0] < 500
    assert max(sim.joint_anchor_errors().values()) < 1e-12


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'symplectic_euler'])
def test_one_call_many_calls_and_an_undone_trial_step_the_same_to_the_bit(integrator):
    # a step reuses the kinematics the last one ended with unless the coordinates changed
    # (tree_kinematics keeps a copy of what they are of), and a tree whose axes cannot act
    # (continuous joints) skips their rows: n steps in one call and n calls of one step are
    # the same (the zoo has a limited prismatic joint: its axis rows run), and so are steps
    # after a trial step that was undone (as a spawn's overlap check does: the coordinates go
    # back, the kinematics of the trial stay until the next step computes them again)
    def chain_sim():
        return Simulator.from_urdf(chain(4, length=0.3, mass=0.5), {
            'dt': 1e-3, 'solver': {'formulation': 'tree', 'integrator': integrator},
            'initial_positions': {'joint0': 0.6, 'joint1': -0.4, 'joint2': 0.3}})

    def state(sim):
        return np.concatenate([sim.joint_positions(), sim.joint_velocities()])

    for make in (lambda: zoo_sim(integrator, gravity=(0.0, 0.0, -9.81)), chain_sim):
        one, many = make(), make()
        one.step(60)
        for _ in range(60):
            many.step(1)
        assert np.array_equal(state(one), state(many))
        assert np.abs(state(one)).max() > 0.1  # it moved
    trial, plain = chain_sim(), chain_sim()
    for sim in (trial, plain):
        sim.step(20)
    saved = trial._engine.snapshot()
    trial._engine.step(5)
    trial._engine.restore(saved)
    for sim in (trial, plain):
        sim.step(1)
        sim.step(30)
    assert np.array_equal(state(trial), state(plain))
