"""Packed containers (physics/compile/flat.py): one buffer per dtype, views that alias it."""
from collections import namedtuple

from jointsim_ros.physics.compile import flat
from jointsim_ros.physics.compile.compiler import entry
from jointsim_ros.physics.compile.containers import by_reference
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import pytest

Box = by_reference(namedtuple('Box', ['line', 'grid', 'cube', 'index', 'empty']))
flat.declare(Box, flat.in_order('f1 f2 f3 i1 f2'))
# the same box's fields gathered from two packed boxes: `line` and `index` from the second
Mixed = by_reference(namedtuple('Mixed', Box._fields))
flat.declare(Mixed, [(2, 0, 1), (0, 1, 2), (0, 2, 3), (3, 3, 1), (0, 4, 2)])

_PENDULUM = """<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="0.1"
  iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01"
  iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="a"/><child link="b"/>
  <axis xyz="0 1 0"/></joint></robot>"""


def _box():
    return Box(line=np.arange(3.0), grid=np.arange(6.0).reshape(2, 3),
               cube=np.arange(8.0).reshape(2, 2, 2), index=np.arange(4, dtype=np.int64),
               empty=np.zeros((0, 3)))


@entry
def _touch(floats, ints, layout):
    box = flat.unpack(Box, ((floats, layout), (ints, layout)))
    box.grid[1, 2] += 100.0
    box.cube[1, 0, 1] += 1000.0
    box.index[3] += 10
    return box.line[2] + box.grid[0, 1] + box.cube[0, 1, 1] + box.index[1] + box.empty.shape[0]


@entry
def _mixed(floats, ints, layout, other_floats, other_ints, other_layout):
    box = flat.unpack(Mixed, ((floats, layout), (ints, layout), (other_floats, other_layout),
                              (other_ints, other_layout)))
    return box.line[0] + box.grid[1, 0] + box.index[2] + box.line.shape[0] + box.cube.size


def test_pack_keeps_values_and_the_views_alias_the_buffers():
    original = _box()
    box, floats, ints, layout = flat.pack(original)
    for name in Box._fields:
        np.testing.assert_array_equal(getattr(box, name), getattr(original, name))
        assert getattr(box, name).shape == getattr(original, name).shape
    assert floats.size == 3 + 6 + 8 and ints.size == 4
    box.grid[0, 0] = -5.0
    assert floats[layout[1, 0]] == -5.0


def test_kernel_views_read_and_write_the_same_elements_as_python():
    box, floats, ints, layout = flat.pack(_box())
    # line[2] + grid[0, 1] + cube[0, 1, 1] + index[1] + 0 rows
    assert _touch(floats, ints, layout) == 2.0 + 1.0 + 3.0 + 1.0
    assert box.grid[1, 2] == 105.0 and box.cube[1, 0, 1] == 1005.0 and box.index[3] == 13


def test_unpack_takes_each_field_from_the_declared_source_and_row():
    _, floats, ints, layout = flat.pack(_box())
    other = _box()._replace(line=np.array([7.0, 8.0]), index=np.array([5, 6, 9], dtype=np.int64))
    _, other_floats, other_ints, other_layout = flat.pack(other)
    # line[0] (other) + grid[1, 0] + index[2] (other) + 2 elements of the other line + 8
    assert _mixed(floats, ints, layout, other_floats, other_ints, other_layout) == \
        7.0 + 3.0 + 9 + 2 + 8


def test_declare_refuses_a_field_count_or_rank_the_class_does_not_have():
    with pytest.raises(ValueError, match='Box'):
        flat.declare(Box, flat.in_order('f1 f2'))
    with pytest.raises(ValueError, match='Box'):
        flat.declare(Box, flat.in_order('f1 f2 f5 i1 f2'))


def test_tree_declarations_match_what_the_tree_engine_packs():
    # tree.py declares the state's by hand, pack_together the others: they must be the arrays'
    from jointsim_ros.physics import tree
    sim = Simulator.from_urdf(_PENDULUM, {'solver': {'formulation': 'tree'}})
    engine = sim._engine
    for container in (engine.tree, engine.tree_work, engine.tree_state, engine.joints,
                      engine.links, engine.axes, engine.drives, engine.shapes,
                      engine.polytopes, engine.contacts, engine.cwork):
        declared = flat.DECLARED[type(container)]
        for name, array, (source, _, ndim) in zip(container._fields, container, declared):
            assert array.ndim == ndim, name
            if type(container) is not tree.TreeState:  # (its sources are two float buffers)
                assert array.dtype == (np.float64, np.int64, np.bool_)[source], name


def test_pack_refuses_other_dtypes_by_field_name():
    with pytest.raises(TypeError, match='Box.index'):
        flat.pack(_box()._replace(index=np.zeros(2, dtype=np.int32)))


def test_tree_engine_state_arrays_are_views_of_the_packed_buffers():
    sim = Simulator.from_urdf(_PENDULUM, {'solver': {'formulation': 'tree'}})
    engine = sim._engine
    # the facade's State and the tree's own arrays are the buffers the kernel is given
    for array in (*engine.state, *engine.tree_state, *engine.tree_work, *engine.tree,
                  *engine.joints, *engine.axes, *engine.contacts, *engine.cwork):
        assert array.base is not None
    sim.set_joint_state({'j': 0.3})
    sim.step(10)
    # the pendulum swings back under gravity: what the kernel wrote, Python reads
    assert sim.joint_positions()[0] < 0.3
    assert engine.tree_state.node_q[0] == pytest.approx(sim.joint_positions()[0])


Pair = by_reference(namedtuple('Pair', ['flags', 'deep', 'flat']))
Other = by_reference(namedtuple('Other', ['value', 'count']))


def _pair_and_other(scale=1.0):
    deep = scale * np.arange(16.0).reshape(1, 2, 2, 4)
    return (Pair(flags=np.array([True, False, True]), deep=deep, flat=deep.reshape(-1)),
            Other(value=np.array([scale]), count=np.array([7], dtype=np.int64)))


def test_pack_together_keeps_aliases_bools_four_dimensions_and_numbers_rows_on():
    (pair, other), (floats, ints, bools), layout = flat.pack_together(
        _pair_and_other(), declare_classes=True)
    # `flat` lay inside `deep`'s memory: it still does, at the same place in the buffer
    pair.flat[5] = -1.0
    assert pair.deep[0, 0, 1, 1] == -1.0 and floats.size == 16 + 1
    assert bools.tolist() == [True, False, True] and ints.tolist() == [7]
    # the second container's fields follow the first's in the layout
    assert flat.DECLARED[Other] == ((0, 3, 1), (1, 4, 1))
    assert layout[1, 1:].tolist() == [1, 2, 2, 4]
    with pytest.raises(ValueError, match='Other is declared with another layout'):
        flat.pack_together(_pair_and_other()[::-1], declare_classes=True)


def test_pack_together_refuses_fields_that_overlap_without_lying_inside():
    base = np.arange(6.0)
    with pytest.raises(TypeError, match='Other.value overlaps'):
        flat.pack_together([Other(value=base[:4], count=np.zeros(1, dtype=np.int64)),
                            Other(value=base[2:], count=np.zeros(1, dtype=np.int64))])


@entry
def _keep(floats, ints, bools, layout, cache):
    sources = ((floats, layout), (ints, layout), (bools, layout))
    return (int(flat.keep_views(Pair, sources, cache, cache[0], cache[1]))
            + int(flat.keep_views(Other, sources, cache, cache[2], cache[3])))


def test_keep_views_fills_the_slots_and_sets_their_flags():
    _, buffers, layout = flat.pack_together(_pair_and_other(), declare_classes=True)
    _, other_buffers, other_layout = flat.pack_together(_pair_and_other(2.0))
    cache = flat.view_slots((Pair, Other))
    # Pair: a flag, three array structures of 5 words and 2 per dimension; then Other's
    assert cache[:4].tolist() == [4, 4 + 1 + 7 + 13 + 7, 32, 32 + 1 + 7 + 7]
    assert _keep(*buffers, layout, cache) == 2
    assert cache[4] == 1 and cache[32] == 1
    # deep[0, 0, 1, 1] = flat[5] = 5 + 1000, value 1, count 7, three flags
    assert _read_bound(cache) == 1005.0 + 1 + 7 + 3
    flat.clear_views(cache)
    assert cache[4] == 0 and cache[32] == 0
    # other buffers kept: the kernel reads them, the first buffers are left as they were
    assert _keep(*other_buffers, other_layout, cache) == 2
    assert _read_bound(cache) == 1010.0 + 2 + 7 + 3
    assert buffers[0][5] == 1005.0 and other_buffers[0][5] == 1010.0


def test_keep_views_leaves_a_slot_with_no_room_unbound():
    _, buffers, layout = flat.pack_together(_pair_and_other(), declare_classes=True)
    cache = flat.view_slots((Pair, Other))
    cache[1] -= 1   # Pair's slot a word short
    assert _keep(*buffers, layout, cache) == 1
    assert cache[4] == 0 and cache[32] == 1   # only Other's slot was used
    assert not flat.views_bound(cache)


@entry
def _read_bound(cache):
    pair = flat.bound_view(Pair, cache, cache[0], cache[1])
    other = flat.bound_view(Other, cache, cache[2], cache[3])
    pair.flat[5] += 1000.0
    return pair.deep[0, 0, 1, 1] + other.value[0] + other.count[0] + pair.flags.size


def test_bound_view_reads_the_kept_views_without_the_buffers():
    (pair, _), buffers, layout = flat.pack_together(_pair_and_other(), declare_classes=True)
    cache = flat.view_slots((Pair, Other))
    assert not flat.views_bound(cache)
    _keep(*buffers, layout, cache)
    assert flat.views_bound(cache)
    # flat[5] + 1000, value 1, count 7, three flags; written where Python sees it
    assert _read_bound(cache) == 1005.0 + 1 + 7 + 3
    assert pair.deep[0, 0, 1, 1] == 1005.0
    flat.clear_views(cache)
    assert not flat.views_bound(cache)


# -- containers bound unpacked (flat.keep_container: the maximal step's) --------------------------
Loose = by_reference(namedtuple('Loose', ['pos', 'index']))


def _loose(value):
    return Loose(pos=np.full((3, 2), value), index=np.arange(4, dtype=np.int64))


@entry
def _keep_loose(loose, cache):
    return flat.keep_container(loose, cache, cache[0], cache[1])


@entry
def _read_loose(cache):
    loose = flat.bound_view(Loose, cache, cache[0], cache[1])
    loose.pos[2, 1] += 100.0
    return loose.pos[0, 0] + loose.index[3] + loose.pos.shape[0]


def test_keep_container_keeps_the_arrays_a_kernel_was_passed_for_later_calls():
    flat.bind_types(_loose(0.0))
    cache = flat.view_slots((Loose,))
    # a flag, then a 2-dimensional array's 9 words and a 1-dimensional array's 7
    assert cache[:2].tolist() == [2, 2 + 1 + 9 + 7]
    first, second = _loose(1.0), _loose(2.0)
    assert _keep_loose(first, cache) and flat.views_bound(cache)
    # read and written where Python sees them, without being passed
    assert _read_loose(cache) == 1.0 + 3 + 3
    assert first.pos[2, 1] == 101.0
    flat.clear_views(cache)
    assert not flat.views_bound(cache)
    assert _keep_loose(second, cache)
    assert _read_loose(cache) == 2.0 + 3 + 3
    assert second.pos[2, 1] == 102.0 and first.pos[2, 1] == 101.0
    cache[1] -= 1   # a word short: nothing kept
    flat.clear_views(cache)
    assert not _keep_loose(first, cache) and not flat.views_bound(cache)


def test_bind_types_refuses_a_class_whose_fields_type_otherwise():
    flat.bind_types(_loose(0.0))
    with pytest.raises(TypeError, match='Loose: its fields type as'):
        flat.bind_types(Loose(pos=np.zeros(3), index=np.arange(4, dtype=np.int64)))


def test_the_maximal_step_binds_again_when_its_contact_arrays_grow_or_come_back():
    # a box dropped on the ground with room for 4 points: the step meets the overflow, the
    # arrays grow, the kernel keeps the new ones; a restore brings back the old ones
    box = """<robot name="b"><link name="box"><inertial><mass value="1"/><inertia ixx="0.01"
      iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>
      <box size="0.2 0.2 0.2"/></geometry></collision></link></robot>"""
    sim = Simulator.from_urdf(box, {'base': 'floating', 'base_pose': {'position': [0, 0, 0.1]},
                                    'solver': {'formulation': 'maximal'}})
    engine = sim._engine
    snapshot = engine.snapshot()
    engine._allocate_contacts(1, 1)
    small = engine.contacts
    assert not engine._bound
    sim.step(20)
    assert engine.contacts is not small and len(engine.contacts.id) > 1 and engine._bound
    resting = engine.state.body_pos[0, 2]
    assert resting == pytest.approx(0.1, abs=2e-3)    # on its four corners, not through
    engine.restore(snapshot)
    assert not engine._bound
    sim.step(20)
    assert engine._bound and engine.state.body_pos[0, 2] == pytest.approx(resting, abs=2e-3)
