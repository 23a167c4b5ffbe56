"""
Run a Simulator against a wall clock: pacing, commands, watchdog, pause/step/reset, statistics.

Everything the ROS node does besides talking ROS lives here, so that it is plain Python and can
be tested without DDS.  The node calls :meth:`SimulationRunner.tick` from its timer and turns
the state into messages (``ros_messages``); this module never imports rclpy and never touches
the physics except through the :class:`~jointsim_ros.Simulator` facade.

Pacing (``real_time_factor`` > 0): the simulation time due at wall time ``now`` is
``(now - anchor) * real_time_factor`` past the anchor's simulation time; each tick takes every
step that is due in one ``Simulator.step(n)`` call.  A tick never takes more than
``MAX_CATCH_UP_TICKS`` ticks' worth of steps: when more are due (the machine or the executor was
late), the rest of the lag is dropped (the anchor moves to now) and reported, so that the
simulation falls behind the wall clock instead of bursting.  ``real_time_factor`` 0 means as
fast as possible: every tick takes one publish period of steps.
"""
from dataclasses import dataclass
import math
import time

from ..errors import CommandError, DivergenceError

#: Largest number of ticks' worth of steps one tick takes when it is late.
MAX_CATCH_UP_TICKS = 4


@dataclass(frozen=True)
class RunSettings:
    """
    How the node runs the simulation (ROS parameters of the same names, docs/node.md).

    Attributes:
        physics_rate: physics steps per simulated second, Hz (dt = 1 / physics_rate).
        publish_rate: ticks per wall-clock second, Hz: each tick steps and publishes once.
        real_time_factor: simulated seconds per wall-clock second; 0 = as fast as possible.
        command_timeout: wall-clock seconds without a command of a kind after which that kind is
            zeroed; 0 disables the watchdog.
        catch_up_ticks: a late tick takes at most this many ticks' worth of steps; the rest of
            the lag is dropped (1: a controller in the loop keeps its period).
    """

    physics_rate: float = 1000.0
    publish_rate: float = 100.0
    real_time_factor: float = 1.0
    command_timeout: float = 0.5
    catch_up_ticks: float = MAX_CATCH_UP_TICKS

    @property
    def tick_period(self):
        """Wall-clock period of the node's timer, s (0 when running as fast as possible)."""
        return 0.0 if self.real_time_factor == 0.0 else 1.0 / self.publish_rate

    @property
    def steps_per_publish(self):
        """Physics steps in one publish period of simulated time (at least 1)."""
        return max(1, int(round(self.physics_rate / self.publish_rate)))

    @property
    def max_steps_per_tick(self):
        """Cap on the steps one tick takes (bounded catch-up)."""
        if self.real_time_factor == 0.0:
            return self.steps_per_publish
        nominal = self.real_time_factor * self.physics_rate / self.publish_rate
        return max(1, int(math.ceil(self.catch_up_ticks * nominal)))


class CommandChannel:
    """
    One kind of joint command (efforts, voltages): its joints, its setter and its watchdog.

    Attributes:
        kind: 'effort' or 'voltage' (used in messages).
        unit: unit of the values, for messages.
        joints: names of the joints in the order of the array form of the command.
        apply: callable dict name -> value, the facade's setter; raises CommandError; may return
            a dict of joints whose value it clipped.
        accepts: all joint names the named form may use (``joints`` unless given).
        last_command: wall-clock time of the last accepted command, or None.
        holding: True while a non-zero command may be held (the watchdog is armed).
    """

    def __init__(self, kind, unit, joints, apply, accepts=None):
        self.kind = kind
        self.unit = unit
        self.joints = tuple(joints)
        self.apply = apply
        self.accepts = frozenset(self.joints if accepts is None else accepts)
        self.last_command = None
        self.holding = False

    def zero(self):
        """Set every joint of the channel to 0."""
        if self.joints:
            self.apply(dict.fromkeys(self.joints, 0.0))
        self.holding = False


@dataclass
class WindowStats:
    """Statistics over one reporting window (reset by :meth:`SimulationRunner.take_stats`)."""

    wall_start: float
    sim_start: float
    steps: int = 0
    step_calls: int = 0
    step_wall: float = 0.0
    max_step_wall: float = 0.0
    iterations_sum: int = 0
    iterations_max: int = 0
    budget_stops: int = 0
    dropped: float = 0.0


@dataclass(frozen=True)
class Stats:
    """
    What :meth:`SimulationRunner.take_stats` reports for the window since the last call.

    Attributes:
        wall: wall-clock length of the window, s.
        sim_time: simulated time now, s.
        real_time_factor: simulated time advanced / wall time of the window.
        target_real_time_factor: the setting (0 = as fast as possible).
        steps: physics steps taken in the window.
        step_time_mean, step_time_max: wall time per physics step (mean over the window; the
            largest per-step mean of one ``step(n)`` call), s.
        iterations_mean, iterations_max: solver velocity iterations of the last step of each
            call.
        budget_stops: calls whose last step stopped on the solver's time budget.
        dropped: simulated time not simulated because the tick was too late (bounded catch-up).
        dropped_total: the same since the start.
        paused: True when paused.
        diverged: None, or why the simulation stopped stepping.
    """

    wall: float
    sim_time: float
    real_time_factor: float
    target_real_time_factor: float
    steps: int
    step_time_mean: float
    step_time_max: float
    iterations_mean: float
    iterations_max: int
    budget_stops: int
    dropped: float
    dropped_total: float
    paused: bool
    diverged: object


class RobotCommands:
    """
    One robot's commands: its channels (efforts, voltages), trajectories and watchdog.

    A world's robots each have their own (``SimulationRunner.robots``): a robot whose commands
    stop is zeroed by its own watchdog, the others keep theirs.

    Args:
        robot: the Simulator, or a world robot's ``sim.robots[NAME]`` (RobotView): its
            joint_names, drive_names, set_joint_efforts, set_voltages, joint_positions and
            prescribed, on its own names.
        clock: callable returning wall-clock seconds (monotonic).
        followers: its mimic joints (no effort command).
        name: the robot's name in the world ('' for the one robot of a node).

    Attributes:
        channels: dict kind -> CommandChannel.
    """

    def __init__(self, robot, clock, followers=(), name=''):
        self.robot = robot
        self.name = name
        self._clock = clock
        self.channels = {}
        followers = set(followers)
        self.add_channel(CommandChannel(
            'effort', 'N m or N', [n for n in robot.joint_names if n not in followers],
            robot.set_joint_efforts))
        self.add_channel(CommandChannel('voltage', 'V', robot.drive_names, robot.set_voltages))

    def add_channel(self, channel):
        """Register a command channel (one per kind)."""
        self.channels[channel.kind] = channel

    def rebind(self, robot):
        """Command ``robot`` from now on (the same robot's view after a world was rebuilt)."""
        self.robot = robot
        setters = {'effort': robot.set_joint_efforts, 'voltage': robot.set_voltages}
        for kind, channel in self.channels.items():
            if kind in setters:
                channel.apply = setters[kind]

    def command(self, kind, values):
        """
        Apply a named command; joints not named keep their value.

        Args:
            kind: channel kind, 'effort' or 'voltage'.
            values: dict joint name -> value.

        Returns:
            dict of joints whose value the facade clipped (empty when none).

        Raises:
            CommandError: unknown joint, a joint the channel does not command, or a value that
                is not finite; nothing is changed.
        """
        channel = self.channels[kind]
        for name in values:
            if name not in channel.accepts and name in self.robot.joint_names:
                raise CommandError(
                    f'{kind} command: joint {name!r} takes no {kind} command (the joints that '
                    f'do: {", ".join(channel.joints) or "(none)"}).  Nothing was changed.')
        clipped = channel.apply(dict(values)) or {}
        channel.last_command = self._clock()
        channel.holding = True
        return clipped

    def command_array(self, kind, values):
        """
        Apply a command giving one value per joint of the channel, in its announced order.

        Raises:
            CommandError: wrong length or a non-finite value; nothing is changed.
        """
        channel = self.channels[kind]
        values = list(values)
        if len(values) != len(channel.joints):
            raise CommandError(
                f'{kind} command: {len(values)} values given, {len(channel.joints)} expected, '
                f'one per joint in this order: {", ".join(channel.joints) or "(none)"}.  '
                f'Nothing was changed.')
        return self.command(kind, dict(zip(channel.joints, values)))

    def command_trajectory(self, names, times, positions, start_time=None):
        """
        Prescribe the motion of some joints from trajectory samples, or release them.

        The third kind of command beside efforts and voltages (``command``): the joints follow
        a clamped cubic spline through the samples (``Simulator.prescribed.joints``,
        docs/prescribed.md).  A trajectory is not held against a watchdog: outside its samples a
        joint holds the end position.

        Args:
            names: m joint names.
            times: (n,) sample times, s, strictly increasing, relative to ``start_time``; None
                releases the named joints (all prescribed joints of the robot when ``names`` is
                empty).
            positions: (n, m) joint positions, rad or m.
            start_time: simulated time of times = 0, s (default: now).

        Raises:
            CommandError: unknown joint, bad samples; nothing is changed.
        """
        robot = self.robot
        if times is None:
            robot.prescribed.release_joints(names or None)
            return
        times, positions = list(times), list(positions)
        if times[0] > 0.0:
            # a ROS trajectory starts from where the joints are
            current = dict(zip(robot.joint_names, robot.joint_positions()))
            times = [0.0] + times
            positions = [[current.get(n, 0.0) for n in names]] + positions
        robot.prescribed.joints(times, positions, joints=names, start_time=start_time)

    def watchdog(self, now, timeout, report):
        """Zero each channel whose last command is older than ``timeout`` s; ``report`` it."""
        whose, key = (f"robot '{self.name}': ", f'watchdog_{self.name}_') if self.name else \
            ('', 'watchdog_')
        for channel in self.channels.values():
            if channel.holding and now - channel.last_command > timeout:
                channel.zero()
                report(key + channel.kind, 'warn',
                       f'{whose}no {channel.kind} command for {timeout:g} s: {channel.kind}s '
                       f'set to 0 until the next command.')

    def zero(self):
        """Set every command to 0 (a reset)."""
        for channel in self.channels.values():
            channel.zero()


class SimulationRunner:
    """
    Steps a Simulator in real time and holds the node's run state.

    Args:
        sim: the Simulator (its ``dt`` is ``1 / settings.physics_rate``).
        settings: RunSettings.
        report: callable (key, level, text) for events worth a log line: key names the kind of
            event (for throttling), level is 'info', 'warn' or 'error'.
        clock: callable returning wall-clock seconds (monotonic).

    Attributes:
        robots: dict robot name -> RobotCommands: one per robot of a world (``sim.robots``),
            or ``{'': ...}`` on the Simulator itself for one robot.  ``channels``,
            ``command``, ``command_array`` and ``command_trajectory`` are the first robot's.
    """

    def __init__(self, sim, settings, report=None, clock=time.monotonic):
        self.sim = sim
        self.settings = settings
        self._report = report or (lambda key, level, text: None)
        self._clock = clock
        self.paused = False
        self.state_version = 0  # changes whenever the published state would change
        self.dropped_total = 0.0
        if sim.robots:
            self.robots = {name: RobotCommands(view, clock, view.mimic_joints, name)
                           for name, view in sim.robots.items()}
        else:
            followers = {j.name for j in sim.model.joints if j.mimic is not None}
            self.robots = {'': RobotCommands(sim, clock, followers)}
        first = next(iter(self.robots.values()))
        self.channels = first.channels
        self.add_channel = first.add_channel
        self.command = first.command
        self.command_array = first.command_array
        self.command_trajectory = first.command_trajectory
        self._anchor_wall = None  # set by the first tick
        self._anchor_steps = 0
        self._window = WindowStats(self._clock(), sim.time)
        # external wrenches due at a simulated time: [(time s, link, force, torque)], sorted
        self._wrenches = []

    @property
    def clock(self):
        """Return the wall clock the runner reads (a callable returning seconds)."""
        return self._clock

    def _anchor(self, now):
        self._anchor_wall = now
        self._anchor_steps = 0

    def _watchdog(self, now):
        timeout = self.settings.command_timeout
        if timeout <= 0.0:
            return
        for commands in self.robots.values():
            commands.watchdog(now, timeout, self._report)

    # -- stepping -----------------------------------------------------------------------------
    def tick(self):
        """
        Run one timer tick: watchdog, then every physics step that is due.

        Returns:
            number of steps taken.
        """
        now = self._clock()
        self._watchdog(now)
        if self.paused or self.sim.diverged or self._anchor_wall is None:
            self._anchor(now)
            return 0
        settings = self.settings
        if settings.real_time_factor == 0.0:
            n = settings.steps_per_publish
        else:
            due = int(math.floor((now - self._anchor_wall) * settings.real_time_factor
                                 * settings.physics_rate + 1e-9))
            n = due - self._anchor_steps
            if n > settings.max_steps_per_tick:
                dropped = (n - settings.max_steps_per_tick) / settings.physics_rate
                n = settings.max_steps_per_tick
                self._anchor(now)
                self._anchor_steps = -n  # the n steps below bring the anchor to 0
                self.dropped_total += dropped
                self._window.dropped += dropped
                self._report('lag', 'warn',
                             f'simulation fell {dropped * 1e3:.1f} ms of simulated time behind '
                             f'the wall clock and dropped it (real_time_factor '
                             f'{settings.real_time_factor:g} is more than this machine keeps up '
                             f'with).')
        if n <= 0:
            return 0
        self._anchor_steps += self._step(n)
        return n

    def schedule_wrench(self, link, force, torque, at=None):
        """
        Hold an external wrench on a link from simulated time ``at`` (None: now) until changed.

        The steps are split at ``at``, so the wrench starts within a step of it whatever the
        tick.  Raises CommandError (nothing scheduled) for an unknown or world-fixed link or
        non-finite values, as ``Simulator.set_link_wrench``.
        """
        if at is None or at <= self.sim.time + 0.5 * self.sim.dt:
            self.sim.set_link_wrench(link, force, torque)
            return
        self.sim.checked_wrench(link, force, torque, 'link_wrench')     # refused now, not later
        self._wrenches.append((float(at), link, tuple(force), tuple(torque)))
        self._wrenches.sort(key=lambda item: item[0])

    def _step(self, n):
        """Take n steps in as few facade calls as the scheduled wrenches allow."""
        taken = 0
        while taken < n:
            chunk = n - taken
            while self._wrenches and self._wrenches[0][0] <= self.sim.time + 0.5 * self.sim.dt:
                _, link, force, torque = self._wrenches.pop(0)
                self.sim.set_link_wrench(link, force, torque)
            if self._wrenches:
                due = int(math.ceil((self._wrenches[0][0] - self.sim.time) / self.sim.dt - 0.5))
                chunk = max(1, min(chunk, due))
            done = self._step_chunk(chunk)
            taken += done
            if done < chunk or self.sim.diverged:
                break
        return taken

    def _step_chunk(self, n):
        """Take n steps in one facade call; record statistics; stop on divergence."""
        start = time.perf_counter()
        try:
            report = self.sim.step(n)
        except DivergenceError as error:
            self.state_version += 1
            self._report('divergence', 'error', f'{error}  Call the reset service to go on.')
            return n
        wall = time.perf_counter() - start
        window = self._window
        window.steps += report.steps
        window.step_calls += 1
        window.step_wall += wall
        window.max_step_wall = max(window.max_step_wall, wall / max(1, report.steps))
        window.iterations_sum += report.iterations
        window.iterations_max = max(window.iterations_max, report.iterations)
        window.budget_stops += report.stop_reason == 'time_budget'
        self.state_version += 1
        return report.steps

    # -- services -----------------------------------------------------------------------------
    def pause(self):
        """Stop stepping; return a message for the caller."""
        was = self.paused
        self.paused = True
        return (f'already paused at t = {self.sim.time:.3f} s' if was
                else f'paused at t = {self.sim.time:.3f} s')

    def resume(self):
        """Resume stepping from now (the paused wall time is not caught up)."""
        was = self.paused
        self.paused = False
        self._anchor(self._clock())
        if self.sim.diverged:
            return f'resumed, but the simulation has diverged: call reset ({self.sim.diverged})'
        return (f'resumed at t = {self.sim.time:.3f} s' if was
                else f'already running at t = {self.sim.time:.3f} s')

    def step_paused(self, n):
        """
        Take n steps while paused.

        Returns:
            (success, message).
        """
        if not self.paused:
            return False, 'refused: the simulation is running; call pause first.'
        if self.sim.diverged:
            return False, f'refused: {self.sim.diverged}'
        self._step(n)
        if self.sim.diverged:
            return False, f'stepped until divergence: {self.sim.diverged}'
        return True, f'stepped {n} steps to t = {self.sim.time:.6f} s'

    def reset(self, keep_time=False):
        """
        Return to the initial state with every command at 0; keep paused or running.

        Args:
            keep_time: leave the simulated time where it is (reset_simulation's SCOPE_STATE
                without SCOPE_TIME).
        """
        self.sim.reset(keep_time=keep_time)
        for commands in self.robots.values():
            commands.zero()
        # wrenches scheduled for the future stay scheduled (a pusher may have sent them before
        # a controller's reset); those already applied were cleared by the reset
        self._anchor(self._clock())
        self.state_version += 1
        return (f'reset to the initial state (t = {self.sim.time:g}), '
                f'{"paused" if self.paused else "running"}')

    # -- statistics ---------------------------------------------------------------------------
    def take_stats(self):
        """Return the Stats of the window since the last call and start a new window."""
        now = self._clock()
        w = self._window
        wall = now - w.wall_start
        sim_time = self.sim.time
        advanced = sim_time - w.sim_start if sim_time >= w.sim_start else sim_time
        calls = max(1, w.step_calls)
        stats = Stats(
            wall=wall, sim_time=sim_time,
            real_time_factor=advanced / wall if wall > 0 else 0.0,
            target_real_time_factor=self.settings.real_time_factor, steps=w.steps,
            step_time_mean=w.step_wall / w.steps if w.steps else 0.0,
            step_time_max=w.max_step_wall, iterations_mean=w.iterations_sum / calls,
            iterations_max=w.iterations_max, budget_stops=w.budget_stops, dropped=w.dropped,
            dropped_total=self.dropped_total, paused=self.paused, diverged=self.sim.diverged)
        self._window = WindowStats(now, sim_time)
        return stats
