"""Command-line tools of jointsim_ros (the ``jointsim_*`` console scripts)."""
import logging
import sys


def show_log():
    """Print the ``jointsim_ros`` log (model repairs, the compile notice) on stderr."""
    logger = logging.getLogger('jointsim_ros')
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter('jointsim: %(message)s'))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(logging.INFO)
