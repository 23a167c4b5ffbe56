"""
The valve scenario (issue 30, docs/valve.md).

Grasps switched at run time, config ``extends``, the world link holding a floating robot and
fixed parts, and the humanoid turning the valve with wrist force feedback (headless; the same
through the node: test_node_valve.py).
"""
import math
import re

from jointsim_ros import Simulator
from jointsim_ros.description import load_model
from jointsim_ros.description.config import load_config
from jointsim_ros.errors import CommandError, ConfigError, DescriptionError
from jointsim_ros.tools.headless import valve, valve_result_line
import numpy as np
import pytest

VALVE_URDF = 'urdf/jointsim_humanoid_valve.urdf.xacro'
VALVE_CONFIG = 'config/jointsim_humanoid_valve.yaml'

# A wheel on a frictionless axle (x) fixed to the world and a free "hand" whose grasp point is
# its centre of mass, on the rim at the top: the analytic case of a grasp (a ball joint at the
# COM passes no moment, so the hand moves as a point mass on the rim).
WHEEL_URDF = """<?xml version="1.0"?>
<robot name="wheel_and_hand">
  <link name="world"/>
  <link name="stand"/>
  <joint name="mount" type="fixed">
    <parent link="world"/><child link="stand"/><origin xyz="0 0 1"/>
  </joint>
  <link name="wheel">
    <inertial><mass value="2.0"/>
      <inertia ixx="0.08" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="0.04"/></inertial>
  </link>
  <joint name="axle" type="continuous">
    <parent link="stand"/><child link="wheel"/><axis xyz="1 0 0"/>
  </joint>
  <link name="hand">
    <inertial><mass value="0.5"/>
      <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial>
  </link>
  <joint name="free_hand" type="floating">
    <parent link="stand"/><child link="hand"/><origin xyz="0 0 0.2"/>
  </joint>
</robot>
"""
GRASP = {'grasps': {'grip': {'link': 'hand', 'point': [0.0, 0.0, 0.0], 'object': 'wheel',
                             'radius': 0.2, 'axis': [1.0, 0.0, 0.0],
                             'max_distance': 0.005}},
         'ground': {'enabled': False}}


FORMULATIONS = ('maximal', 'tree')


def wheel_sim(tmp_path, gravity=(0.0, 0.0, 0.0), formulation='maximal', **grasp):
    path = tmp_path / 'wheel.urdf'
    path.write_text(WHEEL_URDF)
    config = {**GRASP, 'gravity': list(gravity), 'solver': {'formulation': formulation}}
    config['grasps'] = {'grip': {**GRASP['grasps']['grip'], **grasp}}
    return Simulator.from_urdf(str(path), config)


# -- grasps ------------------------------------------------------------------------------------
def test_a_grasp_far_from_the_rim_is_refused_with_the_distance_and_changes_nothing():
    sim = Simulator.from_urdf(VALVE_URDF, VALVE_CONFIG)
    gap = sim.grasps.distance('l_grasp')
    assert gap > 0.3                                   # the hands hang at the start
    with pytest.raises(CommandError) as caught:
        sim.grasps.grasp('l_grasp')
    message = str(caught.value)
    assert f'{gap:.4f} m from the rim of valve_wheel' in message
    assert 'within 0.0100 m' in message and 'Nothing was changed' in message
    assert sim.grasps.held() == {'l_grasp': False, 'r_grasp': False}
    with pytest.raises(CommandError, match="unknown grasp 'l_grab'.*l_grasp"):
        sim.grasps.grasp('l_grab')


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_grasp_holds_the_hand_on_the_rim_and_turns_the_wheel_as_one_body(
        tmp_path, formulation):
    sim = wheel_sim(tmp_path, formulation=formulation)
    assert sim.grasps.distance('grip') == pytest.approx(0.0, abs=1e-9)
    gap = sim.grasps.grasp('grip')
    assert gap == pytest.approx(0.0, abs=1e-9) and sim.grasps.holding('grip')
    # a tangential push F on the hand turns wheel and hand as one: (J + m R^2) alpha = F R
    force, radius, mass, inertia = 2.0, 0.2, 0.5, 0.08
    sim.set_link_wrench('hand', [0.0, -force, 0.0])
    sim.step(200)
    angle = sim.joint_positions()[sim.joint_names.index('axle')]
    alpha = force * radius / (inertia + mass * radius ** 2)
    assert angle == pytest.approx(0.5 * alpha * sim.time ** 2, rel=0.01)
    assert sim.grasps.distance('grip') < 1e-6                  # still on the rim
    # the grasp's pull on the hand is what makes the push and it move the hand on the rim:
    # m a = F + f_grasp, tangentially m R alpha, radially -m R w^2
    rate = sim.joint_velocities()[sim.joint_names.index('axle')]
    where = sim.link_pose('hand')[0] - np.array([0.0, 0.0, 1.0])
    radial = where / np.linalg.norm(where)
    tangent = np.cross([1.0, 0.0, 0.0], radial)
    held = sim.grasps.force('grip')
    push = np.array([0.0, -force, 0.0])
    alpha = (push @ tangent) * radius / (inertia + mass * radius ** 2)   # now
    assert held @ tangent == pytest.approx(mass * radius * alpha - push @ tangent, rel=0.01)
    assert held @ radial == pytest.approx(-mass * radius * rate ** 2 - push @ radial, rel=0.02)
    sim.grasps.release('grip')
    assert not sim.grasps.holding('grip')
    assert np.all(sim.grasps.force('grip') == 0.0)
    sim.set_link_wrench('hand', [0.0, 0.0, 0.0])
    sim.step(1)
    speed = sim.link_twist('hand')[0].copy()
    spin = sim.joint_velocities()[sim.joint_names.index('axle')]
    sim.step(50)
    # released: the hand flies on at its speed (no gravity here), the wheel spins on
    assert sim.link_twist('hand')[0] == pytest.approx(speed, abs=1e-9)
    assert sim.joint_velocities()[sim.joint_names.index('axle')] == pytest.approx(spin)
    assert sim.grasps.distance('grip') > 1e-4       # off the rim's curve, on its tangent


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_grasp_holds_a_hanging_hand_at_its_weight(tmp_path, formulation):
    sim = wheel_sim(tmp_path, gravity=(0.0, 0.0, -9.81), formulation=formulation)
    # at the top of the rim the hand's weight has no lever: the wheel stays, the grasp holds
    sim.grasps.grasp('grip')
    sim.step(5)
    assert sim.grasps.force('grip') == pytest.approx([0.0, 0.0, 0.5 * 9.81], abs=1e-6)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_reset_releases_every_grasp(tmp_path, formulation):
    sim = wheel_sim(tmp_path, formulation=formulation)
    sim.grasps.grasp('grip')
    sim.set_link_wrench('hand', [0.0, -2.0, 0.0])
    sim.step(10)
    sim.reset()
    assert sim.grasps.held() == {'grip': False}
    sim.step(10)
    assert sim.joint_velocities()[sim.joint_names.index('axle')] == 0.0


def test_the_tree_formulation_refuses_grasps_with_rk4(tmp_path):
    path = tmp_path / 'wheel.urdf'
    path.write_text(WHEEL_URDF)
    config = dict(GRASP, solver={'formulation': 'tree', 'integrator': 'rk4'})
    with pytest.raises(ConfigError, match='grasps with the rk4 integrator'):
        Simulator.from_urdf(str(path), config)


def test_grasp_settings_are_checked_at_load(tmp_path):
    path = tmp_path / 'wheel.urdf'
    path.write_text(WHEEL_URDF)
    bad = {'grasps': {'grip': {'link': 'hand', 'object': 'whel'}}}
    with pytest.raises(ConfigError, match="grasp 'grip' names object 'whel'.*wheel"):
        Simulator.from_urdf(str(path), bad)
    fixed = {'grasps': {'grip': {'link': 'stand', 'object': 'wheel'}}}
    with pytest.raises(ConfigError, match="link 'stand' is fixed to the world"):
        Simulator.from_urdf(str(path), fixed)


# -- the description: extends, the world link ----------------------------------------------
def test_a_config_extends_another_and_overrides_key_by_key(tmp_path):
    (tmp_path / 'base.yaml').write_text('dt: 0.002\nsolver: {iterations: 30, tolerance: 1.0e-6}\n'
                                        'joints: {a: {friction: 1.0}}\n')
    (tmp_path / 'over.yaml').write_text('extends: base.yaml\nsolver: {iterations: 12}\n'
                                        'joints: {a: {damping: 0.5}}\n')
    config = load_config(str(tmp_path / 'over.yaml'))
    assert config.dt == 0.002
    assert config.solver.iterations == 12 and config.solver.tolerance == 1e-6
    assert (config.joints['a'].friction, config.joints['a'].damping) == (1.0, 0.5)
    (tmp_path / 'loop.yaml').write_text('extends: loop.yaml\n')
    with pytest.raises(ConfigError, match='extends it in turn'):
        load_config(str(tmp_path / 'loop.yaml'))
    (tmp_path / 'lost.yaml').write_text('extends: nowhere.yaml\n')
    with pytest.raises(ConfigError, match="extends 'nowhere.yaml', which does not exist"):
        load_config(str(tmp_path / 'lost.yaml'))


def test_the_valve_scenario_loads_with_the_pelvis_floating_and_the_valve_fixed():
    model, config = load_model(VALVE_URDF, VALVE_CONFIG)
    assert model.warnings == ()
    assert model.floating_base and model.bodies[0].name == 'pelvis'
    assert model.links['valve_stand'].body == -1
    valve_joint = next(j for j in model.joints if j.name == 'valve')
    assert valve_joint.parent_body == -1 and valve_joint.friction == 3.0
    assert config.base_pose.position == (0.0, 0.0, 0.0)
    # everything else is the humanoid's config
    humanoid = load_config('config/jointsim_humanoid.yaml')
    assert config.drives == humanoid.drives
    assert config.force_torque_sensors == humanoid.force_torque_sensors
    sim = Simulator(model, config)
    assert sim.link_pose('pelvis')[0] == pytest.approx([0.0, 0.0, 0.9374])
    assert sim.link_pose('valve_wheel')[0] == pytest.approx([0.38, 0.0, 1.30])


def test_a_world_link_with_two_floating_joints_is_refused(tmp_path):
    text = WHEEL_URDF.replace('</robot>', """
  <link name="other"><inertial><mass value="1"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="free_other" type="floating"><parent link="world"/><child link="other"/></joint>
  <joint name="free_again" type="floating"><parent link="world"/><child link="hand2"/></joint>
  <link name="hand2"><inertial><mass value="1"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
</robot>""")
    path = tmp_path / 'two.urdf'
    path.write_text(text)
    with pytest.raises(DescriptionError, match='2 floating joints'):
        load_model(str(path))


# -- the scenario --------------------------------------------------------------------------
@pytest.fixture(scope='module', params=['maximal', 'tree'])
def turned(tmp_path_factory, request):
    """One run of the scenario per formulation (about 10 s of wall time each)."""
    lines = []

    class Out:

        def write(self, text):
            lines.append(text)

    result = valve(VALVE_URDF, VALVE_CONFIG, out=Out(), formulation=request.param)
    result['lines'] = ''.join(lines).splitlines()
    return result


@pytest.mark.slow
def test_the_humanoid_turns_the_valve_half_a_turn_keeping_the_squeeze(turned):
    assert turned['fell'] is None
    assert turned['turned'] >= 180.0
    # the squeeze while turning: within 20 % of its set value, RMS (measured: 1.6 N of 20)
    set_value = turned['controller'].valve.squeeze
    assert turned['squeeze_rms'] <= 0.2 * set_value
    assert turned['squeeze'] == pytest.approx(set_value, rel=0.1)
    # the last line, for tools that read it
    assert turned['lines'][-1] == valve_result_line(turned)
    assert re.fullmatch(r'result: valve turned \d+ deg, squeeze [\d.]+ N \(RMS error [\d.]+ N\), '
                        r'feet slip [\d.]+ mm, fell: no', turned['lines'][-1])
    # and let go at the end: the hands back at their start
    assert turned['controller'].state == 'done'
    assert not any(turned['sim'].grasps.held().values())


@pytest.mark.slow
def test_the_hands_share_the_valves_torque_and_never_fight_through_the_wheel(turned):
    # while the valve turns, both hands push the rim forwards (positive tangential force,
    # from the grasp joints), each with about half of what the valve needs
    rec = turned['record']
    turning = np.array([s == 'turning' for s in rec['state']]) & (np.array(rec['rate']) > 0.05)
    tangential = np.array(rec['tangential'])[turning]
    assert tangential.min() > 0.0
    share = tangential.mean(axis=0) / tangential.mean(axis=0).sum()
    assert share == pytest.approx([0.5, 0.5], abs=0.1)


@pytest.mark.slow
def test_the_feet_hold_and_the_pelvis_stays_upright_while_turning(turned):
    assert turned['slip'] < 1e-3
    assert turned['tilt'] < math.radians(3.0)


@pytest.mark.slow
def test_the_wrist_sensors_tangential_forces_are_the_valves_friction_and_inertia(turned):
    """
    R (t_l + t_r) from the wrist sensors = tau_c sign(w) + c w + J alpha within 5 %.

    The wrist sensors' exact readings (the hand's weight taken out, the hand's own inertia
    neglected: its acceleration on the rim is below 0.1 m/s^2), against the valve's joint
    friction and damping from the config and its inertia about the axis from the model, over
    0.25 s windows of the turn.
    """
    rec = turned['record']
    sim = turned['sim']
    joint = sim.model.joints[sim._engine.joint_index['valve']]
    body = sim.model.bodies[sim.model.links['valve_wheel'].body]
    inertia = float(np.asarray(body.inertia)[0, 0])
    radius = turned['controller'].valve.radius
    time = np.array(rec['time'])
    rate = np.array(rec['rate'])
    torque = radius * np.array(rec['wrist_tangential']).sum(axis=1)
    turning = np.array([s == 'turning' for s in rec['state']]) & (rate > 0.05)
    index = np.flatnonzero(turning)
    window = int(round(0.25 / (time[1] - time[0])))
    checked = 0
    for start in range(index[0], index[-1] - window, window):
        part = slice(start, start + window)
        if not turning[part].all():
            continue
        alpha = (rate[start + window - 1] - rate[start]) / (time[start + window - 1] - time[start])
        expected = joint.friction + joint.damping * rate[part].mean() + inertia * alpha
        assert torque[part].mean() == pytest.approx(expected, rel=0.05), (time[start], expected)
        checked += 1
    assert checked >= 15


@pytest.mark.slow
def test_a_valve_with_twice_the_friction_stops_the_turn_with_a_log_line_and_no_fall():
    lines = []

    class Out:

        def write(self, text):
            lines.append(text)

    result = valve(VALVE_URDF, VALVE_CONFIG, seconds=8.0, friction=6.0, out=Out())
    text = ''.join(lines)
    assert result['fell'] is None
    assert result['turned'] < 10.0
    assert 'turn stopped at' in text and 'the valve does not turn at 5.0 N m' in text
    assert not any(result['sim'].grasps.held().values())
    assert result['slip'] < 1e-3 and result['tilt'] < math.radians(3.0)


def test_a_grasp_request_without_an_answer_is_asked_again():
    # over DDS a service request (or its answer) can be lost: the controller asks again
    from jointsim_ros.control.valve import run_valve, ValveController
    sim = Simulator.from_urdf(VALVE_URDF, VALVE_CONFIG)
    controller = ValveController(*load_model('urdf/jointsim_humanoid.urdf.xacro',
                                             'config/jointsim_humanoid.yaml'))
    voltages = controller.voltages
    dropped = []

    def losing_the_first_request(m):
        volts = voltages(m)
        if ('grasp', 'l_grasp') in controller.requests and not dropped:
            controller.requests.remove(('grasp', 'l_grasp'))
            dropped.append(m.t)
        return volts
    controller.voltages = losing_the_first_request
    run_valve(sim, controller, 5.0)
    assert dropped
    assert any('no answer to grasp l_grasp; asking again' in line for _, line in controller.log)
    assert sim.grasps.held() == {'l_grasp': True, 'r_grasp': True}
    assert controller.state in ('holding', 'turning')
