"""
Simulator.entities: the robot's links and the scene objects; spawning and deleting at run time.

Physics checked against physics: a spawn or a delete leaves every other body's motion as it
would have been to the last bit (a reference simulation without it, stepped alongside); a
spawned box falls as semi-implicit Euler's closed form says; a urdf object whose inertial
origin is off its frame spins about its centre of mass with its momentum kept; a ball comes
to rest on a static urdf table at the table's height.
"""
from jointsim_ros import resources
from jointsim_ros.description import load_config
from jointsim_ros.errors import ConfigError
from jointsim_ros.rotations import quat_to_matrix
from jointsim_ros.sim.entities import EntityError
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import pytest

HUMANOID = str(resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'))
HUMANOID_CONFIG = str(resources.share_file('config', 'jointsim_humanoid.yaml'))
ARM = str(resources.share_file('urdf', 'jointsim_arm.urdf.xacro'))
ARM_CONFIG = str(resources.share_file('config', 'jointsim_arm.yaml'))
BALL = {'shape': 'sphere', 'radius': 0.1, 'mass': 1.0}
#: A 2 kg bar whose inertial origin is 0.3 m along x from its frame (the frame at one end).
BAR = """<robot name="bar">
  <link name="bar">
    <inertial><origin xyz="0.3 0 0"/><mass value="2.0"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.06"/></inertial>
    <collision><origin xyz="0.3 0 0"/><geometry><box size="0.6 0.04 0.04"/></geometry>
    </collision>
  </link>
</robot>"""
#: A table without mass: static geometry, its top 0.5 m above its frame.
TABLE = """<robot name="table">
  <link name="top"><collision><origin xyz="0 0 0.48"/><geometry><box size="1 1 0.04"/>
  </geometry></collision></link>
  <link name="leg"><collision><origin xyz="0 0 0.23"/><geometry><box size="0.1 0.1 0.46"/>
  </geometry></collision></link>
  <joint name="leg_joint" type="fixed"><parent link="top"/><child link="leg"/></joint>
</robot>"""


FORMULATIONS = ('maximal', 'tree')
both = pytest.mark.parametrize('formulation', FORMULATIONS)


def arm(formulation, **more):
    """Return the bundled arm with its config in this formulation (the tree: no F/T sensors)."""
    config = {**yaml_of(ARM_CONFIG), **more, 'solver': {'formulation': formulation}}
    if formulation == 'tree':
        config.pop('force_torque_sensors', None)
    return Simulator.from_urdf(ARM, config)


def humanoid():
    return Simulator.from_urdf(HUMANOID, HUMANOID_CONFIG)


def robot_state(sim, n_bodies):
    st = sim._engine.state
    return np.concatenate([st.body_pos[:n_bodies].ravel(), st.body_quat[:n_bodies].ravel(),
                           st.body_lin_vel[:n_bodies].ravel(),
                           st.body_ang_mom[:n_bodies].ravel(), st.joint_q, st.rotor_speed,
                           st.drive_current])


def test_a_spawn_and_a_delete_leave_every_other_body_as_it_would_have_been():
    """The humanoid stands on its feet (contacts warm-started); a ball comes and goes far away."""
    sim, reference = humanoid(), humanoid()
    volts = dict(zip(sim.drive_names, np.linspace(-2.0, 2.0, len(sim.drive_names))))
    for s in (sim, reference):
        s.set_voltages(volts)
        s.step(150)
    n = len(reference.model.bodies)
    name = sim.entities.spawn('ball', BALL, position=(3.0, 3.0, 1.0))
    assert name == 'ball' and sim.entities.names()[-1] == 'ball'
    assert sim.entities.spawned == ['ball']
    for _ in range(3):
        sim.step(100)
        reference.step(100)
        np.testing.assert_array_equal(robot_state(sim, n), robot_state(reference, n))
    sim.entities.delete('ball')
    assert 'ball' not in sim.entities.names() and len(sim.model.bodies) == n
    sim.step(200)
    reference.step(200)
    np.testing.assert_array_equal(robot_state(sim, n), robot_state(reference, n))


@both
def test_a_spawned_box_falls_as_semi_implicit_euler_says_and_reports_its_acceleration(
        formulation):
    sim = arm(formulation)
    z0, dt, g = 2.0, sim.dt, 9.81
    sim.entities.spawn('box', {'shape': 'box', 'size': [0.1, 0.2, 0.3], 'mass': 3.0},
                       position=(1.0, -1.0, z0), linear_velocity=(0.5, 0.0, 0.0))
    state = sim.entities.state('box')
    assert np.all(state.linear_acceleration == 0.0)   # no step yet
    n = 300
    sim.step(n)
    state = sim.entities.state('box')
    # v_k = -g k dt, z_n = z0 - g dt^2 n (n + 1) / 2 (velocities first, then positions)
    np.testing.assert_allclose(state.position, [1.0 + 0.5 * n * dt, -1.0,
                                                z0 - g * dt * dt * n * (n + 1) / 2],
                               atol=1e-12)
    np.testing.assert_allclose(state.linear_velocity, [0.5, 0.0, -g * n * dt], atol=1e-12)
    np.testing.assert_allclose(state.linear_acceleration, [0.0, 0.0, -g], atol=1e-9)
    np.testing.assert_allclose(state.quat, [1.0, 0.0, 0.0, 0.0], atol=1e-15)


@both
def test_a_urdf_file_spawns_by_path_and_by_file_uri_as_its_text_does(tmp_path, formulation):
    path = tmp_path / 'bar.urdf'
    path.write_text(BAR)
    sims = [arm(formulation) for _ in range(3)]
    for sim, source in zip(sims, (BAR, str(path), path.as_uri())):
        assert sim.entities.spawn('', source, position=(1.0, 1.0, 1.0),
                                  angular_velocity=(0.0, 0.0, 2.0)) == 'bar'
        sim.step(800)                     # falls, lands, spins on the ground
    states = [sim.entities.state('bar') for sim in sims]
    assert states[0].position[2] < 0.1    # it fell
    for other in states[1:]:
        np.testing.assert_array_equal(other.position, states[0].position)
        np.testing.assert_array_equal(other.quat, states[0].quat)


@both
def test_a_urdf_object_spins_about_its_centre_of_mass_which_moves_on_a_straight_line(
        formulation):
    config = load_config(ARM_CONFIG)
    sim = arm(formulation, gravity=[0.0, 0.0, 0.0])
    assert config.gravity != sim.config.gravity
    quat0 = (np.cos(0.3), 0.0, 0.0, np.sin(0.3))
    sim.entities.spawn('bar', BAR, position=(1.0, 1.0, 1.0), quat=quat0)
    # the frame sits on the spawn pose, the centre of mass 0.3 m along the bar's x
    state = sim.entities.state('bar')
    np.testing.assert_allclose(state.position, [1.0, 1.0, 1.0], atol=1e-12)
    com0 = np.array([1.0, 1.0, 1.0]) + quat_to_matrix(np.array(quat0)) @ [0.3, 0.0, 0.0]
    # spun about z through its frame's origin, thrown along y
    w, v = np.array([0.0, 0.0, 2.0]), np.array([0.0, 0.4, 0.0])
    sim.entities.set_state('bar', (1.0, 1.0, 1.0), quat0, v, w)
    com_velocity = v + np.cross(w, com0 - [1.0, 1.0, 1.0])
    n = 500
    sim.step(n)
    state = sim.entities.state('bar')
    rot = quat_to_matrix(state.quat)
    com = state.position + rot @ [0.3, 0.0, 0.0]
    np.testing.assert_allclose(com, com0 + com_velocity * n * sim.dt, atol=1e-10)
    np.testing.assert_allclose(state.angular_velocity, w, atol=1e-10)
    # about z at 2 rad/s for 0.5 s: the bar turned by 1 rad more
    yaw = np.arctan2(rot[1, 0], rot[0, 0])
    assert yaw == pytest.approx(0.6 + 2.0 * n * sim.dt, abs=1e-9)


def yaml_of(path):
    import yaml
    with open(path, encoding='utf-8') as stream:
        return yaml.safe_load(stream)


@both
def test_a_ball_comes_to_rest_on_a_static_urdf_table_of_the_config(formulation):
    scene = {'table': {'shape': 'urdf', 'urdf': TABLE, 'pose': {'position': [1.5, 0.0, 0.0]}},
             'ball': dict(BALL, pose={'position': [1.5, 0.0, 0.9]})}
    sim = arm(formulation, scene=scene)
    assert sim.model.links['table'].body == -1           # no mass: static geometry
    assert sim.entities.kind('table') == 'object'
    sim.step(2000)
    state = sim.entities.state('ball')
    assert state.position[2] == pytest.approx(0.5 + 0.1, abs=2e-3)   # on the top, compliant
    assert np.linalg.norm(state.linear_velocity) < 1e-3
    with pytest.raises(EntityError, match='static scene object') as caught:
        sim.entities.set_state('table', (0, 0, 0), (1, 0, 0, 0))
    assert caught.value.kind == 'failed'


def test_a_urdf_object_must_be_one_rigid_body_and_name_one_source():
    jointed = TABLE.replace('type="fixed"', 'type="revolute"').replace(
        '</joint>', '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                    '</joint>')
    with pytest.raises(ConfigError, match="revolute joint 'leg_joint'"):
        Simulator.from_urdf(ARM, {'scene': {'t': {'shape': 'urdf', 'urdf': jointed}}})
    with pytest.raises(ConfigError, match='neither filename nor urdf'):
        Simulator.from_urdf(ARM, {'scene': {'t': {'shape': 'urdf'}}})
    with pytest.raises(ConfigError, match='Remove mass'):
        Simulator.from_urdf(ARM, {'scene': {'t': {'shape': 'urdf', 'urdf': TABLE, 'mass': 1}}})


def test_spawn_refusals_name_the_problem_and_change_nothing(tmp_path):
    sim = Simulator.from_urdf(ARM, ARM_CONFIG)
    sim.entities.spawn('ball', BALL, position=(1.0, 1.0, 0.5))
    before = (sim.model, sim._engine, sim.entities.names())
    cases = [
        (('ball', BALL, (3, 3, 3)), 'name_taken', "the name 'ball' is taken"),
        (('link_2', BALL, (3, 3, 3)), 'name_taken', 'a robot link'),
        (('2ball', BALL, (3, 3, 3)), 'name_invalid', 'not a valid entity name'),
        (('', BALL, (3, 3, 3)), 'name_invalid', 'no name was given'),
        (('other', BALL, (1.0, 1.05, 0.5)), 'invalid_pose', "inside 'ball'"),
        (('other', BALL, (1.0, 1.0, 0.05)), 'invalid_pose', "inside 'ground'"),
        (('other', '', (3, 3, 3)), 'no_resource', 'neither a uri nor a resource_string'),
        (('other', '<robot name="x"><link', (3, 3, 3)), 'parse', 'does not parse'),
        (('other', str(tmp_path / 'missing.urdf'), (3, 3, 3)), 'not_found', 'was not found'),
        (('other', 'just some words', (3, 3, 3)), 'format', 'neither URDF'),
        (('other', {'shape': 'box', 'mass': 1.0}, (3, 3, 3)), 'parse', 'without size'),
        (('other', BALL, (np.nan, 0, 0)), 'invalid_pose', 'finite'),
    ]
    for args, kind, words in cases:
        with pytest.raises(EntityError) as caught:
            sim.entities.spawn(*args)
        assert caught.value.kind == kind, (args, str(caught.value))
        if words:
            assert words in str(caught.value), str(caught.value)
        assert (sim.model, sim._engine, sim.entities.names()) == before
    # renaming on request; a name from the URDF
    assert sim.entities.spawn('ball', BALL, (3, 3, 3), allow_renaming=True) == 'ball_1'
    assert sim.entities.spawn('', BAR, (4, 4, 1)) == 'bar'
    assert sim.entities.spawn('', BALL, (6, 6, 1), allow_renaming=True) == 'sphere'
    xacro = ('<robot name="puck" xmlns:xacro="http://www.ros.org/wiki/xacro">'
             '<xacro:property name="r" value="0.05"/><link name="puck"><inertial><mass '
             'value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>'
             '</inertial><collision><geometry><cylinder radius="${r}" length="0.02"/>'
             '</geometry></collision></link></robot>')
    assert sim.entities.spawn('', xacro, (7, 7, 1)) == 'puck'
    assert sim.model.shapes[[s.name for s in sim.model.shapes].index('puck')].size[0] == 0.05
    path = tmp_path / 'shape.yaml'
    path.write_text('shape: cylinder\nradius: 0.05\nlength: 0.2\nmass: 0.5\n')
    assert sim.entities.spawn('can', f'file://{path}', (5, 5, 1)) == 'can'
    # deleting: a robot link is refused, an unknown name is not found
    with pytest.raises(EntityError, match='only scene objects') as caught:
        sim.entities.delete('link_2')
    assert caught.value.kind == 'failed'
    with pytest.raises(EntityError, match="no entity named 'bal'") as caught:
        sim.entities.delete('bal')
    assert caught.value.kind == 'not_found'
    assert sim.entities.delete_spawned() == ['ball', 'ball_1', 'bar', 'sphere', 'puck', 'can']
    assert sim.entities.names()[-1] == 'tool0'


def test_the_base_link_is_set_with_the_robot_and_other_links_are_refused():
    sim = humanoid()
    quat = (np.cos(0.25), 0.0, 0.0, np.sin(0.25))
    sim.entities.set_state('pelvis', (1.0, 2.0, 1.2), quat, (0.1, 0.0, 0.0), (0.0, 0.0, 0.3))
    state = sim.entities.state('pelvis')
    np.testing.assert_allclose(state.position, [1.0, 2.0, 1.2], atol=1e-12)
    np.testing.assert_allclose(state.quat, quat, atol=1e-12)
    np.testing.assert_allclose(state.linear_velocity, [0.1, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(state.angular_velocity, [0.0, 0.0, 0.3], atol=1e-12)
    with pytest.raises(EntityError, match="held by the joint 'l_knee'") as caught:
        sim.entities.set_state('l_shin', (0, 0, 0), (1, 0, 0, 0))
    assert "set the state of the base link 'pelvis'" in str(caught.value)


def test_in_tree_mode_a_spawn_and_a_delete_leave_the_arm_as_it_would_have_been():
    """The arm driven in reduced coordinates; a ball comes, lands far away and goes."""
    sim, reference = arm('tree'), arm('tree')
    assert sim.entities.spawn_refusal is None
    volts = dict(zip(sim.drive_names, np.linspace(-2.0, 2.0, len(sim.drive_names))))
    for s in (sim, reference):
        s.set_voltages(volts)
        s.step(150)
    n = len(reference.model.bodies)
    assert sim.entities.spawn('ball', BALL, position=(3.0, 3.0, 0.5)) == 'ball'
    for _ in range(3):
        sim.step(100)
        reference.step(100)
        np.testing.assert_array_equal(robot_state(sim, n), robot_state(reference, n))
    assert sim.entities.state('ball').position[2] == pytest.approx(0.1, abs=1e-3)  # landed
    sim.entities.delete('ball')
    assert len(sim.model.bodies) == n
    sim.step(200)
    reference.step(200)
    np.testing.assert_array_equal(robot_state(sim, n), robot_state(reference, n))
