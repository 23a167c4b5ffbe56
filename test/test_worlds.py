"""Worlds: several robots in one simulation, each stepping as it would alone (docs/worlds.md)."""
import functools
from pathlib import Path

from jointsim_ros.errors import ConfigError, DescriptionError
from jointsim_ros.sim.simulator import Simulator
from jointsim_ros.tools import headless
import numpy as np
import pytest
from robots import box_inertial, collision_box, joint, link, robot
import yaml

REPO = Path(__file__).resolve().parents[1]
ARM = str(REPO / 'urdf' / 'jointsim_arm.urdf.xacro')
ARM_CONFIG = str(REPO / 'config' / 'jointsim_arm.yaml')
HUMANOID = str(REPO / 'urdf' / 'jointsim_humanoid.urdf.xacro')
HUMANOID_CONFIG = str(REPO / 'config' / 'jointsim_humanoid.yaml')
FORMULATIONS = ('maximal', 'tree')
STEPS = 400


def ram(name='ram'):
    """Return a floating box with a ram on a prismatic joint along its y axis."""
    limit = '<limit lower="-0.2" upper="0.3" effort="1000" velocity="100"/>'
    return robot(name,
                 link('base', box_inertial(5.0, (0.3, 0.3, 0.3)) + collision_box((0.3, 0.3, 0.3))),
                 link('ram', box_inertial(1.0, (0.1, 0.2, 0.1), xyz='0 0.1 0')
                      + collision_box((0.1, 0.2, 0.1), xyz='0 0.1 0')),
                 joint('slide', 'prismatic', 'base', 'ram', xyz='0 0.15 0', axis='0 1 0',
                       extra=limit))


def _solo_config(path, position, formulation):
    data = yaml.safe_load(open(path))
    pose = dict(data.get('base_pose') or {})
    base = np.asarray(pose.get('position', (0.0, 0.0, 0.0)), dtype=float)
    pose['position'] = (base + np.asarray(position, dtype=float)).tolist()
    data['base_pose'] = pose
    data['solver'] = dict(data.get('solver') or {}, formulation=formulation)
    return data


def _world(formulation):
    """Return the arm and the humanoid far apart on the ground (the humanoid's settings)."""
    humanoid = yaml.safe_load(open(HUMANOID_CONFIG))
    return {
        'solver': dict(humanoid.get('solver') or {}, formulation=formulation),
        'ground': humanoid.get('ground') or {},
        'robots': {
            'arm': {'description': ARM, 'config': ARM_CONFIG,
                    'pose': {'position': [0.0, -5.0, 0.0]}},
            'walker': {'description': HUMANOID, 'config': HUMANOID_CONFIG,
                       'pose': {'position': [0.0, 5.0, 0.0]}},
        }}


def _commands(target, prefix=''):
    """Hold the same voltages in both runs (the arm's shoulder and elbow)."""
    volts = {'joint_a2': 6.0, 'joint_a4': -4.0} if 'joint_a2' in target.drive_names else {}
    target.set_voltages(volts)


@functools.lru_cache(maxsize=None)
def world_run(formulation):
    """Step the two-robot world STEPS steps; return {robot: (q, qd, base pose)}."""
    sim = Simulator.from_world(_world(formulation))
    for view in sim.robots.values():
        _commands(view)
    sim.step(STEPS)
    return {name: (view.joint_positions(), view.joint_velocities(),
                   view.link_pose(view.root_link)) for name, view in sim.robots.items()}


@pytest.mark.slow
@pytest.mark.parametrize('formulation', FORMULATIONS)
@pytest.mark.parametrize('name', ['arm', 'walker'])
def test_robots_far_apart_step_exactly_as_each_alone(formulation, name):
    world = _world(formulation)
    entry = world['robots'][name]
    config = _solo_config(entry['config'], entry['pose']['position'], formulation)
    config['ground'] = world['ground']
    config['solver'] = world['solver']
    solo = Simulator.from_urdf(entry['description'], config)
    _commands(solo)
    solo.step(STEPS)
    q, qd, (pos, quat) = world_run(formulation)[name]
    assert np.array_equal(q, solo.joint_positions())
    assert np.array_equal(qd, solo.joint_velocities())
    solo_pos, solo_quat = solo.link_pose(solo.model.root_link)
    assert np.array_equal(pos, solo_pos) and np.array_equal(quat, solo_quat)
    assert np.abs(qd).max() > 0.01  # they moved


def _ram_world(formulation):
    return {'gravity': [0.0, 0.0, 0.0], 'ground': {'enabled': False},
            'solver': {'formulation': formulation},
            'robots': {
                'left': {'description': ram(), 'config': {'base': 'floating'},
                         'pose': {'position': [0.0, -0.55, 0.0]}},
                'right': {'description': ram(), 'config': {'base': 'floating'},
                          'pose': {'position': [0.0, 0.55, 0.0], 'rpy': [0.0, 0.0, np.pi]}}}}


def _momentum(sim, prefix):
    engine = sim._engine
    mass = 1.0 / engine.bodies.inv_mass
    own = [i for i, b in enumerate(sim.model.bodies) if b.name.startswith(prefix)]
    return (mass[own, None] * engine.state.body_lin_vel[own]).sum(axis=0)


#: |P_left + P_right| / |P_left|: maximal mode conserves linear momentum to rounding; the
#: tree's semi-implicit Euler on reduced coordinates to first order in dt (a lone ram spinning
#: at 0.37 rad/s drifts 4e-5 N s in 0.15 s, as here).
MOMENTUM_TOLERANCE = {'maximal': 1e-9, 'tree': 2e-5}


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_two_robots_pushing_feel_equal_and_opposite_forces(formulation):
    """Floating rams in zero gravity: each robot's momentum comes from the other's push alone."""
    sim = Simulator.from_world(_ram_world(formulation))
    tolerance = MOMENTUM_TOLERANCE[formulation]
    pushed = np.zeros(3)  # N s, the impulse of the right robot's contacts on the left one
    for view in sim.robots.values():
        view.set_joint_efforts({'slide': 40.0})
    touched, largest = 0, 0.0
    for _ in range(600):
        sim.step(1)
        between = [c for c in sim.contacts()
                   if {c.link_a.split('/')[0], c.link_b.split('/')[0]} == {'left', 'right'}]
        touched += bool(between)
        for c in between:
            force = c.normal_force * c.normal + c.friction_force  # B on A
            pushed += sim.dt * (force if c.link_a.startswith('left/') else -force)
        left, right = _momentum(sim, 'left/'), _momentum(sim, 'right/')
        largest = max(largest, np.linalg.norm(left))
        assert np.linalg.norm(left + right) <= tolerance * max(1.0, np.linalg.norm(left))
    assert touched > 20           # the rams met and pushed for a while
    assert largest > 1.0          # N s: the push moved the robots apart
    left = _momentum(sim, 'left/')
    assert left[1] < -1.0 and _momentum(sim, 'right/')[1] > 1.0
    # all a robot's momentum is the other's push, as the contacts report it
    assert np.linalg.norm(left - pushed) <= 1e-6 * np.linalg.norm(left) + tolerance


def test_each_robot_keeps_its_own_names_and_commands():
    sim = Simulator.from_world(_ram_world('maximal'))
    left, right = sim.robots['left'], sim.robots['right']
    assert left.joint_names == right.joint_names == ('slide',)
    assert sim.joint_names == ('left/slide', 'right/slide')
    assert 'left/ram' in sim.link_names and left.link_names == ('base', 'ram')
    left.set_joint_efforts({'slide': 10.0})
    sim.step(50)
    assert left.joint_positions()[0] > 1e-3
    assert right.joint_positions()[0] == 0.0
    pos, _ = right.link_pose('base')
    assert np.allclose(pos, [0.0, 0.55, 0.0])
    with pytest.raises(Exception, match='slid'):
        left.set_joint_efforts({'slid': 1.0})


def test_world_settings_given_by_a_robot_are_named(caplog):
    world = _ram_world('maximal')
    world['robots']['left']['config'] = {'base': 'floating', 'dt': 0.002}
    sim = Simulator.from_world(world)
    assert sim.dt == 0.001
    assert any("robot 'left'" in r.message and 'dt' in r.message for r in caplog.records)


@pytest.mark.parametrize('change, message', [
    (lambda w: w.update(wind=1.0), "unknown key 'wind'"),
    (lambda w: w['robots']['left'].update(colour='red'), "robot 'left': unknown key 'colour'"),
    (lambda w: w['robots']['left'].update(description='missing.urdf'),
     "robot 'left': its description 'missing.urdf' was not found"),
    (lambda w: w['robots']['left'].update(config='missing.yaml'),
     "robot 'left': its config 'missing.yaml' was not found"),
    (lambda w: w['robots']['left'].update(pose={'position': [0, 0]}), "robot 'left': pose"),
    (lambda w: w['robots']['left'].update(config={'base': 'floating',
                                                  'initial_positions': {'slid': 0.1}}),
     "'slid'"),
    (lambda w: w.update(robots={}), 'at least one robot'),
    (lambda w: w['robots'].update({'2nd': w['robots']['left']}), "robot name '2nd'"),
])
def test_a_bad_world_is_one_line_naming_it(change, message):
    world = _ram_world('maximal')
    change(world)
    with pytest.raises((ConfigError, DescriptionError)) as caught:
        Simulator.from_world(world)
    text = str(caught.value)
    assert message in text and '\n' not in text and 'Traceback' not in text


def test_a_robot_named_twice_in_a_world_file_is_refused(tmp_path):
    path = tmp_path / 'twice.world.yaml'
    arm = f'{{description: {ARM}, config: {ARM_CONFIG}}}'
    path.write_text(f'robots:\n  left: {arm}\n  left: {arm}\n')
    with pytest.raises(ConfigError, match="key 'left' appears twice"):
        Simulator.from_world(str(path))
    with pytest.raises(ConfigError, match='does not exist'):
        Simulator.from_world(str(tmp_path / 'none.world.yaml'))


def test_headless_runs_the_two_arm_world(capsys):
    assert headless.main(['--world', str(REPO / 'config' / 'two_arms.world.yaml'),
                          '--seconds', '0.2']) == 0
    out = capsys.readouterr().out
    assert 'world from' in out and '2 robots' in out
    assert "robot 'left'" in out and "robot 'right'" in out
    assert '7 movable joints (7 driven), fixed base' in out
    assert 'real-time factor' in out


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_robot_added_and_removed_at_run_time_leaves_the_others_as_they_were(formulation):
    """The arm goes on exactly as without the ram added beside it and taken away again."""
    config = dict(yaml.safe_load(open(ARM_CONFIG)), solver={'formulation': formulation,
                                                            'iterations': 20,
                                                            'tolerance': 1e-7})
    alone = Simulator.from_urdf(ARM, config)
    sim = Simulator.from_urdf(ARM, config)
    for one in (alone, sim):
        one.set_voltages({'joint_a2': 5.0})
        one.step(150)
    added = sim.add_robot('visitor', ram(), {'base': 'floating', 'gravity': [0.0, 0.0, -9.81]},
                          position=(0.0, 3.0, 1.0))
    assert set(sim.robots) == {'jointsim_arm', 'visitor'}
    assert sim.robots['jointsim_arm'].joint_names == alone.joint_names   # its own names stay
    assert 'visitor/slide' in sim.joint_names and added.joint_names == ('slide',)
    assert sim.time == alone.time
    added.set_joint_efforts({'slide': 5.0})
    alone.step(150)
    sim.step(150)
    assert np.array_equal(sim.robots['jointsim_arm'].joint_positions(), alone.joint_positions())
    assert sim.drive_state('joint_a2')['voltage'] == 5.0
    pos, _ = added.link_pose('base')
    assert pos[2] < 1.0 - 0.5 * 9.81 * 0.15 ** 2 * 0.9    # it falls freely (no ground)
    assert added.joint_positions()[0] > 0.0
    sim.remove_robot('visitor')
    assert sim.joint_names == alone.joint_names and len(sim.model.bodies) == 7
    alone.step(100)
    sim.step(100)
    assert np.array_equal(sim.joint_positions(), alone.joint_positions())
    with pytest.raises(Exception, match='is the robot this simulator started with'):
        sim.remove_robot('jointsim_arm')


def test_spawn_and_delete_a_robot_as_an_entity():
    sim = Simulator.from_world(_ram_world('maximal'))
    name = sim.entities.spawn('third', ram('third_ram'), position=(2.0, 0.0, 0.0))
    assert name == 'third' and sim.entities.kind('third') == 'robot'
    assert 'third' in sim.entities.names() and 'third/slide' in sim.joint_names
    state = sim.entities.state('third')   # the robot's root link
    assert np.allclose(state.position, [2.0, 0.0, 0.0])
    with pytest.raises(Exception, match="name 'third' is taken"):
        sim.entities.spawn('third', ram())
    with pytest.raises(Exception, match="name 'left' is taken"):
        sim.entities.spawn('left', {'description': ram()})
    sim.entities.delete('third')
    assert 'third' not in sim.entities.names() and 'third/slide' not in sim.joint_names
    # objects spawn into a world as into one robot's simulation
    sim.entities.spawn('crate', {'shape': 'box', 'size': [0.1, 0.1, 0.1], 'mass': 1.0},
                       position=(0.0, 2.0, 0.5), linear_velocity=(0.0, 0.0, -1.0))
    sim.step(100)
    assert sim.entities.state('crate').position[2] == pytest.approx(0.4, abs=1e-12)  # 0 g
    assert sim.entities.kind('crate') == 'spawned'
