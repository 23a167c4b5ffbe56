"""Islands: bodies that do not touch are solved apart, each as if alone (docs/engine.md)."""
import functools

from jointsim_ros.physics import islands
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import pytest
from robots import box_inertial, collision_box, joint, link, robot

FORMULATIONS = ('maximal', 'tree')
CONTACT_MODELS = ('rigid', 'compliant')
STEPS = 500


def hopper(name='hopper'):
    """Return a floating box with a leg on a prismatic joint below it, both colliding."""
    limit = '<limit lower="-0.05" upper="0.1" effort="1000" velocity="100"/>'
    return robot(name,
                 link('base', box_inertial(4.0, (0.3, 0.3, 0.2)) + collision_box((0.3, 0.3, 0.2))),
                 link('leg', box_inertial(0.5, (0.1, 0.1, 0.2), xyz='0 0 -0.1')
                      + collision_box((0.1, 0.1, 0.2), xyz='0 0 -0.1')),
                 joint('slide', 'prismatic', 'base', 'leg', xyz='0 0 -0.1', axis='0 0 -1',
                       extra=limit + '<dynamics damping="2.0" friction="1.0"/>'))


#: where each hopper starts (m) and the effort on its leg (N): the second drops from higher up,
#: tilted, and kicks, so the two need different sweeps in the same steps
HOPPERS = {'low': ((0.0, -2.0, 0.45), (0.0, 0.0, 0.0), 5.0),
           'high': ((0.0, 2.0, 0.7), (0.3, 0.2, 0.0), -40.0)}


def _settings(formulation, contact_model):
    return {'solver': {'formulation': formulation, 'iterations': 30, 'tolerance': 1e-9},
            'collision': {'contact_model': contact_model}, 'ground': {'enabled': True}}


def _world(formulation, contact_model, hoppers=HOPPERS):
    world = _settings(formulation, contact_model)
    world['robots'] = {name: {'description': hopper(), 'config': {'base': 'floating'},
                              'pose': {'position': list(pos), 'rpy': list(rpy)}}
                       for name, (pos, rpy, _) in hoppers.items()}
    return world


def _push(target, name):
    target.set_joint_efforts({'slide': HOPPERS[name][2]})


@functools.lru_cache(maxsize=None)
def world_run(formulation, contact_model):
    """Step the two hoppers in one world; return {name: (q, qd, base pose)} and the world."""
    sim = Simulator.from_world(_world(formulation, contact_model))
    for name, view in sim.robots.items():
        _push(view, name)
    counts = []
    for _ in range(STEPS):
        sim.step(1)
        counts.append(int(sim._engine.cwork.isl_count[0]))
    return ({name: (view.joint_positions(), view.joint_velocities(), view.link_pose('base'))
             for name, view in sim.robots.items()}, counts)


@pytest.mark.parametrize('contact_model', CONTACT_MODELS)
@pytest.mark.parametrize('formulation', FORMULATIONS)
@pytest.mark.parametrize('name', sorted(HOPPERS))
def test_a_robot_on_the_ground_steps_as_alone_beside_another(formulation, contact_model, name):
    """Landing, the push out of the ground and the projection are each island's own."""
    pos, rpy, _ = HOPPERS[name]
    config = dict(_settings(formulation, contact_model), base='floating',
                  base_pose={'position': list(pos), 'rpy': list(rpy)})
    alone = Simulator.from_urdf(hopper(), config)
    _push(alone, name)
    alone.step(STEPS)
    q, qd, (base, turn) = world_run(formulation, contact_model)[0][name]
    assert np.array_equal(q, alone.joint_positions())
    assert np.array_equal(qd, alone.joint_velocities())
    solo_base, solo_turn = alone.link_pose('base')
    assert np.array_equal(base, solo_base) and np.array_equal(turn, solo_turn)
    assert alone.contacts()          # it stands on the ground
    assert solo_base[2] < pos[2] - 0.05   # it fell onto it


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_two_robots_apart_are_two_islands(formulation):
    """The ground joins nothing: two hoppers standing on it are solved apart."""
    counts = world_run(formulation, 'compliant')[1]
    sim = Simulator.from_world(_world(formulation, 'compliant'))
    sim.step(400)
    cwork = sim._engine.cwork
    # maximal: a hopper's two bodies are one island (its joint); tree: one tree each
    assert cwork.isl_count[0] == 2 and counts[-1] == 2
    assert list(cwork.isl_label) == ([0, 0, 1, 1] if formulation == 'maximal' else [0, 1])
    # the contact points sorted by island, each island's in their own order
    n = sim._engine.contacts.count[0]
    start = cwork.isl_start[islands.POINTS]
    assert start[0] == 0 and start[cwork.isl_count[0] + 1] == n > 0
    for g in range(2):
        points = cwork.isl_items[islands.POINTS, start[g]:start[g + 1]]
        assert len(points) and list(points) == sorted(points)
        bodies = sim._engine.contacts.body[points, 0]
        prefix = ('low/', 'high/')[g]
        assert all(sim.model.bodies[b].name.startswith(prefix) for b in bodies)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_robots_that_touch_are_one_island(formulation):
    """A hopper on top of the other: the contact between them joins their islands."""
    stack = {'low': ((0.0, 0.0, 0.45), (0.0, 0.0, 0.0), 0.0),
             'high': ((0.0, 0.0, 0.9), (0.0, 0.0, 0.0), 0.0)}
    sim = Simulator.from_world(_world(formulation, 'compliant', stack))
    sim.step(400)
    between = [c for c in sim.contacts()
               if {c.link_a.split('/')[0], c.link_b.split('/')[0]} == {'low', 'high'}]
    assert between
    assert sim._engine.cwork.isl_count[0] == 1
    assert len(set(sim._engine.cwork.isl_label)) == 1
    # one island, solved together: the top one rests on the bottom one
    top, _ = sim.robots['high'].link_pose('base')
    bottom, _ = sim.robots['low'].link_pose('base')
    assert 0.2 < top[2] - bottom[2] < 0.45
