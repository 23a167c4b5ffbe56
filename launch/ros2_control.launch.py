"""
Run ros2_control controllers against jointsim_node on the bundled arm (docs/ros2_control.md).

    ros2 launch jointsim_ros ros2_control.launch.py
    ros2 launch jointsim_ros ros2_control.launch.py command_interface:=effort \
        controller:=forward_effort_controller

Needs ros2_control, ros2_controllers and ros-controls' topic_based_hardware_interfaces
(joint_state_topic_hardware_interface) besides this package.  The pieces:

- jointsim_node, in the namespace ``sim`` (its own joint_states is /sim/joint_states, so that
  /joint_states is joint_state_broadcaster's), with TF and robot_description left to
  robot_state_publisher.  It reads the <ros2_control> tag of the description and serves the
  topic-based interface's /robot_joint_commands and /robot_joint_states.
- ros2_control_node (controller_manager) loading that interface from the same tag, with
  config/jointsim_arm_controllers.yaml; spawners start joint_state_broadcaster and one command
  controller.
- robot_state_publisher (TF from /joint_states) and rviz2.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description: simulator, controller manager, spawners, TF, rviz2."""
    share = FindPackageShare('jointsim_ros')
    command_interface = LaunchConfiguration('command_interface')
    controller = LaunchConfiguration('controller')
    rviz = LaunchConfiguration('rviz')
    use_sim_time = LaunchConfiguration('use_sim_time')
    # a string even when empty (launch_ros reads a bare substitution as YAML)
    formulation = ParameterValue(LaunchConfiguration('formulation'), value_type=str)
    robot_description = ParameterValue(Command([
        'xacro ', PathJoinSubstitution([share, 'config', 'jointsim_arm_ros2_control.urdf.xacro']),
        ' command_interface:=', command_interface]), value_type=str)
    controllers = PathJoinSubstitution([share, 'config', 'jointsim_arm_controllers.yaml'])

    return LaunchDescription([
        DeclareLaunchArgument(
            'command_interface', default_value='position',
            description='The command interface of every joint in the <ros2_control> tag: '
                        'position, velocity or effort.'),
        DeclareLaunchArgument(
            'controller', default_value='forward_position_controller',
            description='The command controller to start (config/jointsim_arm_controllers.yaml);'
                        ' its interface must be command_interface.'),
        DeclareLaunchArgument(
            'formulation', default_value='',
            description="Replaces the config's solver.formulation: maximal or tree (exact "
                        "joints in generalized coordinates, docs/tree.md); empty: the config's."),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start rviz2 with rviz/jointsim.rviz.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='true',
            description='The nodes follow the simulated time on /clock.'),

        Node(
            package='jointsim_ros',
            executable='jointsim_node',
            name='jointsim_node',
            namespace='sim',
            output='screen',
            parameters=[{
                'robot_description': robot_description,
                'config_file': PathJoinSubstitution([share, 'config', 'jointsim_arm.yaml']),
                'publish_tf': False,
                'publish_robot_description': False,
                'publish_clock': True,
                'formulation': formulation,
                'use_sim_time': use_sim_time,
            }],
        ),
        Node(
            package='controller_manager',
            executable='ros2_control_node',
            output='screen',
            # humble reads robot_description as a parameter, jazzy and later from the topic
            parameters=[controllers, {'robot_description': robot_description,
                                      'use_sim_time': use_sim_time}],
            remappings=[('~/robot_description', '/robot_description')],
        ),
        Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            output='log',
            parameters=[{'robot_description': robot_description,
                         'use_sim_time': use_sim_time}],
        ),
        Node(
            package='controller_manager',
            executable='spawner',
            arguments=['joint_state_broadcaster'],
            output='screen',
        ),
        Node(
            package='controller_manager',
            executable='spawner',
            arguments=[controller],
            output='screen',
        ),
        Node(
            package='rviz2',
            executable='rviz2',
            arguments=['-d', PathJoinSubstitution([share, 'rviz', 'jointsim.rviz'])],
            parameters=[{'use_sim_time': use_sim_time}],
            condition=IfCondition(rviz),
            output='log',
        ),
    ])
