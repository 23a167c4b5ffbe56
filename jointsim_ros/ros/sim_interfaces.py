"""
The ROS 2 simulator standard (``simulation_interfaces``) on the node: services and an action.

Under the node's private namespace with the standard's default names (docs/entities.md):
``~/get_simulator_features``, ``~/get_entities``, ``~/get_entity_state``,
``~/get_entities_states``, ``~/set_entity_state``, ``~/spawn_entity``, ``~/delete_entity``,
``~/step_simulation``, ``~/reset_simulation``, ``~/get_simulation_state``,
``~/set_simulation_state`` and the ``~/simulate_steps`` action.  The entities are the robot's
links and the scene objects (``Simulator.entities``); every answer carries a
``simulation_interfaces/Result`` whose message says what to do.  Like every callback of the
node they run between ticks; the action steps in the node's ticks, so its feedback flows and
it can be cancelled.  The node's own Trigger services (``pause``, ``resume``, ``step``,
``reset``) are aliases of these.
"""
import re
import time

from geometry_msgs.msg import Point, Pose, Quaternion, Twist, Vector3
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from simulation_interfaces.action import SimulateSteps
from simulation_interfaces.msg import EntityState, Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import (DeleteEntity, GetEntities, GetEntitiesStates,
                                       GetEntityState, GetSimulationState, GetSimulatorFeatures,
                                       ResetSimulation, SetEntityState, SetSimulationState,
                                       SpawnEntity, StepSimulation)

from . import messages
from ..rotations import quat_multiply, quat_to_matrix
from ..sim.entities import EntityError, SPAWN_FORMATS

#: Result codes of EntityError kinds (the services' own codes are mapped per service).
_CODES = {'not_found': Result.RESULT_NOT_FOUND, 'unsupported': Result.RESULT_FEATURE_UNSUPPORTED,
          'failed': Result.RESULT_OPERATION_FAILED, 'invalid_pose': Result.RESULT_OPERATION_FAILED,
          'parse': Result.RESULT_OPERATION_FAILED, 'name_taken': Result.RESULT_OPERATION_FAILED,
          'name_invalid': Result.RESULT_OPERATION_FAILED,
          'no_resource': Result.RESULT_OPERATION_FAILED,
          'format': Result.RESULT_OPERATION_FAILED}
_SPAWN_CODES = {'name_taken': SpawnEntity.Response.NAME_NOT_UNIQUE,
                'name_invalid': SpawnEntity.Response.NAME_INVALID,
                'format': SpawnEntity.Response.UNSUPPORTED_FORMAT,
                'no_resource': SpawnEntity.Response.NO_RESOURCE,
                'parse': SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                'invalid_pose': SpawnEntity.Response.INVALID_POSE}
_STATE_NAMES = {SimulationState.STATE_STOPPED: 'stopped', SimulationState.STATE_PLAYING: 'playing',
                SimulationState.STATE_PAUSED: 'paused', SimulationState.STATE_QUITTING: 'quitting',
                SimulationState.STATE_NO_WORLD: 'no world',
                SimulationState.STATE_LOADING_WORLD: 'loading a world'}
SCOPE_KNOWN = (ResetSimulation.Request.SCOPE_TIME | ResetSimulation.Request.SCOPE_STATE
               | ResetSimulation.Request.SCOPE_SPAWNED)


def result(code=Result.RESULT_OK, message=''):
    """Return a simulation_interfaces/Result."""
    return Result(result=code, error_message=message)


def entity_state_message(state, frame_id, seconds):
    """Return the simulation_interfaces/EntityState of an EntityState (world frame)."""
    msg = EntityState()
    msg.header.stamp = messages.stamp(seconds)
    msg.header.frame_id = frame_id
    msg.pose = Pose(position=Point(**_xyz(state.position)),
                    orientation=Quaternion(w=float(state.quat[0]), x=float(state.quat[1]),
                                           y=float(state.quat[2]), z=float(state.quat[3])))
    msg.twist = Twist(linear=Vector3(**_xyz(state.linear_velocity)),
                      angular=Vector3(**_xyz(state.angular_velocity)))
    msg.acceleration.linear = Vector3(**_xyz(state.linear_acceleration))
    msg.acceleration.angular = Vector3(**_xyz(state.angular_acceleration))
    return msg


def pose_values(pose):
    """Return (position (3,), quat wxyz (4,)) of a geometry_msgs/Pose."""
    p, q = pose.position, pose.orientation
    return (p.x, p.y, p.z), (q.w, q.x, q.y, q.z)


def twist_values(twist):
    """Return (linear (3,), angular (3,)) of a geometry_msgs/Twist."""
    return ((twist.linear.x, twist.linear.y, twist.linear.z),
            (twist.angular.x, twist.angular.y, twist.angular.z))


def _xyz(v):
    return {'x': float(v[0]), 'y': float(v[1]), 'z': float(v[2])}


class SimulationInterfaces:
    """
    The simulation_interfaces services and action of one node.

    Args:
        node: the JointsimNode (its ``sim``, ``runner``, ``frames``, ``world_changed()`` and
            ``publish_now()``).
    """

    def __init__(self, node):
        self.node = node
        self.stopped = False
        self._goal = None  # the running simulate_steps goal: [handle, steps, done, future]
        services = (
            (GetSimulatorFeatures, 'get_simulator_features', self._on_features),
            (GetEntities, 'get_entities', self._on_entities),
            (GetEntityState, 'get_entity_state', self._on_entity_state),
            (GetEntitiesStates, 'get_entities_states', self._on_entities_states),
            (SetEntityState, 'set_entity_state', self._on_set_entity_state),
            (SpawnEntity, 'spawn_entity', self._on_spawn),
            (DeleteEntity, 'delete_entity', self._on_delete),
            (StepSimulation, 'step_simulation', self._on_step),
            (ResetSimulation, 'reset_simulation', self._on_reset),
            (GetSimulationState, 'get_simulation_state', self._on_get_state),
            (SetSimulationState, 'set_simulation_state', self._on_set_state),
        )
        for kind, name, callback in services:
            node.create_service(kind, f'~/{name}', self._guarded(name, callback))
        self._action = ActionServer(node, SimulateSteps, '~/simulate_steps',
                                    execute_callback=self._execute,
                                    goal_callback=lambda goal: GoalResponse.ACCEPT,
                                    cancel_callback=lambda goal: CancelResponse.ACCEPT)

    def _guarded(self, name, callback):
        """Answer OPERATION_FAILED, with the error, where a callback fails: never crash."""
        def guarded(request, response):
            try:
                return callback(request, response)
            except Exception as error:  # noqa: B902 (a bug must not take the node down)
                text = (f'{name}: internal error {type(error).__name__}: {error}.  Nothing '
                        'more was done; please report it with this message.')
                self.node.get_logger().error(text)
                response.result = result(Result.RESULT_OPERATION_FAILED, text)
                return response
        return guarded

    @property
    def sim(self):
        """Return the node's Simulator."""
        return self.node.sim

    @property
    def runner(self):
        """Return the node's SimulationRunner."""
        return self.node.runner

    def _log(self, text, level='info'):
        # (rclpy refuses one call site that logs at two severities)
        if level == 'warn':
            self.node.get_logger().warning(text)
        else:
            self.node.get_logger().info(text)

    def _world(self, frame_id, what):
        """None when frame_id names the world ('' or world_frame), else the refusal message."""
        if frame_id in ('', self.node.frames.world_frame):
            return None
        return (f'{what}: frame_id {frame_id!r}: states are given and set in the world frame '
                f'{self.node.frames.world_frame!r}; leave frame_id empty or give it.')

    # -- features -----------------------------------------------------------------------------
    def features(self):
        """Return the SimulatorFeatures codes this node supports now."""
        f = SimulatorFeatures
        codes = [f.ENTITY_STATE_GETTING, f.ENTITY_STATE_SETTING, f.SIMULATION_RESET,
                 f.SIMULATION_RESET_TIME, f.SIMULATION_RESET_STATE,
                 f.SIMULATION_STATE_GETTING, f.SIMULATION_STATE_SETTING,
                 f.SIMULATION_STATE_PAUSE, f.STEP_SIMULATION_SINGLE,
                 f.STEP_SIMULATION_MULTIPLE, f.STEP_SIMULATION_ACTION]
        if self.sim.entities.spawn_refusal is None:
            codes += [f.SPAWNING, f.SPAWNING_RESOURCE_STRING, f.DELETING,
                      f.SIMULATION_RESET_SPAWNED]
        return sorted(codes)

    def _on_features(self, request, response):
        response.features.features = self.features()
        response.features.spawn_formats = (list(SPAWN_FORMATS)
                                           if self.sim.entities.spawn_refusal is None else [])
        refusal = self.sim.entities.spawn_refusal
        response.features.custom_info = (
            "jointsim_ros: entities are the robot's links and the scene objects; spawn takes "
            "URDF or xacro (one rigid body) and YAML shapes in the config's scene keys; name "
            'filters are regular expressions; no tags, categories or bounds (docs/entities.md)'
            + (f'; spawning is off: {refusal}' if refusal else ''))
        return response

    # -- entities -----------------------------------------------------------------------------
    def _filtered(self, filters):
        """Return (names, None) matching the filters, or (None, Result) refusing them."""
        if filters.categories or filters.tags.tags or filters.bounds.points:
            return None, result(Result.RESULT_FEATURE_UNSUPPORTED,
                                'entity filters: this simulator filters by name only (a regular '
                                'expression in filter); leave categories, tags and bounds empty.')
        names = self.sim.entities.names()
        if filters.filter:
            try:
                pattern = re.compile(filters.filter)
            except re.error as error:
                return None, result(Result.RESULT_OPERATION_FAILED,
                                    f'entity filters: {filters.filter!r} is not a regular '
                                    f'expression ({error}); fix it or leave it empty for all.')
            names = [n for n in names if pattern.search(n)]
        return names, None

    def _on_entities(self, request, response):
        names, refusal = self._filtered(request.filters)
        response.result = refusal or result()
        response.entities = names or []
        return response

    def _on_entities_states(self, request, response):
        names, refusal = self._filtered(request.filters)
        response.result = refusal or result()
        if names:
            frame, t = self.node.frames.world_frame, self.sim.time
            response.entities = names
            response.states = [entity_state_message(self.sim.entities.state(n), frame, t)
                               for n in names]
        return response

    def _on_entity_state(self, request, response):
        try:
            state = self.sim.entities.state(request.entity)
        except EntityError as error:
            response.result = result(_CODES[error.kind], str(error))
            return response
        response.state = entity_state_message(state, self.node.frames.world_frame,
                                              self.sim.time)
        response.result = result()
        return response

    def _on_set_entity_state(self, request, response):
        refusal = self._world(request.state.header.frame_id, 'set_entity_state')
        if refusal:
            response.result = result(Result.RESULT_OPERATION_FAILED, refusal)
            return response
        position, quat = pose_values(request.state.pose)
        linear, angular = twist_values(request.state.twist)
        try:
            self.sim.entities.set_state(request.entity, position, quat, linear, angular)
        except EntityError as error:
            code = (SetEntityState.Response.INVALID_POSE if error.kind == 'invalid_pose'
                    else _CODES[error.kind])
            response.result = result(code, str(error))
            return response
        self.node.publish_now()
        response.result = result()
        return response

    # -- spawning -----------------------------------------------------------------------------
    def _on_spawn(self, request, response):
        start = time.perf_counter()
        source = request.uri or request.resource_string
        position, quat = pose_values(request.initial_pose.pose)
        frame = request.initial_pose.header.frame_id
        if frame not in ('', self.node.frames.world_frame):
            # a pose in an entity's frame (its current pose)
            try:
                state = self.sim.entities.state(frame)
            except EntityError:
                response.result = result(
                    Result.RESULT_NOT_FOUND,
                    f'spawn_entity: initial_pose frame_id {frame!r} is neither the world frame '
                    f'{self.node.frames.world_frame!r} nor an entity; give one of them.')
                return response
            rot = quat_to_matrix(state.quat)
            position = tuple(state.position + rot @ position)
            quat = tuple(quat_multiply(state.quat, quat))
        try:
            name = self.sim.entities.spawn(request.name, source, position, quat,
                                           allow_renaming=request.allow_renaming)
        except EntityError as error:
            code = _SPAWN_CODES.get(error.kind, _CODES[error.kind])
            response.result = result(code, str(error))
            self._log(str(error), 'warn')
            return response
        if self.sim.entities.kind(name) == 'robot':
            self.node.robots_changed()
            what = 'a robot, its topics under ' + name + '/'
        else:
            self.node.world_changed()
            link = self.sim.model.links[name]
            what = 'a free body' if link.body >= 0 else 'static geometry'
        elapsed = time.perf_counter() - start
        self._log(f'spawned {name!r} ({what}) at {_text(position)} m in '
                  f'{elapsed * 1e3:.0f} ms')
        response.entity_name = name
        response.result = result()
        return response

    def _on_delete(self, request, response):
        robot = request.entity in self.sim.entities.robot_names()
        try:
            self.sim.entities.delete(request.entity)
        except EntityError as error:
            response.result = result(_CODES[error.kind], str(error))
            return response
        if robot:
            self.node.robots_changed()
        else:
            self.node.world_changed()
        self._log(f'deleted {request.entity!r}')
        response.result = result()
        return response

    # -- stepping, reset, state ---------------------------------------------------------------
    def _on_step(self, request, response):
        response.result = self.step(int(request.steps))
        return response

    def step(self, steps):
        """Step ``steps`` while paused; return the Result."""
        if self._goal is not None:
            return result(Result.RESULT_OPERATION_FAILED, 'step_simulation: a simulate_steps '
                          'goal is stepping; wait for it or cancel it.')
        if steps < 1:
            return result(Result.RESULT_OPERATION_FAILED, 'step_simulation: steps is 0; ask for '
                          'at least one step.')
        ok, message = self.runner.step_paused(steps)
        self.node.publish_now()
        if not ok:
            return result(Result.RESULT_OPERATION_FAILED, f'step_simulation {message}')
        self.stopped = False
        return result(message=message)

    def _on_reset(self, request, response):
        response.result = self.reset(request.scope)
        return response

    def reset(self, scope):
        """Reset by ``scope`` (ResetSimulation's bits; 0 = all); return the Result."""
        if scope == ResetSimulation.Request.SCOPE_DEFAULT:
            scope = ResetSimulation.Request.SCOPE_ALL
        if scope != ResetSimulation.Request.SCOPE_ALL and scope & ~SCOPE_KNOWN:
            return result(Result.RESULT_FEATURE_UNSUPPORTED,
                          f'reset_simulation: scope {scope} has bits this simulator does not '
                          'know; use SCOPE_TIME (1), SCOPE_STATE (2), SCOPE_SPAWNED (4), their '
                          'sum, or SCOPE_ALL.')
        done = []
        if scope & ResetSimulation.Request.SCOPE_SPAWNED:
            robots = list(self.sim.entities.spawned_robots)
            gone = self.sim.entities.delete_spawned()
            if robots:
                self.node.robots_changed()
            elif gone:
                self.node.world_changed()
            done.append(f'{len(gone)} spawned object(s) removed')
        if scope & ResetSimulation.Request.SCOPE_STATE:
            self.runner.reset(keep_time=not scope & ResetSimulation.Request.SCOPE_TIME)
            done.append('state back to the initial state')
        if scope & ResetSimulation.Request.SCOPE_TIME:
            if not scope & ResetSimulation.Request.SCOPE_STATE:
                self.sim.reset_time()
            done.append('time to 0')
        self.node.publish_now()
        message = 'reset: ' + ', '.join(done)
        self._log(message)
        return result(message=message)

    def state(self):
        """Return the SimulationState code now."""
        if self.stopped:
            return SimulationState.STATE_STOPPED
        if self.runner.paused:
            return SimulationState.STATE_PAUSED
        return SimulationState.STATE_PLAYING

    def _on_get_state(self, request, response):
        response.state.state = self.state()
        response.result = result()
        return response

    def _on_set_state(self, request, response):
        response.result = self.set_state(request.state.state)
        return response

    def set_state(self, target):
        """Go to SimulationState ``target``; return the Result."""
        now = self.state()
        reply = SetSimulationState.Response
        if target not in _STATE_NAMES:
            return result(Result.RESULT_OPERATION_FAILED,
                          f'set_simulation_state: {target} is not a SimulationState.')
        if target == now:
            return result(reply.ALREADY_IN_TARGET_STATE,
                          f'set_simulation_state: already {_STATE_NAMES[target]}.')
        if target == SimulationState.STATE_PLAYING:
            message = self.runner.resume()
            if self.sim.diverged:
                self.runner.pause()
                return result(reply.STATE_TRANSITION_ERROR,
                              f'set_simulation_state: cannot play: {self.sim.diverged}  Reset '
                              'first (reset_simulation).')
            self.stopped = False
        elif target == SimulationState.STATE_PAUSED:
            message = self.runner.pause()
            self.stopped = False
        elif target == SimulationState.STATE_STOPPED:
            self.runner.pause()
            self.reset(ResetSimulation.Request.SCOPE_ALL)
            self.stopped = True
            message = 'stopped: paused and reset to the start'
        elif target == SimulationState.STATE_QUITTING:
            self.runner.pause()
            self.node.request_quit()
            message = 'quitting: the node shuts down'
        else:
            return result(reply.INCORRECT_TRANSITION,
                          f'set_simulation_state: {_STATE_NAMES[target]} is not a state this '
                          'simulator goes to (it has one world, always loaded).')
        self._log(message)
        return result(message=message)

    # -- the simulate_steps action ------------------------------------------------------------
    async def _execute(self, goal_handle):
        steps = int(goal_handle.request.steps)
        refusal = None
        if self._goal is not None:
            refusal = 'simulate_steps: another goal is stepping; wait for it or cancel it.'
        elif not self.runner.paused:
            refusal = ('simulate_steps: the simulation is playing; pause it first '
                       '(set_simulation_state STATE_PAUSED).')
        elif steps < 1:
            refusal = 'simulate_steps: steps is 0; ask for at least one step.'
        elif self.sim.diverged:
            refusal = f'simulate_steps: {self.sim.diverged}  Reset first.'
        if refusal is not None:
            goal_handle.abort()
            return SimulateSteps.Result(result=result(Result.RESULT_OPERATION_FAILED, refusal))
        future = Future()
        self._goal = [goal_handle, steps, 0, future]
        outcome, message = await future
        self._goal = None
        if outcome == 'canceled':
            goal_handle.canceled()
            code = Result.RESULT_OK
        elif outcome == 'done':
            goal_handle.succeed()
            code = Result.RESULT_OK
        else:
            goal_handle.abort()
            code = Result.RESULT_OPERATION_FAILED
        return SimulateSteps.Result(result=result(code, message))

    def tick(self):
        """Advance a running simulate_steps goal by one chunk (from the node's tick)."""
        if self._goal is None:
            return
        handle, steps, done, future = self._goal
        if future.done():
            return
        if handle.is_cancel_requested:
            future.set_result(('canceled', f'canceled after {done} of {steps} steps'))
            return
        if not self.runner.paused:
            future.set_result(('aborted', f'simulate_steps: the simulation was played after '
                                          f'{done} of {steps} steps; the goal stops there.'))
            return
        chunk = min(steps - done, self.node.settings.steps_per_publish)
        ok, message = self.runner.step_paused(chunk)
        self.node.publish_now()
        if not ok:
            future.set_result(('aborted', f'simulate_steps {message}'))
            return
        done += chunk
        self._goal[2] = done
        self.stopped = False
        handle.publish_feedback(SimulateSteps.Feedback(completed_steps=done,
                                                       remaining_steps=steps - done))
        if done >= steps:
            future.set_result(('done', f'simulated {steps} steps to t = '
                                       f'{self.sim.time:.6f} s'))

    def destroy(self):
        """Destroy the action server (before the node)."""
        self._action.destroy()


def _text(v):
    return '(' + ', '.join(f'{float(x):.3f}' for x in v) + ')'
