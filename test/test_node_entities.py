"""
The ROS 2 simulator standard (simulation_interfaces) on the node, over DDS (issue 31).

One jointsim_node runs the bundled arm in a process of its own (config: the arm's, with no
wall-clock solver budget, so that its steps are the Python API's to the last bit); the tests
call its ~/ services and its ~/simulate_steps action as any test runner would.  A spawned box
is read, moved, stepped while paused and compared with the same requests made through the
Python API (Simulator.entities), then deleted; the error cases answer with the interface's
result codes; the action gives feedback and can be cancelled.
"""
from geometry_msgs.msg import Point, Pose, Quaternion, Twist, Vector3
from jointsim_ros.sim.loading import load_robot
from node_harness import domain, LATCHED, PACKAGE_ROOT, RosClient, running_node, STATIC_TF
import numpy as np
import pytest
from rclpy.action import ActionClient
from rosgraph_msgs.msg import Clock
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntitiesStates,
                                       GetEntityState, GetSimulationState, GetSimulatorFeatures,
                                       ResetSimulation, SetEntityState, SetSimulationState,
                                       SpawnEntity, StepSimulation)
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

URDF = PACKAGE_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'
NS = '/jointsim_node/'
PHYSICS_RATE = 1000.0
#: A 0.2 m crate of 2 kg whose inertial origin is not its frame's (frame at its bottom face).
CRATE = """<robot name="crate">
  <link name="crate">
    <inertial><origin xyz="0 0 0.1"/><mass value="2.0"/>
      <inertia ixx="0.0133" ixy="0" ixz="0" iyy="0.0133" iyz="0" izz="0.0133"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
</robot>"""
#: The crate's spawn pose: 0.6 m ahead of the arm, 0.3 m up, turned 30 deg about z.
SPAWN_AT = (0.6, 0.5, 0.3)
SPAWN_QUAT = (np.cos(np.pi / 12), 0.0, 0.0, np.sin(np.pi / 12))
#: The state then set: a pose and a twist (it is thrown up and spun).
SET_AT, SET_QUAT = (0.7, 0.4, 0.5), (np.cos(0.2), np.sin(0.2), 0.0, 0.0)
SET_LINEAR, SET_ANGULAR = (0.3, -0.2, 1.5), (0.5, 1.0, -2.0)
STEPS = 600


def pose(position, quat):
    """Return a geometry_msgs/Pose."""
    return Pose(position=Point(x=float(position[0]), y=float(position[1]),
                               z=float(position[2])),
                orientation=Quaternion(w=float(quat[0]), x=float(quat[1]), y=float(quat[2]),
                                       z=float(quat[3])))


def vector(v):
    """Return a geometry_msgs/Vector3."""
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def state_arrays(state):
    """Return (position, quat wxyz, linear, angular) of a simulation_interfaces/EntityState."""
    p, q, t = state.pose.position, state.pose.orientation, state.twist
    return (np.array([p.x, p.y, p.z]), np.array([q.w, q.x, q.y, q.z]),
            np.array([t.linear.x, t.linear.y, t.linear.z]),
            np.array([t.angular.x, t.angular.y, t.angular.z]))


@pytest.fixture(scope='module', params=['maximal', 'tree'])
def node(tmp_path_factory, request):
    """
    Start the arm's simulation (no wall-clock solver budget); yield a client and it.

    Once per formulation (the node's ``formulation`` parameter): every service answers the
    same in both.
    """
    tmp = tmp_path_factory.mktemp('entities')
    config = tmp / 'arm.yaml'
    config.write_text(f"extends: {PACKAGE_ROOT / 'config' / 'jointsim_arm.yaml'}\n"
                      'solver:\n  time_budget: 10.0\n')
    with domain() as domain_id:
        with running_node(domain_id, tmp / 'node.log',
                          parameters={'robot_description_file': str(URDF),
                                      'config_file': str(config),
                                      'formulation': request.param,
                                      'physics_rate': PHYSICS_RATE}) as process:
            client = RosClient(domain_id)
            try:
                yield client, process, (config, request.param)
            finally:
                client.close()


def call(client, kind, name, **fields):
    """Call NS + name with a request of these fields; return the response."""
    request = kind.Request()
    for key, value in fields.items():
        setattr(request, key, value)
    return client.call(kind, NS + name, request)


def spawn(client, name, position, quat, uri='', resource='', allow_renaming=False):
    request = SpawnEntity.Request(name=name, uri=uri, resource_string=resource,
                                  allow_renaming=allow_renaming)
    request.initial_pose.pose = pose(position, quat)
    return client.call(SpawnEntity, NS + 'spawn_entity', request)


def crate_markers(msg):
    """Return the markers of a scene_markers message drawn on the crate's frame."""
    return [m for m in msg.markers if m.action == Marker.ADD and m.header.frame_id == 'crate']


def paused_at_start(client):
    """Pause and reset everything (time 0, the initial state, no spawned objects)."""
    call(client, SetSimulationState, 'set_simulation_state',
         state=SimulationState(state=SimulationState.STATE_PAUSED))
    answer = call(client, ResetSimulation, 'reset_simulation',
                  scope=ResetSimulation.Request.SCOPE_ALL)
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message


def test_the_features_list_what_works(node):
    client, _, _ = node
    answer = call(client, GetSimulatorFeatures, 'get_simulator_features')
    f = SimulatorFeatures
    features = set(answer.features.features)
    assert features >= {f.SPAWNING, f.DELETING, f.SPAWNING_RESOURCE_STRING,
                        f.ENTITY_STATE_GETTING, f.ENTITY_STATE_SETTING, f.SIMULATION_RESET,
                        f.SIMULATION_RESET_TIME, f.SIMULATION_RESET_STATE,
                        f.SIMULATION_RESET_SPAWNED, f.SIMULATION_STATE_GETTING,
                        f.SIMULATION_STATE_SETTING, f.SIMULATION_STATE_PAUSE,
                        f.STEP_SIMULATION_SINGLE, f.STEP_SIMULATION_MULTIPLE,
                        f.STEP_SIMULATION_ACTION}
    # what it does not do is not claimed
    assert not features & {f.NAMED_POSES, f.POSE_BOUNDS, f.ENTITY_TAGS, f.ENTITY_BOUNDS,
                           f.ENTITY_CATEGORIES, f.ENTITY_INFO_GETTING, f.SPAWNABLES,
                           f.WORLD_LOADING, f.SPAWNING_ENTITIES}
    assert list(answer.features.spawn_formats) == ['urdf', 'xacro', 'yaml']


def test_a_spawned_box_is_read_set_stepped_as_the_python_api_steps_it_and_deleted(node):
    client, _, (config, formulation) = node
    paused_at_start(client)
    tf = client.subscribe(TFMessage, '/tf')
    static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)
    scene = client.subscribe(MarkerArray, 'scene_markers', LATCHED)
    answer = spawn(client, 'crate', SPAWN_AT, SPAWN_QUAT, resource=CRATE)
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message
    assert answer.entity_name == 'crate'
    entities = call(client, GetEntities, 'get_entities').entities
    assert 'crate' in entities and 'link_1' in entities and 'tool0' in entities
    # read: where it was put, at rest
    state = call(client, GetEntityState, 'get_entity_state', entity='crate')
    assert state.result.result == Result.RESULT_OK
    assert state.state.header.frame_id == 'world'
    position, quat, linear, angular = state_arrays(state.state)
    np.testing.assert_allclose(position, SPAWN_AT, atol=1e-12)
    np.testing.assert_allclose(quat, SPAWN_QUAT, atol=1e-12)
    assert np.abs(linear).max() == 0.0 and np.abs(angular).max() == 0.0
    # set a pose and a twist, read them back
    request = SetEntityState.Request(entity='crate')
    request.state.pose = pose(SET_AT, SET_QUAT)
    request.state.twist = Twist(linear=vector(SET_LINEAR), angular=vector(SET_ANGULAR))
    answer = client.call(SetEntityState, NS + 'set_entity_state', request)
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message
    position, quat, linear, angular = state_arrays(
        call(client, GetEntityState, 'get_entity_state', entity='crate').state)
    np.testing.assert_allclose(position, SET_AT, atol=1e-12)
    np.testing.assert_allclose(quat, SET_QUAT, atol=1e-12)
    np.testing.assert_allclose(linear, SET_LINEAR, atol=1e-12)
    np.testing.assert_allclose(angular, SET_ANGULAR, atol=1e-12)
    # step N while paused: the same as the Python API doing the same
    answer = call(client, StepSimulation, 'step_simulation', steps=STEPS)
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message
    states = call(client, GetEntitiesStates, 'get_entities_states')
    assert states.result.result == Result.RESULT_OK
    seen = dict(zip(states.entities, states.states))
    sim = load_robot(robot_description_file=str(URDF), config_file=str(config),
                     physics_rate=PHYSICS_RATE, formulation=formulation).sim
    sim.entities.spawn('crate', CRATE, SPAWN_AT, SPAWN_QUAT)
    sim.entities.set_state('crate', SET_AT, SET_QUAT, SET_LINEAR, SET_ANGULAR)
    sim.step(STEPS)
    assert abs(seen['crate'].header.stamp.nanosec * 1e-9 - sim.time) < 1e-9
    for name in ('crate', 'link_3', 'tool0'):
        position, quat, linear, angular = state_arrays(seen[name])
        expected = sim.entities.state(name)
        np.testing.assert_allclose(position, expected.position, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(quat, expected.quat, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(linear, expected.linear_velocity, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(angular, expected.angular_velocity, atol=1e-9, err_msg=name)
    # it flew, landed on the ground the spawn switched on, and it is on /tf as its own frame
    crate_z = state_arrays(seen['crate'])[0][2]
    assert 0.0 < crate_z < 0.35, crate_z
    assert client.wait_for(lambda: any(t.child_frame_id == 'crate' for m in tf
                                       for t in m.transforms))
    assert static  # the static frames again, with the new world
    # the scene's shapes for rviz2 and the view: the crate's box on its frame, centred 0.1 m
    # above the frame's origin (its bottom face)
    assert client.wait_for(lambda: scene and crate_markers(scene[-1]))
    (box,) = crate_markers(scene[-1])
    assert box.type == Marker.CUBE and box.ns == 'scene'
    np.testing.assert_allclose([box.scale.x, box.scale.y, box.scale.z], [0.2] * 3, atol=1e-12)
    np.testing.assert_allclose([box.pose.position.x, box.pose.position.y, box.pose.position.z],
                               [0.0, 0.0, 0.1], atol=1e-12)
    # delete: gone from the entities, unknown afterwards
    answer = call(client, DeleteEntity, 'delete_entity', entity='crate')
    assert answer.result.result == Result.RESULT_OK, answer.result.error_message
    assert 'crate' not in call(client, GetEntities, 'get_entities').entities
    assert client.wait_for(lambda: not crate_markers(scene[-1]))  # and from the scene
    answer = call(client, GetEntityState, 'get_entity_state', entity='crate')
    assert answer.result.result == Result.RESULT_NOT_FOUND
    assert "'crate'" in answer.result.error_message


def test_the_error_cases_answer_with_their_codes_and_a_message_to_act_on(node):
    client, _, _ = node
    paused_at_start(client)
    codes = SpawnEntity.Response
    # unknown entity
    for kind, name, fields in ((GetEntityState, 'get_entity_state', {'entity': 'crat'}),
                               (DeleteEntity, 'delete_entity', {'entity': 'crat'}),
                               (SetEntityState, 'set_entity_state', {'entity': 'crat'})):
        answer = call(client, kind, name, **fields)
        assert answer.result.result == Result.RESULT_NOT_FOUND, name
        assert "no entity named 'crat'" in answer.result.error_message
    # a name taken (a robot link), then renamed on request
    answer = spawn(client, 'link_1', (1.0, 1.0, 0.1), (1, 0, 0, 0),
                   resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert answer.result.result == codes.NAME_NOT_UNIQUE
    assert 'allow_renaming' in answer.result.error_message
    answer = spawn(client, 'link_1', (1.0, 1.0, 0.1), (1, 0, 0, 0),
                   resource='{shape: sphere, radius: 0.1, mass: 1.0}', allow_renaming=True)
    assert answer.result.result == Result.RESULT_OK and answer.entity_name == 'link_1_1'
    # inside another body: refused with the depth and what it overlaps, nothing spawned
    answer = spawn(client, 'ball', (1.0, 1.05, 0.1), (1, 0, 0, 0),
                   resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert answer.result.result == codes.INVALID_POSE
    assert "inside 'link_1_1'" in answer.result.error_message
    assert 'ball' not in call(client, GetEntities, 'get_entities').entities
    # a URDF that does not parse; nothing given; a format it does not spawn; a bad name
    answer = spawn(client, 'box', (2, 0, 0.5), (1, 0, 0, 0), resource='<robot name="x"><link')
    assert answer.result.result == codes.RESOURCE_PARSE_ERROR
    assert 'does not parse' in answer.result.error_message
    answer = spawn(client, 'box', (2, 0, 0.5), (1, 0, 0, 0))
    assert answer.result.result == codes.NO_RESOURCE
    answer = spawn(client, 'box', (2, 0, 0.5), (1, 0, 0, 0),
                   uri=str(PACKAGE_ROOT / 'README.md'))
    assert answer.result.result == codes.UNSUPPORTED_FORMAT
    answer = spawn(client, 'my box', (2, 0, 0.5), (1, 0, 0, 0),
                   resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert answer.result.result == codes.NAME_INVALID
    answer = spawn(client, 'box', (2, 0, 0.5), (0, 0, 0, 0),
                   resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert answer.result.result == codes.INVALID_POSE
    # a robot link cannot be set alone nor deleted; stepping while playing is refused
    request = SetEntityState.Request(entity='link_3')
    request.state.pose = pose((0, 0, 1), (1, 0, 0, 0))
    answer = client.call(SetEntityState, NS + 'set_entity_state', request)
    assert answer.result.result == Result.RESULT_OPERATION_FAILED
    assert "held by the joint 'joint_a3'" in answer.result.error_message
    assert 'fixed base: move its joints' in answer.result.error_message
    answer = call(client, DeleteEntity, 'delete_entity', entity='link_3')
    assert answer.result.result == Result.RESULT_OPERATION_FAILED
    assert 'only scene objects' in answer.result.error_message
    call(client, SetSimulationState, 'set_simulation_state',
         state=SimulationState(state=SimulationState.STATE_PLAYING))
    answer = call(client, StepSimulation, 'step_simulation', steps=10)
    assert answer.result.result == Result.RESULT_OPERATION_FAILED
    assert 'pause' in answer.result.error_message
    # entity filters: a regular expression works, tags are not claimed
    request = GetEntities.Request()
    request.filters.filter = '^link_[0-9]$'
    names = client.call(GetEntities, NS + 'get_entities', request).entities
    assert names == [f'link_{k}' for k in range(1, 8)]
    request.filters.tags.tags = ['robot']
    assert (client.call(GetEntities, NS + 'get_entities', request).result.result
            == Result.RESULT_FEATURE_UNSUPPORTED)


def test_simulate_steps_gives_feedback_and_can_be_cancelled(node):
    client, _, _ = node
    paused_at_start(client)
    action = ActionClient(client.node, SimulateSteps, NS + 'simulate_steps')
    try:
        assert client.wait_for(action.server_is_ready)
        feedback = []
        sent = action.send_goal_async(SimulateSteps.Goal(steps=250),
                                      feedback_callback=lambda m: feedback.append(m.feedback))
        assert client.wait_for(sent.done)
        handle = sent.result()
        assert handle.accepted
        done = handle.get_result_async()
        assert client.wait_for(done.done, timeout=30.0)
        assert done.result().result.result.result == Result.RESULT_OK
        completed = [f.completed_steps for f in feedback]
        assert completed == sorted(completed) and completed[-1] == 250
        assert all(f.completed_steps + f.remaining_steps == 250 for f in feedback)
        state = call(client, GetEntityState, 'get_entity_state', entity='link_1').state
        assert abs(state.header.stamp.sec + state.header.stamp.nanosec * 1e-9 - 0.25) < 1e-9
        # a long goal, cancelled once it has started
        feedback.clear()
        sent = action.send_goal_async(SimulateSteps.Goal(steps=10_000_000),
                                      feedback_callback=lambda m: feedback.append(m.feedback))
        assert client.wait_for(sent.done)
        handle = sent.result()
        assert client.wait_for(lambda: len(feedback) >= 3)
        cancel = handle.cancel_goal_async()
        assert client.wait_for(cancel.done)
        done = handle.get_result_async()
        assert client.wait_for(done.done)
        assert done.result().status == 5  # action_msgs/GoalStatus.STATUS_CANCELED
        assert 'canceled after' in done.result().result.result.error_message
        assert feedback[-1].completed_steps < 10_000_000
        # while playing: refused (aborted) with the reason
        call(client, SetSimulationState, 'set_simulation_state',
             state=SimulationState(state=SimulationState.STATE_PLAYING))
        sent = action.send_goal_async(SimulateSteps.Goal(steps=10))
        assert client.wait_for(sent.done)
        done = sent.result().get_result_async()
        assert client.wait_for(done.done)
        assert done.result().result.result.result == Result.RESULT_OPERATION_FAILED
        assert 'pause it first' in done.result().result.result.error_message
    finally:
        action.destroy()


def test_the_simulation_state_reset_scopes_and_the_trigger_aliases(node):
    client, _, _ = node
    paused_at_start(client)
    state = call(client, GetSimulationState, 'get_simulation_state')
    assert state.state.state == SimulationState.STATE_PAUSED
    answer = call(client, SetSimulationState, 'set_simulation_state',
                  state=SimulationState(state=SimulationState.STATE_PAUSED))
    assert answer.result.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    call(client, StepSimulation, 'step_simulation', steps=300)
    before = call(client, GetEntityState, 'get_entity_state', entity='link_7').state
    # SCOPE_TIME: the time goes to 0, the state stays
    call(client, ResetSimulation, 'reset_simulation', scope=ResetSimulation.Request.SCOPE_TIME)
    after = call(client, GetEntityState, 'get_entity_state', entity='link_7').state
    assert (after.header.stamp.sec, after.header.stamp.nanosec) == (0, 0)
    assert after.pose == before.pose
    # SCOPE_SPAWNED removes what was spawned, nothing else
    spawn(client, 'ball', (1.0, -1.0, 0.5), (1, 0, 0, 0),
          resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert 'ball' in call(client, GetEntities, 'get_entities').entities
    call(client, ResetSimulation, 'reset_simulation',
         scope=ResetSimulation.Request.SCOPE_SPAWNED)
    assert 'ball' not in call(client, GetEntities, 'get_entities').entities
    # the Trigger aliases: resume plays, pause pauses, reset resets everything
    assert client.call(Trigger, '/resume').success
    assert (call(client, GetSimulationState, 'get_simulation_state').state.state
            == SimulationState.STATE_PLAYING)
    clock = client.subscribe(Clock, '/clock')
    assert client.wait_for(lambda: len(clock) > 5)
    assert client.call(Trigger, '/pause').success
    assert (call(client, GetSimulationState, 'get_simulation_state').state.state
            == SimulationState.STATE_PAUSED)
    # the reset alias is SCOPE_ALL: the time to 0 and what was spawned gone
    spawn(client, 'ball', (1.0, -1.0, 0.5), (1, 0, 0, 0),
          resource='{shape: sphere, radius: 0.1, mass: 1.0}')
    assert client.call(Trigger, '/reset').success
    assert 'ball' not in call(client, GetEntities, 'get_entities').entities
    stamp = call(client, GetEntityState, 'get_entity_state', entity='link_7').state.header.stamp
    assert (stamp.sec, stamp.nanosec) == (0, 0)
    # STOPPED: paused and reset to the start; PLAYING goes on from there
    answer = call(client, SetSimulationState, 'set_simulation_state',
                  state=SimulationState(state=SimulationState.STATE_STOPPED))
    assert answer.result.result == Result.RESULT_OK
    assert (call(client, GetSimulationState, 'get_simulation_state').state.state
            == SimulationState.STATE_STOPPED)
    stamp = call(client, GetEntityState, 'get_entity_state', entity='link_7').state.header.stamp
    assert (stamp.sec, stamp.nanosec) == (0, 0)
    answer = call(client, SetSimulationState, 'set_simulation_state',
                  state=SimulationState(state=SimulationState.STATE_PLAYING))
    assert answer.result.result == Result.RESULT_OK


def test_quitting_ends_the_node(node):
    client, process, _ = node
    answer = call(client, SetSimulationState, 'set_simulation_state',
                  state=SimulationState(state=SimulationState.STATE_QUITTING))
    assert answer.result.result == Result.RESULT_OK
    assert process.wait_exit(timeout=30.0) == 0
