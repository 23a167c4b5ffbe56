"""
Robot description layer: URDF/xacro + YAML config -> an immutable RobotModel.

No rclpy here.  The one entry point is :func:`load_model`; the pieces are importable for tools
and tests (``parse_urdf``, ``build_model``, ``load_config``).
"""
from .builder import build_model
from .config import BasePose, config_from_dict, default_yaml, load_config, SimConfig
from .model import (BodyModel, JOINT_TYPES, JointModel, LinkFrame, Mimic, RobotModel,
                    SCALAR_JOINT_TYPES)
from .urdf import parse_urdf, UrdfDescription

__all__ = [
    'BasePose', 'BodyModel', 'build_model', 'config_from_dict', 'default_yaml', 'JOINT_TYPES',
    'JointModel', 'LinkFrame', 'load_config', 'load_model', 'Mimic', 'parse_urdf', 'RobotModel',
    'SCALAR_JOINT_TYPES', 'SimConfig', 'UrdfDescription',
]


def load_model(source, config=None, xacro_args=None):
    """
    Load a robot description and a simulator configuration.

    Args:
        source: path of a ``.urdf`` or ``.xacro`` file, or URDF XML text (starts with '<').
        config: dict, YAML file path, SimConfig, or None for the defaults.
        xacro_args: optional dict of xacro arguments for xacro sources.

    Returns:
        (RobotModel, SimConfig).

    Raises:
        DescriptionError: the robot description cannot be turned into a model.
        ConfigError: the configuration has a bad key or value, or names joints the robot lacks.
    """
    sim_config = load_config(config)
    description = parse_urdf(source, xacro_args=xacro_args)
    return build_model(description, sim_config), sim_config
