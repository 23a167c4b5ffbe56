"""
Load the robot the node simulates: description, config and Simulator from the node's parameters.

The robot description is read once (:func:`~jointsim_ros.description.parse_urdf`, which runs
xacro once): the model, the URDF tree for TF, the ``robot_description`` text and the
``<ros2_control>`` tags all come from that one read.  Plain Python, no rclpy: the node calls
:func:`load_robot` at start-up, and tests call it directly.
"""
from dataclasses import dataclass, replace
import os

from .simulator import Simulator
from .. import resources
from ..description import build_model, load_config, parse_urdf, ros2_control
from ..description.config import with_formulation
from ..description.world import build_world, load_world as read_world
from ..errors import DescriptionError

#: Fraction of the physics period given to one solve as wall-clock budget under the node.
SOLVER_BUDGET_FRACTION = 0.5


@dataclass(frozen=True)
class LoadedRobot:
    """
    What :func:`load_robot` gives the node.

    Attributes:
        sim: the Simulator, dt = 1 / physics_rate.
        urdf_xml: URDF XML text to publish on ``robot_description`` (xacro expanded).
        urdf_robot: the ``urdf_parser_py`` Robot (URDF tree for TF).
        notes: sentences for the start-up log (what was chosen or overridden).
        ros2_control: tuple of the description's ``Ros2ControlSystem`` tags.
        ros2_control_problems: sentences, what those tags ask that the node cannot give.
    """

    sim: object
    urdf_xml: str
    urdf_robot: object
    notes: tuple
    ros2_control: tuple = ()
    ros2_control_problems: tuple = ()


@dataclass(frozen=True)
class LoadedWorldRobot:
    """
    One robot of a loaded world, as the node serves it (its namespace ``NAME/``).

    Attributes:
        name: its name in the world.
        view: ``sim.robots[NAME]``, the robot methods on its own names.
        urdf_xml: its own URDF XML text (xacro expanded), for its ``robot_description``.
        ros2_control: tuple of its description's ``Ros2ControlSystem`` tags.
        ros2_control_problems: sentences, what those tags ask that the node cannot give.
    """

    name: str
    view: object
    urdf_xml: str
    ros2_control: tuple = ()
    ros2_control_problems: tuple = ()


@dataclass(frozen=True)
class LoadedWorld:
    """
    What :func:`load_world` gives the node.

    Attributes:
        sim: the Simulator of every robot, dt = 1 / physics_rate.
        robots: tuple of LoadedWorldRobot, in the world file's order.
        notes: sentences for the start-up log.
    """

    sim: object
    robots: tuple
    notes: tuple


def _node_timing(config, physics_rate, notes, what):
    """Return ``config`` with dt = 1 / physics_rate and the solver's wall-clock budget set."""
    dt = 1.0 / physics_rate
    if 'dt' in config.given_keys and abs(config.dt - dt) > 1e-15:
        notes.append(f'{what} dt {config.dt:g} s replaced by 1 / physics_rate = {dt:g} s')
    solver = config.solver
    if solver.time_budget == 0.0:
        solver = replace(solver, time_budget=SOLVER_BUDGET_FRACTION * dt)
    return replace(config, dt=dt, solver=solver)


def load_world(world_file, physics_rate=1000.0, formulation=''):
    """
    Build the Simulator of a world file (several robots, docs/node.md "Worlds").

    As :func:`load_robot`: the world's ``dt`` is replaced by ``1 / physics_rate`` and a
    ``solver.time_budget`` of 0 becomes ``SOLVER_BUDGET_FRACTION / physics_rate``;
    ``formulation`` replaces the world's ``solver.formulation``.

    Args:
        world_file: path of a world YAML file (config/two_arms.world.yaml).
        physics_rate: Hz.
        formulation: '' (the world's), 'maximal' or 'tree'.

    Returns:
        LoadedWorld.

    Raises:
        DescriptionError, ConfigError: one line naming the robot, key or file.
    """
    world = read_world(os.path.expanduser(world_file))
    notes = [f'{world.source}: robots {", ".join(r.name for r in world.robots)}']
    notes += list(world.notes)
    config = _node_timing(with_formulation(world.config, formulation), physics_rate, notes,
                          'world')
    world = replace(world, config=config)
    model, sim_config = build_world(world)
    sim = Simulator(model, sim_config, world=world)
    robots = []
    for robot in world.robots:
        view = sim.robots[robot.name]
        description = robot.description
        notes.extend(f'{robot.name}: {ros2_control.summary(system)}'
                     for system in description.ros2_control)
        problems = ros2_control.check(description.ros2_control, view.joint_names,
                                      view.drive_names)
        robots.append(LoadedWorldRobot(robot.name, view, description.xml,
                                       description.ros2_control,
                                       tuple(f'{robot.name}: {p}' for p in problems)))
    return LoadedWorld(sim, tuple(robots), tuple(notes))


def load_robot(robot_description='', robot_description_file='', config_file='',
               physics_rate=1000.0, formulation=''):
    """
    Build the Simulator from the node's parameters.

    The config's ``dt`` is replaced by ``1 / physics_rate``; a ``solver.time_budget`` of 0 (the
    default: none) becomes ``SOLVER_BUDGET_FRACTION / physics_rate`` so that one slow solve
    cannot stall the wall-clock loop.  Neither description given: the bundled arm with its
    config (``config/jointsim_arm.yaml``) unless ``config_file`` names another.

    Args:
        robot_description: URDF XML text, or ''.
        robot_description_file: path of a .urdf or .xacro file, or ''.
        config_file: simulator YAML path, or '' for the defaults.
        physics_rate: Hz.
        formulation: '' (the config's ``solver.formulation``), 'maximal' or 'tree'.

    Returns:
        LoadedRobot.

    Raises:
        DescriptionError, ConfigError: with the message for the user.
    """
    notes = []
    if robot_description.strip() and robot_description_file.strip():
        raise DescriptionError(
            'both robot_description and robot_description_file are set; give one of them '
            '(robot_description holds the URDF XML text, robot_description_file a path).')
    if robot_description.strip():
        source = robot_description
        notes.append('robot from the robot_description parameter')
    elif robot_description_file.strip():
        source = os.path.expanduser(robot_description_file)
        notes.append(f'robot from {source}')
    else:
        source = str(resources.share_file(*resources.DEFAULT_ROBOT))
        if not config_file:
            config_file = str(resources.share_file(*resources.DEFAULT_CONFIG))
        notes.append(f'no robot_description given: the bundled arm {source}')
    config = with_formulation(
        load_config(os.path.expanduser(config_file) if config_file else None), formulation)
    notes.append(f'config: {config.source}')
    config = _node_timing(config, physics_rate, notes, 'config')
    # one read of the description (xacro runs once): the model, the TF tree, the
    # robot_description text and the ros2_control tags all come from it
    description = parse_urdf(source)
    sim = Simulator(build_model(description, config), config, description)
    notes.extend(ros2_control.summary(system) for system in description.ros2_control)
    problems = ros2_control.check(description.ros2_control, sim.joint_names, sim.drive_names)
    return LoadedRobot(sim, description.xml, description.robot, tuple(notes),
                       description.ros2_control, tuple(problems))
