"""
Launch jointsim_node on a world of several robots, with the browser view showing them all.

    ros2 launch jointsim_ros world.launch.py
    ros2 launch jointsim_ros world.launch.py world_file:=/path/to/my.world.yaml view:=false
    ros2 launch jointsim_ros world.launch.py formulation:=tree      # exact joints (docs/tree.md)
    ros2 launch jointsim_ros world.launch.py controllers:=true      # the two arms move

The node reads the world file (robots, each with its description, config and pose) and serves
each robot under its name: ``/NAME/joint_states``, ``/NAME/joint_voltage_commands``,
``/NAME/robot_description`` and so on, its TF frames ``NAME/link`` (docs/node.md, "Worlds:
several robots").  ``controllers:=true`` starts the example controller in the namespaces
``left`` and ``right``, the robots of the default world config/two_arms.world.yaml; for
another world, start a controller per robot with ``-r __ns:=/NAME``.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description: arguments, the node, the view and the controllers."""
    share = FindPackageShare('jointsim_ros')
    world_file = LaunchConfiguration('world_file')
    view = LaunchConfiguration('view')
    controllers = LaunchConfiguration('controllers')
    use_sim_time = LaunchConfiguration('use_sim_time')
    # a string even when empty (launch_ros reads a bare substitution as YAML)
    formulation = ParameterValue(LaunchConfiguration('formulation'), value_type=str)

    return LaunchDescription([
        DeclareLaunchArgument(
            'world_file',
            default_value=PathJoinSubstitution([share, 'config', 'two_arms.world.yaml']),
            description='World file (YAML): the robots, each with its description, config and '
                        'pose, and the world settings; its dt is replaced by 1 / physics_rate.'),
        DeclareLaunchArgument(
            'formulation', default_value='',
            description="Replaces the world's solver.formulation: maximal or tree (exact "
                        "joints in generalized coordinates, docs/tree.md); empty: the world's."),
        DeclareLaunchArgument(
            'view', default_value='true',
            description='Start jointsim_view, the browser view of every robot (it prints its '
                        'URL).'),
        DeclareLaunchArgument(
            'controllers', default_value='false',
            description='Start jointsim_example_controller in the namespaces left and right '
                        '(the robots of config/two_arms.world.yaml).'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            description='The nodes follow the simulated time on /clock (the simulator steps '
                        'on the wall clock in any case, and publishes /clock).'),

        Node(
            package='jointsim_ros',
            executable='jointsim_node',
            name='jointsim_node',
            output='screen',
            parameters=[{
                'world_file': world_file,
                'publish_clock': True,
                'formulation': formulation,
                'use_sim_time': use_sim_time,
            }],
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_view',
            name='jointsim_view',
            output='screen',
            condition=IfCondition(view),
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_example_controller',
            name='jointsim_example_controller',
            namespace='left',
            output='screen',
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(controllers),
        ),
        Node(
            package='jointsim_ros',
            executable='jointsim_example_controller',
            name='jointsim_example_controller',
            namespace='right',
            output='screen',
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(controllers),
        ),
    ])
